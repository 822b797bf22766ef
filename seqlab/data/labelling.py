"""What a task's labels mean, in one object: span schemes (entities, chunks) or plain token labels (POS tags).

A :class:`Labelling` owns every rule that depends on the kind of label:

* how a file's tags are checked and turned into training labels (``training_labels``), and which label set a
  model is built with (``label_set``);
* which label transitions a CRF allows (``transitions``);
* how predicted labels become spans (``chunk_reader``) and output labels in the scheme asked for
  (``output_labels``);
* which measure scores a split (``score``) and what unit it counts (``unit``: a span, or a token): conlleval's
  span F1, or token accuracy with per-label P/R/F1;
* how a label map renames (or drops) labels (``check_label_map``, ``relabel``), which gold types are checked
  against a model's (``gold_types``), how a gold file's scheme is detected (``detect_file_scheme``), and where
  the labels go when written (``conllu_upos``, ``check_output_format``).

The task, the predictor, evaluation, the Python API and the exported models read it and never ask which kind
it is; ``data.tag_scheme`` picks it from a table (:data:`LABELLINGS`, :func:`labelling`). Span schemes are those
of :mod:`seqlab.data.schemes` (IOB1, IOB2, BIOES, BILOU; flair's ``tag_format``); ``token`` is a tagger
component in spaCy's sense: no prefixes, every transition allowed, no spans.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

import numpy as np

from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.data import schemes
from seqlab.data.label_map import LabelMap, check_label_map, relabel_spans
from seqlab.data.metrics import SpanReport, format_conlleval, report_to_dict, score as span_score
from seqlab.data.schemes import Chunk, SpanReader
from seqlab.data.token_metrics import TokenReport, format_token_report, token_report, token_report_to_dict

TOKEN = "token"
#: Every ``data.tag_scheme`` / ``data.file_scheme``: the span schemes, then plain token labels.
SCHEME_NAMES = (*schemes.SCHEMES, TOKEN)
#: The scheme a span model writes its output labels in unless told otherwise (B- at every entity start).
OUTPUT_SCHEME = "iob2"

#: Output formats that write spans, which a token-label model has none of.
SPAN_FORMATS = ("brat",)

ChunkReader = Callable[[np.ndarray, np.ndarray], list[list[Chunk]]]
Transitions = tuple[list[list[bool]], list[bool], list[bool]]


@dataclass(frozen=True)
class Evaluation:
    """A split scored with the labelling's measure: ``score`` (percent; span F1 or token accuracy, which model
    selection reads), the report as data (``to_dict()``) and as the text the field's scorer prints."""

    measure: str
    score: float
    report: SpanReport | TokenReport
    report_text: str

    @property
    def f1(self) -> float:
        """Span F1 (percent); a token-label evaluation has none: read ``accuracy``."""
        if not isinstance(self.report, SpanReport):
            raise SeqlabError("a token-label model is scored by accuracy, not span F1: read .accuracy (or .score)")
        return self.report.f1

    @property
    def accuracy(self) -> float:
        """Token accuracy (percent), for both kinds."""
        return self.report.accuracy

    def to_dict(self) -> dict[str, Any]:
        if isinstance(self.report, SpanReport):
            return report_to_dict(self.report)
        return token_report_to_dict(self.report)

    def __str__(self) -> str:
        return self.report_text


class Labelling(Protocol):
    """What a label scheme means; :class:`SpanLabelling` and :class:`TokenLabelling` implement it."""

    name: str  # the training scheme: iob1, iob2, bioes, bilou or token
    file_scheme: str  # the scheme of the tags in the data files
    measure: str  # "F1" or "accuracy"
    unit: str  # what a score counts and calibration fits: "span" or "token"
    label_word: str  # what one class is called in messages: "type" or "label"
    conllu_upos: bool  # written to CoNLL-U, the labels go in UPOS (token labels), else ``NER=`` in MISC
    converted_file_scheme: str  # the scheme of the tags seqlab's span-file readers (brat, JSONL) give

    def check_output_format(self, fmt: str) -> None:
        """Refuse an output format that cannot hold these labels (brat needs spans)."""

    def require_spans(self, field: str, why: str) -> None:
        """Refuse token labels where spans are needed: a ConfigError naming the config ``field`` and ``why``."""

    def check_label_map(self, mapping: object, source: str) -> LabelMap:
        """``mapping`` checked as a label map for these labels (token labels cannot be dropped)."""

    def relabel(self, tags: Sequence[str], mapping: Mapping[str, str | None], met: set[str]) -> tuple[str, ...]:
        """``tags`` (in the file's scheme) with ``mapping`` applied; the mapped classes met are added to ``met``."""

    def gold_types(self, file_tags: Iterable[Sequence[str]]) -> set[str]:
        """The types of a gold file that must share some with a model's (none for token labels)."""

    def detect_file_scheme(self, file_tags: Iterable[Sequence[str]]) -> str:
        """The scheme a gold file's tags are written in (``--scheme auto``); the training files' if unsure."""

    def check_tag(self, tag: str) -> None:
        """Refuse a malformed file tag (SeqlabError without a position: the reader adds file and line)."""

    def training_labels(self, tags: Sequence[str]) -> list[str]:
        """A sentence's file tags as training labels."""

    def classes(self, labels: Iterable[str]) -> set[str]:
        """What the labels name: entity types of a span scheme, or the labels themselves."""

    def label_set(self, classes: Iterable[str]) -> list[str]:
        """Every label a model over ``classes`` predicts, in a stable order."""

    def transitions(self, labels: Sequence[str]) -> Transitions:
        """``(allowed[i][j], start[j], end[i])``: which label sequences a CRF may produce."""

    def chunk_reader(self, labels: Sequence[str]) -> ChunkReader:
        """Reads the spans of whole batches of label ids (B, T) with their lengths (B,)."""

    def output_scheme(self, scheme: str | None) -> str:
        """``scheme`` checked for output (None: the default), or a one-line error naming the choices."""

    def output_labels(self, labels: Sequence[str], chunks: Sequence[Chunk], scheme: str) -> list[str]:
        """A predicted sentence's labels as written out in ``scheme``."""

    def score(self, gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> Evaluation:
        """Score predicted labels (written in the file's scheme) against the file's gold labels."""


@dataclass(frozen=True)
class SpanLabelling:
    """Entities or chunks as prefixed tags (``B-PER``): trained in ``name``, read and written in ``file_scheme``,
    the CRF constrained to well-formed sequences, scored with conlleval's span F1."""

    name: str = "bilou"
    file_scheme: str = "iob1"
    measure = "F1"
    unit = "span"
    label_word = "type"
    conllu_upos = False
    converted_file_scheme = "iob2"

    def check_output_format(self, fmt: str) -> None:
        return None

    def require_spans(self, field: str, why: str) -> None:
        return None

    def check_label_map(self, mapping: object, source: str) -> LabelMap:
        return check_label_map(mapping, source)

    def relabel(self, tags: Sequence[str], mapping: Mapping[str, str | None], met: set[str]) -> tuple[str, ...]:
        return relabel_spans(tags, mapping, met, self.file_scheme)

    def gold_types(self, file_tags: Iterable[Sequence[str]]) -> set[str]:
        return {kind for tags in file_tags for kind, _, _ in schemes.spans(tags)}

    def detect_file_scheme(self, file_tags: Iterable[Sequence[str]]) -> str:
        return schemes.detect_scheme(file_tags) or self.file_scheme

    def check_tag(self, tag: str) -> None:
        schemes.split_tag(tag)

    def training_labels(self, tags: Sequence[str]) -> list[str]:
        return schemes.convert(tags, self.name)

    def classes(self, labels: Iterable[str]) -> set[str]:
        return {schemes.split_tag(label)[1] for label in labels} - {""}

    def label_set(self, classes: Iterable[str]) -> list[str]:
        return schemes.labels_for(classes, self.name)

    def transitions(self, labels: Sequence[str]) -> Transitions:
        return schemes.allowed_transitions(labels, self.name)

    def chunk_reader(self, labels: Sequence[str]) -> ChunkReader:
        return SpanReader(labels)

    def output_scheme(self, scheme: str | None) -> str:
        chosen = (scheme or OUTPUT_SCHEME).lower()
        if chosen not in schemes.SCHEMES:
            raise SeqlabError(f"scheme: expected one of {list(schemes.SCHEMES)}, got {scheme!r}")
        return chosen

    def output_labels(self, labels: Sequence[str], chunks: Sequence[Chunk], scheme: str) -> list[str]:
        return schemes.from_spans(chunks, len(labels), scheme)

    def score(self, gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> Evaluation:
        report = span_score(gold, predicted)
        return Evaluation(self.measure, report.f1, report, format_conlleval(report))


def _no_chunks(ids: np.ndarray, lengths: np.ndarray) -> list[list[Chunk]]:
    return [[] for _ in range(len(lengths))]


@dataclass(frozen=True)
class TokenLabelling:
    """One plain label per token (``NOUN``, ``NN``): no prefixes, every transition allowed, no spans,
    scored by token accuracy with per-label precision, recall and F1."""

    name: str = TOKEN
    file_scheme: str = TOKEN
    measure = "accuracy"
    unit = "token"
    label_word = "label"
    conllu_upos = True
    converted_file_scheme = TOKEN

    def check_output_format(self, fmt: str) -> None:
        if fmt in SPAN_FORMATS:
            raise SeqlabError(f"--format {fmt} writes spans, and this model predicts token labels; use --format "
                              "conllu or conll")

    def require_spans(self, field: str, why: str) -> None:
        raise ConfigError(f"{field}: {why}, so it needs a span scheme (bilou, iob2, ...), got {self.name!r}")

    def check_label_map(self, mapping: object, source: str) -> LabelMap:
        return check_label_map(mapping, source, token_labels=True)

    def relabel(self, tags: Sequence[str], mapping: Mapping[str, str | None], met: set[str]) -> tuple[str, ...]:
        met.update(t for t in tags if t in mapping)
        return tuple(mapping.get(t) or t for t in tags)

    def gold_types(self, file_tags: Iterable[Sequence[str]]) -> set[str]:
        return set()

    def detect_file_scheme(self, file_tags: Iterable[Sequence[str]]) -> str:
        return self.file_scheme

    def check_tag(self, tag: str) -> None:
        if not tag or tag.isspace():
            raise SeqlabError(f"empty label {tag!r}: a token-label file needs one label per token")

    def training_labels(self, tags: Sequence[str]) -> list[str]:
        return list(tags)

    def classes(self, labels: Iterable[str]) -> set[str]:
        return set(labels)

    def label_set(self, classes: Iterable[str]) -> list[str]:
        return sorted(set(classes))

    def transitions(self, labels: Sequence[str]) -> Transitions:
        k = len(labels)
        return [[True] * k for _ in range(k)], [True] * k, [True] * k

    def chunk_reader(self, labels: Sequence[str]) -> ChunkReader:
        return _no_chunks

    def output_scheme(self, scheme: str | None) -> str:
        if scheme not in (None, TOKEN):
            raise SeqlabError(f"scheme: this model predicts token labels (no spans); scheme {scheme!r} does not "
                              f"apply (leave it unset, or 'token')")
        return TOKEN

    def output_labels(self, labels: Sequence[str], chunks: Sequence[Chunk], scheme: str) -> list[str]:
        return list(labels)

    def score(self, gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> Evaluation:
        report = token_report(gold, predicted)
        return Evaluation(self.measure, report.accuracy, report, format_token_report(report))


#: Each ``data.tag_scheme`` and the kind of labelling it makes.
LABELLINGS: dict[str, Callable[..., Labelling]] = {**{name: SpanLabelling for name in schemes.SCHEMES},
                                                   TOKEN: TokenLabelling}
#: A span labelling as seqlab trains one unless told otherwise (BILOU over IOB1 files).
DEFAULT_LABELLING: Labelling = SpanLabelling()


def labelling(tag_scheme: str, file_scheme: str | None = None) -> Labelling:
    """The labelling of a model trained in ``tag_scheme`` on files in ``file_scheme`` (``data.tag_scheme``,
    ``data.file_scheme``); ``token`` on either side means token labels, and then on both."""
    tag_scheme = tag_scheme.lower()
    file_scheme = (file_scheme or (TOKEN if tag_scheme == TOKEN else "iob1")).lower()
    for key, value in (("data.tag_scheme", tag_scheme), ("data.file_scheme", file_scheme)):
        if value not in SCHEME_NAMES:
            raise SeqlabError(f"{key}: expected one of {list(SCHEME_NAMES)}, got {value!r}")
    if (tag_scheme == TOKEN) != (file_scheme == TOKEN):
        raise SeqlabError(f"data.tag_scheme {tag_scheme!r} and data.file_scheme {file_scheme!r}: token labels "
                          "(no prefixes) are read and trained as 'token' on both sides, spans on neither")
    return LABELLINGS[tag_scheme](tag_scheme, file_scheme)
