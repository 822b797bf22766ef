"""Typed corpora for LS vectors (Ghaddar & Langlais 2018, section 3): mentions, types, annotated sentences.

A typed corpus is a CoNLL-style column file: the token in the first column, the entity tag in
the last one (or ``column``); a blank line between sentences; ``-DOCSTART-`` lines are skipped.
Tags are ``O`` or ``X-TYPE`` with ``X`` one of ``B I E S L U`` (IOB1, IOB2/BIO, BIOES and BILOU
all read, tolerantly: an ``I-`` after ``O`` or after another type starts a mention, as in IOB1
and as the conversion artefacts of the staged Few-NERD files need).

Types keep their hierarchy, as WiFiNE's two levels do: with the separator ``_`` the Few-NERD
label ``person_politician`` gives the type tokens ``/person`` and ``/person/politician``.
Type tokens are lower-cased; a ``/`` inside a level becomes ``-`` (``person_artist/author`` →
``/person/artist-author``), so a token's levels can be read back from it.

:func:`annotate` makes the paper's annotated version of a sentence: each mention replaced by its
type tokens; :func:`training_line` concatenates a sentence with it, lower-cased, for fastText.
"""
from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from features.base import FeatureFileError
from features.corpus import read_lines

PathLike = Union[str, "os.PathLike[str]"]

DOCSTART = "-DOCSTART-"
#: Tag prefixes that continue a mention of the same type; any other prefix (``B``, ``S``, ``U``) starts one.
INSIDE = frozenset("IEL")
_TAG = re.compile(r"^(?P<prefix>[BIESLU])-(?P<label>\S+)$")
#: Separators tried, in order, by ``hierarchy_sep="auto"``: the first that every label contains.
AUTO_SEPARATORS = ("_", "-")


@dataclass(frozen=True)
class Mention:
    """Tokens ``start`` to ``end`` (exclusive) of a sentence, with the label written in the file."""

    start: int
    end: int
    label: str


@dataclass(frozen=True)
class TypedSentence:
    """A sentence of a typed corpus and its mentions; ``line`` is where its first token is."""

    tokens: tuple[str, ...]
    mentions: tuple[Mention, ...]
    line: int = 0


def read_typed(path: PathLike, *, column: int = -1) -> Iterator[TypedSentence]:
    """Stream the sentences of a typed column file (see the module doc).

    A line with fewer than two columns, a different number of columns than the file's first
    token line, or a tag that is not ``O`` / ``X-TYPE`` raises :class:`FeatureFileError`
    naming the file and line; a file with no sentence raises ``ValueError``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"typed corpus file not found: {path}")
    return _read_typed(path, column)


def _read_typed(path: Path, column: int) -> Iterator[TypedSentence]:
    width: tuple[int, int] | None = None  # (columns, line where that was seen)
    tokens: list[str] = []
    tags: list[str] = []
    first = count = 0
    for number, line in enumerate(read_lines(path), start=1):
        fields = line.split()
        if not fields or fields[0] == DOCSTART:
            if tokens:
                count += 1
                yield TypedSentence(tuple(tokens), _mentions(tags), first)
                tokens, tags = [], []
            continue
        if len(fields) < 2:
            raise FeatureFileError(str(path), number, f"expected a token and a tag separated by whitespace, "
                                                      f"but got {line[:80]!r}")
        if width is None:
            width = (len(fields), number)
        elif len(fields) != width[0]:
            raise FeatureFileError(str(path), number, f"expected {width[0]} columns (as on line {width[1]}), "
                                                      f"but got {len(fields)} in {line[:80]!r}")
        try:
            tag = fields[column]
        except IndexError:
            raise FeatureFileError(str(path), number, f"no column {column}: the line has {len(fields)}") from None
        if tag != "O" and not _TAG.match(tag):
            raise FeatureFileError(str(path), number, f"expected a tag O, B-TYPE or I-TYPE (or E-/S-/L-/U-), "
                                                      f"but got {tag!r}")
        if not tokens:
            first = number
        tokens.append(fields[0])
        tags.append(tag)
    if tokens:
        count += 1
        yield TypedSentence(tuple(tokens), _mentions(tags), first)
    if count == 0:
        raise ValueError(f"{path}: the typed corpus holds no sentences")


def _mentions(tags: Sequence[str]) -> tuple[Mention, ...]:
    """Spans from tags; ``I-``/``E-``/``L-`` continue a mention of the same type, else start one."""
    spans: list[Mention] = []
    start, label = -1, ""
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, _, kind = tag.partition("-")
        continues = prefix in INSIDE and kind == label and start >= 0
        if label and not continues:
            spans.append(Mention(start, i, label))
            start, label = -1, ""
        if tag != "O" and not continues:
            start, label = i, kind
        if prefix in "ELSU" and label:  # the mention ends on this token
            spans.append(Mention(start, i + 1, label))
            start, label = -1, ""
    return tuple(spans)


# ---------------------------------------------------------------- the type hierarchy


def detect_separator(labels: Iterable[str], hierarchy_sep: str | None = "auto") -> str | None:
    """The level separator to use: ``hierarchy_sep`` as given, or with ``"auto"`` the first of
    :data:`AUTO_SEPARATORS` that every label contains (None: flat types, e.g. OntoNotes' ``WORK_OF_ART``
    next to ``PERSON``)."""
    if hierarchy_sep != "auto":
        return hierarchy_sep or None
    labels = list(labels)
    if not labels:
        return None
    return next((sep for sep in AUTO_SEPARATORS if all(sep in label for label in labels)), None)


def type_tokens(label: str, sep: str | None) -> tuple[str, ...]:
    """The type tokens of a label, coarsest first: ``person_politician`` → ``/person``, ``/person/politician``."""
    levels = label.split(sep, 1) if sep else [label]
    levels = [level.lower().replace("/", "-") for level in levels]
    if any(not level for level in levels):
        raise ValueError(f"type {label!r} has an empty level when split on {sep!r}")
    return tuple("/" + "/".join(levels[: k + 1]) for k in range(len(levels)))


def annotate(tokens: Sequence[str], mentions: Sequence[Mention], types_of: Callable[[str], Sequence[str]]) -> list[str]:
    """The annotated version of a sentence: every mention replaced by its type tokens (``types_of(label)``)."""
    out: list[str] = []
    position = 0
    for mention in sorted(mentions, key=lambda m: m.start):
        if mention.start < position or mention.end > len(tokens) or mention.start >= mention.end:
            raise ValueError(f"mention {mention} overlaps another or lies outside the {len(tokens)} tokens")
        out.extend(tokens[position:mention.start])
        out.extend(types_of(mention.label))
        position = mention.end
    out.extend(tokens[position:])
    return out


def training_line(tokens: Sequence[str], mentions: Sequence[Mention], types_of: Callable[[str], Sequence[str]]) -> str:
    """A sentence concatenated with its annotated version, lower-cased: one fastText training line."""
    words = [token.lower() for token in tokens]
    return " ".join(words + annotate(words, mentions, types_of))


def sha256_file(path: PathLike) -> str:
    """The hex SHA-256 of a file's bytes (how LS manifests identify their sources)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
