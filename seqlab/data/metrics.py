"""Span-level metrics: a drop-in replacement for the CoNLL ``conlleval`` script.

Chunks are extracted as seqeval's ``get_entities`` does in its default,
conlleval-compatible mode (:func:`chunks`, the same rules without importing seqeval's
metrics package, which pulls in scikit-learn: a second of start-up for every command) (Tjong Kim Sang and Buchholz 2000, CoNLL-2000 shared
task; the script is ``conlleval.pl``, version 2004-01-26). For tags made of
``B-``, ``I-`` and ``O`` (IOB1 and IOB2 alike) and of ``I-``, ``E-`` and ``O``
(IOE1, IOE2), counts and the printed report are identical to the script's.

Two deliberate differences from the script:

* ``E-``/``S-`` tags are read as BIOES (and BILOU's ``L-``/``U-`` as ``E-``/``S-``),
  so ``B-X E-X B-X E-X`` is two chunks. The 2004 script knows only IOE's ``E``
  and reads it as one chunk.
* Tags must be ``O`` or ``PREFIX[-TYPE]`` with a prefix from :data:`CHUNK_PREFIXES`;
  the script accepts any string and silently scores nonsense for, say, ``PER``.
  Likewise a -DOCSTART- line must be tagged ``O O``.
* Files are read leniently: columns split on runs of spaces and tabs unless a
  delimiter is given (the script: each single space), and ``\r\n`` line ends
  are accepted (the script keeps the ``\r`` in the predicted tag).

The script's quirks that do change its output are reproduced, each as a named
constant below, so reports stay comparable with published numbers.
"""
from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from seqlab.data.conll import BOUNDARY, DOCSTART, split_fields
from seqlab.data.schemes import PREFIXES, split_tag
from seqlab.core.errors import DataFormatError, SeqlabError

OUTSIDE = "O"
CHUNK_PREFIXES = PREFIXES
# seqeval knows BIOES only; BILOU's last (L) and unit (U) tags mean the same as E and S.
SEQEVAL_PREFIX = {"B": "B", "I": "I", "E": "E", "S": "S", "L": "E", "U": "S"}

# conlleval has no notion of documents: a -DOCSTART- line is scored as one
# token tagged O in both columns (counted in "processed N tokens" and in the
# accuracy), which also closes any open chunk.
# conlleval ends a sentence at a line whose first field is -X- (BOUNDARY) and does not count it.
# Perl reads the string "0" as false, so conlleval scores B-0 as an untyped B.
FALSY_TYPE = "0"
# conlleval lists types by sorting the gold and the found names together and
# dropping a name equal to the one before it, except when that one is false in
# Perl (""), so the untyped chunk type is listed twice when both columns have it.
UNTYPED = ""

_PERCENT = "%6.2f%%"


def _precision(correct: int, found: int) -> float:
    return 100 * correct / found if found else 0.0


def _f1(precision: float, recall: float) -> float:
    total = precision + recall
    return 2 * precision * recall / total if total > 0 else 0.0


class TypeCounts(NamedTuple):
    """Chunk counts for one type: in the gold column, found in the predicted one, and both."""

    gold: int
    found: int
    correct: int

    @property
    def precision(self) -> float:
        return _precision(self.correct, self.found)

    @property
    def recall(self) -> float:
        return _precision(self.correct, self.gold)

    @property
    def f1(self) -> float:
        return _f1(self.precision, self.recall)


@dataclass(frozen=True)
class SpanReport:
    """conlleval's counts; the scores are percentages, as conlleval prints them."""

    tokens: int
    phrases_gold: int
    phrases_found: int
    correct: int
    token_correct: int
    per_type: Mapping[str, TypeCounts]

    @property
    def precision(self) -> float:
        return _precision(self.correct, self.phrases_found)

    @property
    def recall(self) -> float:
        return _precision(self.correct, self.phrases_gold)

    @property
    def f1(self) -> float:
        return _f1(self.precision, self.recall)

    @property
    def accuracy(self) -> float:
        """Tokens whose predicted tag (prefix and type) equals the gold tag, O included."""
        return _precision(self.token_correct, self.tokens)


def _conlleval_parts(tag: str) -> tuple[str, str] | None:
    """(prefix, type) as conlleval reads a tag (``B`` and ``B-0`` are untyped), or None if it is no chunk tag.

    Parsed by :func:`seqlab.data.schemes.split_tag`; a malformed tag is None here, so the
    callers can report it with the line it is on.
    """
    try:
        prefix, type_ = split_tag(tag, untyped=True)
    except SeqlabError:
        return None
    return prefix, UNTYPED if type_ == FALSY_TYPE else type_


def _bad_tag_message(tag: str) -> str:
    return (
        f"expected O or a tag like B-PER ({'/'.join(CHUNK_PREFIXES)} before the first '-'), "
        f"got {tag!r}"
    )


# conlleval's endOfChunk / startOfChunk (as seqeval's end_of_chunk / start_of_chunk): pairs of
# (previous prefix, prefix) that close the open chunk, and that open a new one, whatever the types.
_ENDS = {("B", "B"), ("B", "S"), ("B", "O"), ("I", "B"), ("I", "S"), ("I", "O")}
_STARTS = {("E", "E"), ("E", "I"), ("S", "E"), ("S", "I"), ("O", "E"), ("O", "I")}


def chunks(sentences: Sequence[Sequence[str]]) -> list[tuple[str, int, int]]:
    """(type, first, last) of every chunk, positions counted over the sentences joined with an ``O`` after
    each: seqeval's ``get_entities`` in its default mode (each tag read as its first character and the
    text after its first '-', ``_`` for none), which follows conlleval's chunk rules."""
    joined = [tag for sentence in sentences for tag in (*sentence, "O")]
    found: list[tuple[str, int, int]] = []
    prev_tag, prev_type, begin = "O", "", 0
    for position, tag_text in enumerate([*joined, "O"]):
        tag, type_ = tag_text[0], tag_text[1:].split("-", maxsplit=1)[-1] or "_"
        typed = prev_type != type_
        if prev_tag in ("E", "S") or (prev_tag, tag) in _ENDS or (prev_tag not in ("O", ".") and typed):
            found.append((prev_type, begin, position - 1))
        if tag in ("B", "S") or (prev_tag, tag) in _STARTS or (tag not in ("O", ".") and typed):
            begin = position
        prev_tag, prev_type = tag, type_
    return found


class _TagCodec:
    """Rewrites tags for seqeval, with each chunk type replaced by a number.

    Numbering the types keeps seqeval's own parsing (first character, then the
    text after the first '-', with '_' standing in for none) from merging an
    untyped tag with a type named '_'.
    """

    def __init__(self) -> None:
        self.types: list[str] = []
        self._type_ids: dict[str, int] = {}
        self._tags: dict[str, tuple[str, tuple[str, str]]] = {OUTSIDE: (OUTSIDE, (OUTSIDE, UNTYPED))}

    def encode(self, tag: str) -> tuple[str, tuple[str, str]]:
        """(tag for seqeval, (prefix, type) that conlleval compares for accuracy)."""
        known = self._tags.get(tag)
        if known is not None:
            return known
        parts = _conlleval_parts(tag)
        if parts is None:
            raise ValueError(_bad_tag_message(tag))
        prefix, type_ = parts
        if type_ not in self._type_ids:
            self._type_ids[type_] = len(self.types)
            self.types.append(type_)
        encoded = (f"{SEQEVAL_PREFIX[prefix]}-{self._type_ids[type_]}", parts)
        self._tags[tag] = encoded
        return encoded


def check_same_shape(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> None:
    if len(gold) != len(pred):
        raise ValueError(
            f"gold and pred must have the same number of sentences, but got {len(gold)} and {len(pred)}"
        )
    for i, (gold_sentence, pred_sentence) in enumerate(zip(gold, pred)):
        if len(gold_sentence) != len(pred_sentence):
            raise ValueError(
                f"sentence {i}: gold and pred must have the same length, "
                f"but got {len(gold_sentence)} and {len(pred_sentence)}"
            )


def score(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> SpanReport:
    """Score predicted tags against gold tags, sentence by sentence, as conlleval does.

    A chunk never crosses a sentence boundary. Raises ValueError on differing
    shapes or on a tag that is not O or PREFIX[-TYPE].
    """
    check_same_shape(gold, pred)
    codec = _TagCodec()
    gold_tags: list[list[str]] = []
    pred_tags: list[list[str]] = []
    token_correct = 0
    for i, (gold_sentence, pred_sentence) in enumerate(zip(gold, pred)):
        try:
            gold_encoded = [codec.encode(tag) for tag in gold_sentence]
            pred_encoded = [codec.encode(tag) for tag in pred_sentence]
        except ValueError as error:
            raise ValueError(f"sentence {i}: {error}") from None
        gold_tags.append([tag for tag, _ in gold_encoded])
        pred_tags.append([tag for tag, _ in pred_encoded])
        token_correct += sum(g == p for (_, g), (_, p) in zip(gold_encoded, pred_encoded))

    # chunks() joins the sentences with an O between them, which closes chunks there.
    gold_chunks = set(chunks(gold_tags))
    found_chunks = set(chunks(pred_tags))
    gold_counts = Counter(type_id for type_id, _, _ in gold_chunks)
    found_counts = Counter(type_id for type_id, _, _ in found_chunks)
    correct_counts = Counter(type_id for type_id, _, _ in gold_chunks & found_chunks)
    per_type = {
        codec.types[int(type_id)]: TypeCounts(
            gold_counts[type_id], found_counts[type_id], correct_counts[type_id]
        )
        for type_id in gold_counts.keys() | found_counts.keys()
    }
    return SpanReport(
        tokens=sum(len(sentence) for sentence in gold),
        phrases_gold=len(gold_chunks),
        phrases_found=len(found_chunks),
        correct=sum(correct_counts.values()),
        token_correct=token_correct,
        per_type=dict(sorted(per_type.items())),
    )


def _listed_types(per_type: Mapping[str, TypeCounts]) -> list[str]:
    """The type names conlleval prints, in its order (see UNTYPED)."""
    names = sorted(
        [name for name, counts in per_type.items() if counts.gold]
        + [name for name, counts in per_type.items() if counts.found]
    )
    listed: list[str] = []
    for name in names:
        if not listed or listed[-1] == UNTYPED or listed[-1] != name:
            listed.append(name)
    return listed


def _right_align(name: str, width: int) -> str:
    # Perl counts bytes, not characters, when it pads "%17s".
    return " " * max(0, width - len(name.encode("utf-8"))) + name


def format_conlleval(report: SpanReport) -> str:
    """The text conlleval prints for these counts, byte for byte."""
    lines = [
        f"processed {report.tokens} tokens with {report.phrases_gold} phrases; "
        f"found: {report.phrases_found} phrases; correct: {report.correct}."
    ]
    if report.tokens > 0:
        lines.append(
            f"accuracy: {_PERCENT}; precision: {_PERCENT}; recall: {_PERCENT}; FB1: %6.2f"
            % (report.accuracy, report.precision, report.recall, report.f1)
        )
    for name in _listed_types(report.per_type):
        counts = report.per_type[name]
        lines.append(
            f"{_right_align(name, 17)}: precision: {_PERCENT}; recall: {_PERCENT}; FB1: %6.2f  %d"
            % (counts.precision, counts.recall, counts.f1, counts.found)
        )
    return "\n".join(lines) + "\n"


def report_to_dict(report: SpanReport) -> dict:
    """The report as JSON-ready data (for metrics.json); scores in percent."""
    return {
        "tokens": report.tokens,
        "phrases_gold": report.phrases_gold,
        "phrases_found": report.phrases_found,
        "correct": report.correct,
        "token_correct": report.token_correct,
        "accuracy": report.accuracy,
        "precision": report.precision,
        "recall": report.recall,
        "f1": report.f1,
        "per_type": {
            name: {
                "gold": counts.gold,
                "found": counts.found,
                "correct": counts.correct,
                "precision": counts.precision,
                "recall": counts.recall,
                "f1": counts.f1,
            }
            for name, counts in report.per_type.items()
        },
    }


class PredictionFile(NamedTuple):
    """Gold and predicted tags of a prediction file, one list per sentence.

    ``docstarts`` counts the -DOCSTART- lines, which are left out of the
    sentences but which conlleval scores as tokens (see DOCSTART).
    """

    gold: list[list[str]]
    pred: list[list[str]]
    docstarts: int


def _lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) for each line, decoded as UTF-8."""
    for number, raw in enumerate(Path(path).read_bytes().split(b"\n"), start=1):
        try:
            yield number, raw.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError as error:
            raise DataFormatError(
                str(path), number, f"expected UTF-8 text, but byte {error.start} is not ({error.reason})"
            ) from None


def _fields(line: str, delimiter: str | None) -> list[str]:
    if delimiter is None:  # as seqlab reads CoNLL files: a TAB-separated line keeps a whitespace-only token
        return split_fields(line)
    fields = line.split(delimiter)
    while fields and not fields[-1]:  # like Perl's split, drop trailing empty fields
        fields.pop()
    return fields


def _check_columns(path: str, number: int, fields: list[str], first: tuple[int, int]) -> None:
    if len(fields) < 2:
        raise DataFormatError(
            path, number, f"expected at least 2 columns (gold tag, predicted tag), got 1: {fields[0]!r}"
        )
    if len(fields) != first[1]:
        raise DataFormatError(
            path, number, f"expected {first[1]} columns like line {first[0]}, got {len(fields)}"
        )


def _check_tags(path: str, number: int, fields: list[str], valid: set[str]) -> None:
    """Check the gold and predicted tags, skipping those already in ``valid`` and adding the rest."""
    for column, tag in (("gold", fields[-2]), ("predicted", fields[-1])):
        if tag in valid:
            continue
        if _conlleval_parts(tag) is None:
            raise DataFormatError(path, number, f"{column} tag: {_bad_tag_message(tag)}")
        valid.add(tag)


def read_prediction_file(path: str | os.PathLike[str], *, delimiter: str | None = None) -> PredictionFile:
    """Read a ``token ... gold pred`` file: the last two columns are the gold and predicted tags.

    Columns are split on runs of spaces and tabs, or on exactly ``delimiter``.
    Blank lines (and, as in conlleval, lines starting with -X-) end a sentence;
    so do -DOCSTART- lines, which are counted in ``docstarts``. A first column
    is needed for either to be recognised: in a two-column file it is a tag.
    Raises DataFormatError naming the line for a line of fewer than two columns,
    a column count unlike the first line's, a bad tag, or bytes that are not UTF-8.
    """
    gold: list[list[str]] = []
    pred: list[list[str]] = []
    docstarts = 0
    valid_tags: set[str] = set()
    first: tuple[int, int] | None = None  # (line number, column count) of the first non-blank line
    new_sentence = True
    for number, line in _lines(path):
        fields = _fields(line, delimiter)
        if fields:
            first = first or (number, len(fields))
            _check_columns(str(path), number, fields, first)
        if not fields or fields[0] == BOUNDARY:
            new_sentence = True
        elif fields[0] == DOCSTART and len(fields) > 2:
            if fields[-2:] != [OUTSIDE, OUTSIDE]:
                got = " ".join(fields[-2:])
                raise DataFormatError(str(path), number, f"expected {DOCSTART} tagged O O, got {got}")
            docstarts += 1
            new_sentence = True
        else:
            _check_tags(str(path), number, fields, valid_tags)
            if new_sentence:
                gold.append([])
                pred.append([])
                new_sentence = False
            gold[-1].append(fields[-2])
            pred[-1].append(fields[-1])
    return PredictionFile(gold, pred, docstarts)


def score_prediction_file(path: str | os.PathLike[str], *, delimiter: str | None = None) -> SpanReport:
    """Score a prediction file with conlleval's counts, -DOCSTART- lines included."""
    gold, pred, docstarts = read_prediction_file(path, delimiter=delimiter)
    report = score(gold, pred)
    return dataclasses.replace(
        report, tokens=report.tokens + docstarts, token_correct=report.token_correct + docstarts
    )


def score_conll_file(path: str | os.PathLike[str], *, delimiter: str | None = None) -> str:
    """What ``conlleval < path`` prints."""
    return format_conlleval(score_prediction_file(path, delimiter=delimiter))
