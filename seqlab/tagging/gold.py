"""A gold file for a trained tagger: read in any format, its types mapped to the model's, checked to share some.

``seqlab eval`` reads its gold file here: the format detected (a brat folder, span JSONL, a Label Studio export,
HF token JSONL, CoNLL-U, CoNLL columns) or named, the columns fitted (:func:`seqlab.data.dataset.file_layout`),
and the model's own ``data.label_map`` applied with the one given on top (``--label-map``). A span file whose
types share none with the model's would score F1 0.00 with no hint why; it is refused, naming the types on both
sides and the ``--label-map`` that would pair them.
"""
from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from seqlab.core.errors import SeqlabError
from seqlab.data.config import DataConfig
from seqlab.data.dataset import Split, file_layout, read_split
from seqlab.data.label_map import merged
from seqlab.data.labelling import Labelling

log = logging.getLogger("seqlab")


def read_gold(config: DataConfig, path: str | Path, *, columns: Sequence[str] | None = None, fmt: str = "auto",
              label_map: Mapping[str, str | None] | None = None, offsets: str | None = None,
              encoding: str | None = None) -> Split:
    """The labelled file (or brat folder) ``path`` read as split ``eval`` for a model whose data config is
    ``config``: in format ``fmt`` (``auto``: detected), with ``columns`` (CoNLL files), and the types renamed by
    the model's ``data.label_map`` with ``label_map`` on top; ``offsets``: the unit of an offset format's offsets
    (None: the model's ``data.offsets``); ``encoding``: the file's text encoding (None: the model's
    ``data.encoding``; the command line passes UTF-8 unless told)."""
    path = Path(path)
    if not path.exists():
        raise SeqlabError(f"{path}: no such file or folder")
    if encoding is not None:
        config = dataclasses.replace(config, encoding=encoding)
    fitted = file_layout(config, path, columns, fmt)
    both = merged(config.label_map, label_map)
    if both is not None:
        both = config.labelling.check_label_map(both, "--label-map")
    fitted = dataclasses.replace(fitted, offsets=offsets) if offsets is not None else fitted
    return read_split(dataclasses.replace(fitted, label_map=both), "eval", path=path)


def nearest_types(gold: Iterable[str], model: Iterable[str]) -> dict[str, str]:
    """Gold types paired with a model type that one abbreviates (``person`` → ``PER``, ``org`` →
    ``ORGANIZATION``), ignoring case: the pairs worth suggesting."""
    pairs = {}
    for name in sorted(gold):
        found = [m for m in sorted(model) if name.lower().startswith(m.lower()) or m.lower().startswith(name.lower())]
        if found:
            pairs[name] = found[0]
    return pairs


def check_shared_types(split: Split, model_types: Sequence[str], labelling: Labelling) -> None:
    """Refuse a gold split whose span types share none with ``model_types`` (it would score 0 with no hint), in
    one line naming both and a ``--label-map``; log the gold types the model does not predict when some are
    shared. Token labels have no types to check (:meth:`~seqlab.data.labelling.Labelling.gold_types`)."""
    gold = labelling.gold_types(split.file_tags)
    if not gold:
        return
    unknown = sorted(gold - set(model_types))
    if len(unknown) < len(gold):
        if unknown:
            log.warning("%s: gold types the model never predicts (their mentions count as missed): %s; pair them "
                        "with the model's %s by --label-map old=new", split.path, ", ".join(unknown),
                        ", ".join(sorted(model_types)))
        return
    pairs = nearest_types(gold, model_types) or {unknown[0]: sorted(model_types)[0]}
    example = ",".join(f"{old}={new}" for old, new in pairs.items())
    raise SeqlabError(f"{split.path}: its types {unknown} share none with the model's {sorted(model_types)}, so "
                      f"every score would be 0; map them with --label-map (e.g. --label-map {example}, old= drops "
                      "a type; or a YAML/JSON file)")
