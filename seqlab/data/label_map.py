"""Renaming and dropping label types as data is read: ``data.label_map`` and ``seqlab eval --label-map``.

A label map sends each type it names to another type (``SpecificDisease: Disease``), or drops it (``Modifier:
null``, or ``O``): NCBI disease's four mention types become one ``Disease``, WNUT-17's ``person`` becomes
CoNLL's ``PER``. Types it does not name are kept.

Span labels are mapped as spans: a sentence's tags are read into chunks (in any scheme, conlleval's rules),
the chunks' types renamed or dropped, each tag keeping its prefix; where that would join two adjacent entities
whose types map to one type (IOB1 ``I-A I-B`` with ``A`` and ``B`` both mapped to ``X``), the chunks are
written in the file's scheme instead (``I-X B-X``), so entities stay as many as they were. Token labels (POS
tags) are renamed one by one; they cannot be dropped, since every token needs a label.
"""
from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

from seqlab.core.errors import ConfigError
from seqlab.data.schemes import OUTSIDE, from_spans, spans, split_tag

#: What a label map's value means when it drops a type (YAML ``null`` means the same).
DROP = OUTSIDE
#: The suffixes of a label-map file (``seqlab eval --label-map FILE``); anything else is read as pairs.
FILE_SUFFIXES = (".yaml", ".yml", ".json")

LabelMap = dict[str, str | None]
_TAG = re.compile(r"([BIESLU])-(\S+)\Z")  # a prefixed tag, which a label map should name by its type



class Labelling(Protocol):
    """What a label map asks of the labels it maps (:class:`seqlab.data.labelling.Labelling`, which imports this
    module: a protocol here, not an import back)."""

    def relabel(self, tags: Sequence[str], mapping: Mapping[str, str | None], met: set[str]) -> tuple[str, ...]: ...

    def check_label_map(self, mapping: object, source: str) -> LabelMap: ...


def _name_fault(name: object) -> str:
    """Why ``name`` cannot be a type name, or ``""``."""
    if not isinstance(name, str):
        return f"expected a type name (a string), got {type(name).__name__} {name!r}"
    if not name or any(c.isspace() for c in name):
        return f"expected a type name without whitespace, got {name!r}"
    return ""


def check_label_map(mapping: object, source: str = "data.label_map", *, token_labels: bool = False) -> LabelMap:
    """``mapping`` checked as a label map (old type → new type, or None / ``O`` to drop it), the drops as None;
    a one-line :class:`ConfigError` naming ``source`` and the entry otherwise. ``token_labels``: the labels are
    plain token labels (POS tags), which can be renamed but not dropped."""
    if not isinstance(mapping, Mapping):
        raise ConfigError(f"{source}: expected a mapping of old type to new type (or null to drop it), got "
                          f"{type(mapping).__name__} {mapping!r}")
    checked: LabelMap = {}
    for old, new in mapping.items():
        fault = _name_fault(old)
        if fault:
            raise ConfigError(f"{source}: a key: {fault}")
        tag = _TAG.match(old) if not token_labels else None
        if tag:
            raise ConfigError(f"{source}: {old!r} is a tag, but a label map names types: write "
                              f"{tag.group(2)}={new or ''} (its B-, I-, ... tags all follow)")
        if new is None and token_labels:
            raise ConfigError(f"{source}.{old}: token labels (data.tag_scheme token) cannot be dropped, every "
                              "token needs one; map it to another label")
        if new is None or (new == DROP and not token_labels):
            checked[old] = None
            continue
        fault = _name_fault(new)
        if fault:
            raise ConfigError(f"{source}.{old}: {fault} (or null to drop the type)")
        checked[old] = new
    return checked


def parse_label_map(text: str, *, source: str = "--label-map") -> LabelMap:
    """A label map from the command line: ``old=new,old2=new2`` (``old=`` or ``old=O`` drops a type), or the
    path of a YAML or JSON file holding one mapping."""
    from seqlab.core.strict import read_mapping

    if Path(text).suffix.lower() in FILE_SUFFIXES or Path(text).is_file():
        found = read_mapping(text, what="label map file")
        if isinstance(found, Mapping) and not found:
            raise ConfigError(f"{source} {text}: the label map file holds no entries (expected old: new lines)")
        return check_label_map(found, f"{source} {text}")
    mapping: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        old, sep, new = item.partition("=")
        if not sep or not old.strip():
            raise ConfigError(f"{source}: expected old=new pairs separated by commas (old= drops a type), or a "
                              f".yaml/.json file; got {item!r}")
        if old.strip() in mapping:
            raise ConfigError(f"{source}: {old.strip()!r} is mapped twice")
        mapping[old.strip()] = new.strip() or None
    if not mapping:
        raise ConfigError(f"{source}: expected old=new pairs, got {text!r}")
    return check_label_map(mapping, source)


def describe(mapping: Mapping[str, str | None]) -> str:
    """A label map as ``--label-map`` takes it: ``old=new,old2=`` (dropped types end in ``=``)."""
    return ",".join(f"{old}={new or ''}" for old, new in mapping.items())


def relabel_spans(tags: Sequence[str], mapping: Mapping[str, str | None], met: set[str],
                  scheme: str) -> tuple[str, ...]:
    """Span ``tags`` (in ``scheme``, already checked) with the map applied to their chunks, in the same scheme;
    the mapped types met are added to ``met``."""
    chunks = spans(tags)
    hit = {kind for kind, _, _ in chunks if kind in mapping}
    if not hit:
        return tuple(tags)
    met |= hit
    kept = [(mapping.get(kind, kind), a, b) for kind, a, b in chunks]
    kept = [(kind, a, b) for kind, a, b in kept if kind is not None]
    out = [OUTSIDE] * len(tags)
    for kind, a, b in kept:  # each tag keeps its prefix, so the file's scheme is kept
        out[a:b] = [f"{split_tag(tag)[0]}-{kind}" for tag in tags[a:b]]
    if spans(out) == kept:
        return tuple(out)
    return tuple(from_spans(kept, len(tags), scheme))  # IOB1 I-A I-B mapped to one type: I-X B-X


class LabelMapper:
    """A label map applied to sentence after sentence of one file, remembering which of its types it met."""

    def __init__(self, mapping: Mapping[str, str | None], labelling: Labelling) -> None:
        self.mapping = dict(mapping)
        self.labelling = labelling
        self.met: set[str] = set()

    def __call__(self, tags: Sequence[str]) -> tuple[str, ...]:
        """``tags`` (in the file's scheme, already checked) with the map applied, in the same scheme."""
        return self.labelling.relabel(tags, self.mapping, self.met)

    def unmet(self) -> list[str]:
        """The map's types that no sentence read so far holds (a misspelt type name, or another data set's)."""
        return sorted(set(self.mapping) - self.met)

    def warn_unmet(self, where: str, *, refuse: bool = False) -> None:
        """Log the types of the map that ``where`` never held (the map did nothing for them); ``refuse``: a
        ConfigError when the map met none of them (it names another data set's types, or tags)."""
        missing = self.unmet()
        if refuse and missing and not self.met:
            raise ConfigError(f"{where}: the label map names no type this file holds ({', '.join(missing)}); "
                              f"nothing would be renamed or dropped")
        if missing:
            logging.getLogger("seqlab").warning("%s: the label map names types this file does not hold: %s",
                                                where, ", ".join(missing))


def mapper(mapping: Mapping[str, str | None] | None, labelling: Labelling) -> LabelMapper | None:
    """A :class:`LabelMapper` for ``mapping`` (None: no map, nothing to do)."""
    return LabelMapper(mapping, labelling) if mapping else None


def merged(base: Mapping[str, str | None] | None, extra: Mapping[str, str | None] | None) -> LabelMap | None:
    """``base`` (a model's ``data.label_map``) with ``extra`` (``--label-map``) on top: an entry of ``extra``
    wins over one of ``base`` for the same type."""
    both = {**(base or {}), **(extra or {})}
    return both or None


def check_data_label_map(mapping: object, labelling: Labelling) -> LabelMap | None:
    """``data.label_map`` checked for ``labelling``'s labels (None or empty: no map); raises ConfigError."""
    if mapping is None:
        return None
    return labelling.check_label_map(mapping, "data.label_map") or None
