"""What tagging returns: documents of sentences, with spans that carry character offsets and confidences."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from seqlab.core.schema import CONFIDENCE_DIGITS, encode_document, encode_line, encode_sentence
from seqlab.data.formats.conllu_writer import conllu_sentence

FORMATS = ("conll", "jsonl", "inline", "conllu")


@dataclass(frozen=True)
class Span:
    """An entity (or chunk): its text, label, character offsets ``[start, end)`` into the tagged text,
    token offsets ``[token_start, token_end)`` into its sentence, and confidence (the smallest CRF
    posterior marginal of its tokens' predicted labels; 1.0 where the model gives none)."""

    text: str
    label: str
    start: int
    end: int
    confidence: float
    token_start: int
    token_end: int


@dataclass(frozen=True)
class Sentence:
    """One sentence: its tokens with their character offsets into the tagged text, one label per token
    (in the scheme asked for), and its spans."""

    tokens: list[str]
    offsets: list[tuple[int, int]]
    labels: list[str]
    spans: list[Span]

    def to_dict(self) -> dict[str, Any]:
        """The sentence as JSON-ready data (:mod:`seqlab.core.schema`): tokens, offsets, labels, spans."""
        return encode_sentence(self)


@dataclass(frozen=True)
class SpanRelation:
    """A relation an extraction model found between two spans of a document: ``head`` and ``tail`` index
    ``Document.spans``; ``confidence`` is the relation classifier's probability of ``label``."""

    head: int
    tail: int
    label: str
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {"head": self.head, "tail": self.tail, "label": self.label,
                "confidence": round(self.confidence, CONFIDENCE_DIGITS)}


@dataclass(frozen=True)
class Document:
    """A tagged text (one line or paragraph): its sentences, all their spans in order, and the relations an
    extraction model found between them (none from a tagger)."""

    text: str
    sentences: list[Sentence]
    relations: list[SpanRelation] = field(default_factory=list)

    @property
    def spans(self) -> list[Span]:
        return [span for sentence in self.sentences for span in sentence.spans]

    def inline(self) -> str:
        """The text with every span marked ``[LABEL words]``."""
        pieces, cursor = [], 0
        for span in self.spans:
            pieces.append(f"{self.text[cursor:span.start]}[{span.label} {self.text[span.start:span.end]}]")
            cursor = span.end
        pieces.append(self.text[cursor:])
        return "".join(pieces)

    def __str__(self) -> str:
        return self.inline()

    def to_dict(self) -> dict[str, Any]:
        """The document as JSON-ready data (:mod:`seqlab.core.schema`): text, spans, sentences, and
        ``relations`` only when there are some (a tagger's documents are written as they always were)."""
        data = encode_document(self)
        if self.relations:
            data["relations"] = [r.to_dict() for r in self.relations]
        return data

    def sentence_relations(self, index: int) -> list[SpanRelation]:
        """The relations within sentence ``index``, their ``head``/``tail`` indexing that sentence's spans."""
        first = sum(len(s.spans) for s in self.sentences[:index])
        last = first + len(self.sentences[index].spans)
        return [SpanRelation(r.head - first, r.tail - first, r.label, r.confidence) for r in self.relations
                if first <= r.head < last and first <= r.tail < last]


def render(numbered: Iterable[tuple[int, Document]], fmt: str, *, token_labels: bool = False) -> str:
    """Documents as ``seqlab tag`` writes them, each with its input line number (``jsonl`` and ``conllu`` record
    it):

    * ``conll``: ``token label`` lines, a blank line after each sentence;
    * ``jsonl``: one JSON object per sentence, :func:`seqlab.core.schema.encode_line`: its input line number,
      tokens, offsets, labels and spans (text, label, character offsets into the input line, confidence, token
      offsets);
    * ``inline``: each input line with entities marked ``[LABEL words]``;
    * ``conllu``: CoNLL-U, ``# sent_id = LINE-K`` (the K-th sentence of input line LINE) and ``# text``, the
      labels in UPOS when they are ``token_labels`` (a POS tagger's), else ``NER=label`` in MISC
      (:func:`seqlab.data.formats.conllu_writer.conllu_sentence`)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {FORMATS}")
    parts: list[str] = []
    for number, doc in numbered:
        if fmt == "inline":
            parts.append(doc.inline() + "\n")
        elif fmt == "conll":
            parts.extend("\n".join(map(" ".join, zip(s.tokens, s.labels))) + "\n\n" for s in doc.sentences)
        elif fmt == "conllu":
            parts.extend(conllu_sentence(s.tokens, s.labels, s.offsets, doc.text, f"{number}-{k}",
                                         token_labels=token_labels) for k, s in enumerate(doc.sentences, start=1))
        else:
            parts.extend(json.dumps(_line(number, doc, k), ensure_ascii=False) + "\n" for k in range(len(doc.sentences)))
    return "".join(parts)


def _line(number: int, doc: Document, index: int) -> dict[str, Any]:
    """One line of ``--format jsonl``: sentence ``index`` of ``doc``, with its relations when it has some
    (``head``/``tail`` index the line's ``spans``)."""
    data = encode_line(number, doc.sentences[index])
    relations = doc.sentence_relations(index) if doc.relations else []
    if relations:
        data["relations"] = [r.to_dict() for r in relations]
    return data
