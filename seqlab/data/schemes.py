"""Tagging schemes (IOB1, IOB2, BIOES, BILOU): spans, conversion and allowed transitions.

Schemes are data: each is a table of the prefixes it uses for a chunk's first,
inner, last and only token. Reading tags into spans follows the CoNLL
``conlleval`` chunk rules (a chunk starts at ``B``/``S``/``U``, or at an inner
tag whose type differs from the previous token's chunk), so improper input such
as ``O I-PER`` is read the way the official scorer reads it. Ratinov & Roth
(2009) and Ghaddar & Langlais (2018) tag with BILOU.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from seqlab.core.errors import SeqlabError

OUTSIDE = "O"
#: Chunk prefixes of every scheme: begin, inside, end, single (BIOES) and last, unit (BILOU).
PREFIXES = ("B", "I", "E", "S", "L", "U")


@dataclass(frozen=True)
class Scheme:
    """Prefixes a scheme writes for a chunk's begin, inside, last and single (unit) token."""

    name: str
    begin: str
    inside: str
    last: str
    unit: str
    begin_only_after_same_type: bool = False  # IOB1: B- marks a chunk that follows one of the same type

    @property
    def prefixes(self) -> frozenset[str]:
        return frozenset({self.begin, self.inside, self.last, self.unit})


SCHEMES: dict[str, Scheme] = {
    "iob1": Scheme("iob1", begin="I", inside="I", last="I", unit="I", begin_only_after_same_type=True),
    "iob2": Scheme("iob2", begin="B", inside="I", last="I", unit="B"),
    "bioes": Scheme("bioes", begin="B", inside="I", last="E", unit="S"),
    "bilou": Scheme("bilou", begin="B", inside="I", last="L", unit="U"),
}

Chunk = tuple[str, int, int]  # a span of tokens: (type, start, end) with end exclusive

_STARTS = {"B", "S", "U"}
_ENDS = {"E", "S", "L", "U"}


def get_scheme(name: str) -> Scheme:
    """Look a scheme up by name, with a clear error listing the known ones."""
    try:
        return SCHEMES[name.lower()]
    except KeyError:
        raise SeqlabError(f"unknown tag scheme {name!r}; expected one of {sorted(SCHEMES)}") from None


@functools.lru_cache(maxsize=4096)  # called once per token when reading spans; a tag set is small
def split_tag(tag: str, *, untyped: bool = False) -> tuple[str, str]:
    """``'B-PER'`` → ``('B', 'PER')``; ``'O'`` → ``('O', '')``; a malformed tag raises SeqlabError.

    The one tag parser of seqlab. With ``untyped``, a chunk tag without a type (``'B'``,
    ``'B-'``) is read as ``('B', '')``, as conlleval reads it; without, it is malformed.
    """
    if tag == OUTSIDE:
        return OUTSIDE, ""
    prefix, sep, kind = tag.partition("-")
    if prefix not in PREFIXES or not (untyped or (sep and kind)):
        raise SeqlabError(f"malformed tag {tag!r}: expected 'O' or PREFIX-TYPE with PREFIX in {', '.join(PREFIXES)}")
    return prefix, kind


def spans(tags: Sequence[str]) -> list[Chunk]:
    """Read chunks from a tag sequence in any scheme, with conlleval's rules."""
    result: list[Chunk] = []
    start = -1
    current = ""
    prev_prefix = OUTSIDE
    for i, tag in enumerate(tags):
        prefix, kind = split_tag(tag)
        starts = prefix in _STARTS or (
            prefix != OUTSIDE and (start < 0 or kind != current or prev_prefix in _ENDS)
        )
        if start >= 0 and (prefix == OUTSIDE or starts):
            result.append((current, start, i))
            start = -1
        if starts:
            start, current = i, kind
        if start >= 0 and prefix in _ENDS:
            result.append((current, start, i + 1))
            start = -1
        prev_prefix = prefix
    if start >= 0:
        result.append((current, start, len(tags)))
    return result


class SpanReader:
    """:func:`spans` for whole batches of label ids at once (numpy, no loop over tokens).

    Built once per label set. Under :func:`spans`'s rules a chunk is open after token ``i - 1``
    exactly when that token is inside a chunk and has no end prefix, and the open chunk's type
    is that token's type; so token ``i`` starts a chunk when it is not ``O`` and either has a
    start prefix, or the previous token is ``O``, ends a chunk, has another type or does not
    exist. A chunk ends at token ``i`` when ``i`` is inside a chunk and has an end prefix, or
    the next token is ``O``, starts a chunk or does not exist. Chunks do not nest, so the k-th
    start in reading order belongs with the k-th end.
    """

    def __init__(self, labels: Sequence[str]) -> None:
        parts = [split_tag(label) for label in labels]
        self.types = sorted({kind for prefix, kind in parts if prefix != OUTSIDE})
        code = {kind: i for i, kind in enumerate(self.types)}
        self.kind = np.array([code.get(kind, -1) for _, kind in parts], dtype=np.int64)  # shape: (K,), -1 for O
        self.outside = np.array([prefix == OUTSIDE for prefix, _ in parts])  # shape: (K,)
        self.start = np.array([prefix in _STARTS for prefix, _ in parts])  # shape: (K,)
        self.end = np.array([prefix in _ENDS for prefix, _ in parts])  # shape: (K,)

    def __call__(self, ids: np.ndarray, lengths: np.ndarray) -> list[list[Chunk]]:
        """The chunks of each row of label ``ids`` (B, T), of which the first ``lengths[b]`` are real."""
        batch, width = ids.shape
        real = np.arange(width)[None, :] < lengths[:, None]  # shape: (B, T)
        inside = real & ~self.outside[ids]  # shape: (B, T)
        kind, ends_here = self.kind[ids], self.end[ids]  # shapes: (B, T)
        before = np.zeros((batch, 1), dtype=bool)
        open_before = np.concatenate([before, (inside & ~ends_here)[:, :-1]], axis=1)  # a chunk open after i - 1
        same_kind = np.concatenate([before, kind[:, 1:] == kind[:, :-1]], axis=1)  # shape: (B, T)
        starts = inside & (self.start[ids] | ~open_before | ~same_kind)  # shape: (B, T)
        after = np.zeros((batch, 1), dtype=bool)
        next_inside = np.concatenate([inside[:, 1:], after], axis=1)
        next_starts = np.concatenate([starts[:, 1:], after], axis=1)
        ends = inside & (ends_here | ~next_inside | next_starts)  # shape: (B, T)
        rows, first = np.nonzero(starts)  # row-major: sentence by sentence, left to right
        _, last = np.nonzero(ends)
        names = [self.types[k] for k in kind[rows, first].tolist()]
        found = list(zip(names, first.tolist(), (last + 1).tolist()))
        cuts = np.cumsum(np.bincount(rows, minlength=batch))[:-1].tolist()  # where each row's chunks begin
        return [found[a:b] for a, b in zip([0, *cuts], [*cuts, len(found)])]


def from_spans(chunks: Iterable[Chunk], length: int, scheme: str | Scheme) -> list[str]:
    """Write chunks as a tag sequence of ``length`` tokens in ``scheme``."""
    sch = get_scheme(scheme) if isinstance(scheme, str) else scheme
    tags = [OUTSIDE] * length
    previous_end, previous_kind = -1, ""
    for kind, start, end in sorted(chunks, key=lambda s: s[1]):
        if not 0 <= start < end <= length:
            raise SeqlabError(f"span {(kind, start, end)} does not fit in {length} tokens")
        if end - start == 1:
            tags[start] = f"{sch.unit}-{kind}"
        else:
            tags[start] = f"{sch.begin}-{kind}"
            for i in range(start + 1, end - 1):
                tags[i] = f"{sch.inside}-{kind}"
            tags[end - 1] = f"{sch.last}-{kind}"
        if sch.begin_only_after_same_type and previous_end == start and previous_kind == kind:
            tags[start] = f"B-{kind}"
        previous_end, previous_kind = end, kind
    return tags


def convert(tags: Sequence[str], target: str, source: str | None = None) -> list[str]:
    """Convert a tag sequence to ``target``; any input scheme is read with conlleval's rules."""
    del source  # every scheme is read the same way; kept for call-site readability
    return from_spans(spans(tags), len(tags), target)


def labels_for(types: Iterable[str], scheme: str) -> list[str]:
    """All labels of a scheme over entity types, ``O`` first, in a stable order."""
    sch = get_scheme(scheme)
    prefixes = sorted(sch.prefixes | ({"B"} if sch.begin_only_after_same_type else set()), key="BIELSU".index)
    return [OUTSIDE] + [f"{p}-{t}" for t in sorted(set(types)) for p in prefixes]


def allowed_transitions(labels: Sequence[str], scheme: str) -> tuple[list[list[bool]], list[bool], list[bool]]:
    """Which label transitions, first labels and last labels a well-formed sequence may have.

    Returns ``(allowed[i][j], start[j], end[i])`` for constraining a CRF.
    """
    sch = get_scheme(scheme)
    parsed = [split_tag(label) for label in labels]
    for label, (prefix, _) in zip(labels, parsed):
        if prefix != OUTSIDE and prefix not in sch.prefixes | ({"B"} if sch.begin_only_after_same_type else set()):
            raise SeqlabError(f"label {label!r} is not a {sch.name.upper()} label")

    def opens(prefix: str) -> bool:  # may this tag start a chunk with nothing open before it?
        if sch.begin_only_after_same_type:
            return prefix == "I"
        return prefix in (sch.begin, sch.unit)

    def closes(prefix: str) -> bool:  # does a chunk necessarily end at this tag?
        return prefix in (sch.last, sch.unit) and sch.last != sch.inside

    def follows(a: tuple[str, str], b: tuple[str, str]) -> bool:
        (pa, ta), (pb, tb) = a, b
        if pb == OUTSIDE:
            return pa == OUTSIDE or closes(pa) or sch.last == sch.inside
        if sch.begin_only_after_same_type:  # IOB1
            return pb == "I" or (pa != OUTSIDE and ta == tb)
        inside_open = pa != OUTSIDE and not closes(pa)
        if pb in (sch.begin, sch.unit) and sch.begin != sch.inside:
            return not inside_open or sch.last == sch.inside
        return inside_open and ta == tb  # an inner or last tag continues its own chunk

    allowed = [[follows(a, b) for b in parsed] for a in parsed]
    start = [p == OUTSIDE or opens(p) for p, _ in parsed]
    end = [p == OUTSIDE or closes(p) or sch.last == sch.inside for p, _ in parsed]
    return allowed, start, end


def detect_scheme(sentences: Iterable[Sequence[str]]) -> str | None:
    """The tag scheme a labelled file is written in, from its tags; None when they cannot tell.

    ``L-``/``U-`` mean BILOU, ``E-``/``S-`` BIOES. Between IOB1 and IOB2: an entity opened by ``I-`` (after ``O``,
    another type or the sentence start) is IOB1; a ``B-`` there is IOB2 (IOB1 uses ``B-`` only between two
    entities of one type). A file showing both is refused.
    """
    opened_by_i = opened_by_b = False
    prefixes: set[str] = set()
    for tags in sentences:
        previous = ""
        for tag in tags:
            prefix, kind = split_tag(tag)
            prefixes.add(prefix)
            if kind and previous != kind:
                opened_by_i |= prefix == "I"
                opened_by_b |= prefix == "B"
            previous = kind
    if prefixes & {"L", "U"}:
        return "bilou"
    if prefixes & {"E", "S"}:
        return "bioes"
    if opened_by_i and opened_by_b:
        raise SeqlabError("the tags mix IOB1 (entities opened by I-) and IOB2 (entities opened by B-)")
    return "iob2" if opened_by_b else "iob1" if opened_by_i else None
