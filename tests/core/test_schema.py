"""seqlab.core.schema: one JSON schema for a tagged document and a relation, whichever way it is written out
(``to_dict``, ``seqlab tag``/``classify --format jsonl``, ``seqlab serve``, the rows of ``tag_dataset`` on Ray)."""
from __future__ import annotations

import asyncio
import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

import seqlab
from seqlab.core.schema import (CONFIDENCE_DIGITS, DOCUMENT_FIELDS, RELATION_FIELDS, SENTENCE_FIELDS, SPAN_FIELDS,
                                encode_document, encode_line, encode_relation)
from seqlab.relation.api import Relation
from seqlab.tagging.document import Document, Sentence, Span, render
from tests.conftest import tiny_run

TEXT = ("German Chancellor Angela Merkel met French President Emmanuel Macron in Berlin. "
        "Shares of Volkswagen AG rose 3.5% in Frankfurt.")


@pytest.fixture(scope="module")
def document() -> Document:
    """The installed English NER model's tagging of two sentences with several entities."""
    doc = seqlab.load(None, "cpu").tag(TEXT)
    assert len(doc.sentences) == 2 and len(doc.spans) >= 5
    return doc


async def _asgi_post(app, path: str, payload: dict) -> tuple[int, dict]:
    """POST ``payload`` to an ASGI ``app`` in this process: (status, parsed JSON answer)."""
    body, sent = json.dumps(payload).encode(), []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": path, "headers": [(b"content-length", str(len(body)).encode())]}
    await app(scope, receive, send)
    return sent[0]["status"], json.loads(b"".join(m.get("body", b"") for m in sent[1:]))


def _served(model, path: str, payload: dict) -> tuple[int, dict]:
    pytest.importorskip("starlette", reason="seqlab serve needs the serve extra: pip install 'seqlab[serve]'")
    from seqlab.serve import ModelService, make_app

    service = ModelService(model, "test")
    try:
        return asyncio.run(_asgi_post(make_app(service), path, payload))
    finally:
        service.batcher.close(timeout=30)


def test_a_document_has_one_schema_with_its_fields_in_order(document):
    encoded = document.to_dict()
    assert tuple(encoded) == DOCUMENT_FIELDS
    assert all(tuple(s) == SENTENCE_FIELDS for s in encoded["sentences"])
    assert all(tuple(span) == SPAN_FIELDS for span in encoded["spans"])
    for span, original in zip(encoded["spans"], document.spans):
        assert TEXT[span["start"]:span["end"]] == span["text"] == original.text
        assert span["confidence"] == round(original.confidence, CONFIDENCE_DIGITS)
    assert encoded["spans"] == [span for s in encoded["sentences"] for span in s["spans"]]
    assert [s["offsets"] for s in encoded["sentences"]] == [[list(o) for o in s.offsets] for s in document.sentences]
    assert json.loads(json.dumps(encoded)) == encoded  # JSON-ready as it is


def test_jsonl_writes_each_sentence_of_to_dict_with_its_line_number(document):
    lines = [json.loads(line) for line in render([(7, document)], "jsonl").splitlines()]
    assert lines == [{"line": 7, **s} for s in document.to_dict()["sentences"]]
    assert lines[0] == encode_line(7, document.sentences[0])


def test_serve_tag_answers_to_dict(document):
    tagger = seqlab.load(None, "cpu")
    status, body = _served(tagger, "/tag", {"text": TEXT})
    assert status == 200 and body == {"documents": [document.to_dict()]}
    tokens = [s.tokens for s in document.sentences]
    status, body = _served(tagger, "/tag", {"tokens": tokens})
    assert status == 200 and body == {"sentences": [s.to_dict() for s in tagger.tag_tokens(tokens)]}


def test_ray_rows_hold_the_spans_and_sentences_of_to_dict(document):
    pa = pytest.importorskip("pyarrow", reason="Ray Data's tables need pyarrow: pip install -e '.[ray]'")
    from seqlab.apps.ray import _schema, row_columns

    columns = row_columns([document])
    spans_type, sentences_type = _schema()
    encoded = document.to_dict()
    assert pa.array(columns["spans"], type=spans_type).to_pylist() == [encoded["spans"]]
    assert pa.array(columns["sentences"], type=sentences_type).to_pylist() == [encoded["sentences"]]


def test_confidences_are_rounded_the_same_everywhere():
    span = Span("EU", "ORG", 0, 2, 0.123456789, 0, 1)
    doc = Document("EU", [Sentence(["EU"], [(0, 2)], ["B-ORG"], [span])])
    relation = Relation("3", "Other", 0.987654321, "a", "b", {"Other": 0.987654321, "Cause-Effect(e1,e2)": 0.0123456})
    assert encode_document(doc)["spans"][0]["confidence"] == 0.1235
    assert json.loads(render([(1, doc)], "jsonl"))["spans"][0]["confidence"] == 0.1235
    assert encode_relation(relation) == {"id": "3", "label": "Other", "confidence": 0.9877, "e1": "a", "e2": "b",
                                         "probabilities": {"Other": 0.9877, "Cause-Effect(e1,e2)": 0.0123}}
    assert tuple(relation.to_dict()) == RELATION_FIELDS


@pytest.fixture(scope="module")
def relation_run(tmp_path_factory) -> Path:
    return tiny_run(tmp_path_factory.mktemp("schema") / "relation", "semeval", ("train.epochs=1",))


def test_a_relation_is_one_record_in_python_classify_jsonl_and_serve(relation_run, monkeypatch):
    from seqlab.cli import main

    sentence = "The <e1>smoke</e1> was caused by a <e2>fire</e2> in the kitchen."
    model = seqlab.load(relation_run, "cpu")
    expected = model.classify(sentence).to_dict()
    monkeypatch.setattr("sys.stdin", io.StringIO(sentence + "\n"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["classify", str(relation_run), "-", "--format", "jsonl"]) == 0
    assert json.loads(out.getvalue()) == expected
    status, body = _served(model, "/classify", {"sentences": [sentence]})
    assert status == 200 and body == {"relations": [expected]}


@dataclass(frozen=True)
class _Odd:
    """A span-like object from elsewhere: the encoder reads attributes, not types."""

    text: str = "x"
    label: str = "L"
    start: int = 0
    end: int = 1
    confidence: float = 1.0
    token_start: int = 0
    token_end: int = 1


def test_the_encoder_reads_any_object_with_the_fields():
    sentence = Sentence(["x"], [(0, 1)], ["B-L"], [_Odd()])  # type: ignore[list-item]
    assert sentence.to_dict()["spans"] == [{"text": "x", "label": "L", "start": 0, "end": 1, "confidence": 1.0,
                                            "token_start": 0, "token_end": 1}]
