"""The one JSON schema of seqlab's outputs: a tagged document and a classified relation as plain data.

``Document.to_dict``, ``Relation.to_dict``, ``seqlab tag --format jsonl``, ``seqlab classify --format jsonl``,
``seqlab serve``'s ``/tag`` and ``/classify`` answers and the rows of :func:`seqlab.apps.ray.tag_dataset` are
all built here, so that one concept has one field name everywhere:

* a span: ``text``, ``label``, ``start``, ``end`` (character offsets ``[start, end)`` into the tagged text),
  ``confidence``, ``token_start``, ``token_end`` (token offsets into its sentence);
* a sentence: ``tokens``, ``offsets`` (``[start, end]`` per token), ``labels`` (one per token, in the scheme the
  tagger was asked for) and ``spans``;
* a document: ``text``, ``spans`` (all its sentences' spans in order) and ``sentences``, and, from an
  extraction model when it found some, ``relations``;
* a relation between spans: ``head``, ``tail`` (indices into the ``spans`` beside it), ``label``, ``confidence``;
* a line of ``seqlab tag --format jsonl``: a sentence with ``line``, its input line number (from 1), and the
  sentence's span relations when there are some;
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
SPAN_RELATION_FIELDS = ("head", "tail", "label", "confidence")


def encode_span(span: Any) -> dict[str, Any]:
    """A span as JSON-ready data (:data:`SPAN_FIELDS`)."""
    return {"text": span.text, "label": span.label, "start": span.start, "end": span.end,
            "confidence": round(span.confidence, CONFIDENCE_DIGITS), "token_start": span.token_start,
            "token_end": span.token_end}


def encode_sentence(sentence: Any) -> dict[str, Any]:
    """A tagged sentence as JSON-ready data (:data:`SENTENCE_FIELDS`); its labels as the sentence holds them."""
    return {"tokens": list(sentence.tokens), "offsets": [[start, end] for start, end in sentence.offsets],
            "labels": list(sentence.labels), "spans": [encode_span(s) for s in sentence.spans]}


def encode_span_relation(relation: Any) -> dict[str, Any]:
    """A relation between two spans as JSON-ready data (:data:`SPAN_RELATION_FIELDS`)."""
    return {"head": relation.head, "tail": relation.tail, "label": relation.label,
            "confidence": round(relation.confidence, CONFIDENCE_DIGITS)}


def encode_document(document: Any) -> dict[str, Any]:
    """A tagged document as JSON-ready data (:data:`DOCUMENT_FIELDS`), with ``relations`` only when it has some
    (a tagger's documents are written as they always were)."""
    sentences = [encode_sentence(s) for s in document.sentences]
    data = {"text": document.text, "spans": [span for s in sentences for span in s["spans"]],
            "sentences": sentences}
    if getattr(document, "relations", None):
        data["relations"] = [encode_span_relation(r) for r in document.relations]
    return data


def encode_line(number: int, sentence: Any, relations: Any = ()) -> dict[str, Any]:
    """One object of ``seqlab tag --format jsonl``: the sentence and its input line ``number``, and the
    ``relations`` among its spans (``head``/``tail`` indexing the sentence's ``spans``) when there are some."""
    data = {"line": number, **encode_sentence(sentence)}
    if relations:
        data["relations"] = [encode_span_relation(r) for r in relations]
    return data


def encode_relation(relation: Any) -> dict[str, Any]:
    """A classified relation as JSON-ready data (:data:`RELATION_FIELDS`)."""
    return {"id": relation.id, "label": relation.label, "confidence": round(relation.confidence, CONFIDENCE_DIGITS),
            "e1": relation.e1, "e2": relation.e2,
            "probabilities": {k: round(p, CONFIDENCE_DIGITS) for k, p in relation.probabilities.items()}}

