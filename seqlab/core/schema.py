"""The one JSON schema of seqlab's outputs: a tagged document and a classified relation as plain data.

``Document.to_dict``, ``Relation.to_dict``, ``seqlab tag --format jsonl``, ``seqlab classify --format jsonl``,
``seqlab serve``'s ``/tag`` and ``/classify`` answers and the rows of :func:`seqlab.apps.ray.tag_dataset` are
all built here, so that one concept has one field name everywhere:

* a span: ``text``, ``label``, ``start``, ``end`` (character offsets ``[start, end)`` into the tagged text),
  ``confidence``, ``token_start``, ``token_end`` (token offsets into its sentence);
* a sentence: ``tokens``, ``offsets`` (``[start, end]`` per token), ``labels`` (one per token, in the scheme the
  tagger was asked for) and ``spans``;
* a document: ``text``, ``spans`` (all its sentences' spans in order) and ``sentences``;
* a line of ``seqlab tag --format jsonl``: a sentence with ``line``, its input line number (from 1);
* a relation: ``id``, ``label``, ``confidence``, ``e1``, ``e2``, ``probabilities`` (label → probability).

Confidences and probabilities are rounded to :data:`CONFIDENCE_DIGITS` decimals. The encoders read the named
attributes of any object that has them (:class:`seqlab.tagging.document.Span`, ``Sentence``, ``Document``,
:class:`seqlab.relation.api.Relation`; this module sits on the ground floor and imports neither package), and
build the data directly rather than by ``dataclasses.asdict``, which cost the server 0.1-0.2 ms per sentence.
"""
from __future__ import annotations

from typing import Any

#: Decimals kept of every confidence and probability written out.
CONFIDENCE_DIGITS = 4

#: The field names, in the order written (the README's table lists the same).
SPAN_FIELDS = ("text", "label", "start", "end", "confidence", "token_start", "token_end")
SENTENCE_FIELDS = ("tokens", "offsets", "labels", "spans")
DOCUMENT_FIELDS = ("text", "spans", "sentences")
RELATION_FIELDS = ("id", "label", "confidence", "e1", "e2", "probabilities")


def encode_span(span: Any) -> dict[str, Any]:
    """A span as JSON-ready data (:data:`SPAN_FIELDS`)."""
    return {"text": span.text, "label": span.label, "start": span.start, "end": span.end,
            "confidence": round(span.confidence, CONFIDENCE_DIGITS), "token_start": span.token_start,
            "token_end": span.token_end}


def encode_sentence(sentence: Any) -> dict[str, Any]:
    """A tagged sentence as JSON-ready data (:data:`SENTENCE_FIELDS`); its labels as the sentence holds them."""
    return {"tokens": list(sentence.tokens), "offsets": [[start, end] for start, end in sentence.offsets],
            "labels": list(sentence.labels), "spans": [encode_span(s) for s in sentence.spans]}


def encode_document(document: Any) -> dict[str, Any]:
    """A tagged document as JSON-ready data (:data:`DOCUMENT_FIELDS`)."""
    sentences = [encode_sentence(s) for s in document.sentences]
    return {"text": document.text, "spans": [span for s in sentences for span in s["spans"]],
            "sentences": sentences}


def encode_line(number: int, sentence: Any) -> dict[str, Any]:
    """One object of ``seqlab tag --format jsonl``: the sentence and its input line ``number``."""
    return {"line": number, **encode_sentence(sentence)}


def encode_relation(relation: Any) -> dict[str, Any]:
    """A classified relation as JSON-ready data (:data:`RELATION_FIELDS`)."""
    return {"id": relation.id, "label": relation.label, "confidence": round(relation.confidence, CONFIDENCE_DIGITS),
            "e1": relation.e1, "e2": relation.e2,
            "probabilities": {k: round(p, CONFIDENCE_DIGITS) for k, p in relation.probabilities.items()}}

