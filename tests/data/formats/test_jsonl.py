"""Span JSONL (doccano, spaCy, Prodigy): every span shape and key, clear errors, and the writer round-trips."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqlab.core.errors import DataFormatError
from seqlab.data.conll import ColumnSentence
from seqlab.data.formats.align import AlignmentReport
from seqlab.data.formats.jsonl import read_span_jsonl, write_span_jsonl
from tests.conftest import FIXTURES

SPANS = FIXTURES / "formats" / "spans.jsonl"


def test_objects_and_lists_under_spans_entities_and_label_are_read() -> None:
    report = AlignmentReport()
    sentences = list(read_span_jsonl(SPANS, report=report))
    assert [(s.extra["doc_id"], s.line) for s in sentences] == [("a", 1), ("7", 2), ("spans-3", 3), ("spans-5", 5)]
    assert sentences[0]["ner"] == ("B-PER", "I-PER", "O", "B-LOC", "O")
    assert sentences[1]["ner"] == ("B-ORG", "O", "B-MISC", "O", "O")
    assert set(sentences[2]["ner"]) == {"O"}
    assert list(zip(sentences[3]["word"], sentences[3]["ner"]))[:6] == [
        ("Angela", "B-PER"), ("Merkel", "I-PER"), ("spoke", "O"), ("in", "O"), ("Berlin", "B-LOC"), ("-Mitte", "O")]
    assert (report.spans_read, report.aligned, report.split_tokens) == (6, 6, 1)  # not the rejected record's
    assert report.notes == {"records not accepted (answer reject or ignore) skipped": 1}


def _file(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "x.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("line, message", [
    ('{"text": "a"', r"x.jsonl:1: not JSON"),
    ('["a"]', r"x.jsonl:1: expected a JSON object per line, got list"),
    ('{"txt": "a"}', r"x.jsonl:1: expected a string under 'text', got no such key; keys: \['txt'\]"),
    ('{"text": "ab", "spans": {"start": 0}}', r"x.jsonl:1: spans: expected a list of spans, got dict"),
    ('{"text": "ab", "spans": [[0, 1]]}', r"x.jsonl:1: spans\[0\]: expected \{\"start\""),
    ('{"text": "ab", "label": ["positive"]}', r"x.jsonl:1: label\[0\]: expected"),
    ('{"text": "ab", "entities": [[0, "1", "X"]]}', r"x.jsonl:1: entities\[0\] end: expected an integer"),
    ('{"text": "ab", "spans": [{"start": 0, "end": 1.0, "label": "X"}]}', r"spans\[0\] end: expected an integer"),
    ('{"text": "ab", "spans": [{"start": true, "end": 1, "label": "X"}]}', r"spans\[0\] start: expected an integer"),
    ('{"text": "ab", "spans": [{"start": 0, "end": 1}]}', r"x.jsonl:1: spans\[0\]: expected a label string"),
])
def test_malformed_objects_name_the_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(DataFormatError, match=message):
        list(read_span_jsonl(_file(tmp_path, line)))


def test_unaligned_spans_are_reported_or_refused(tmp_path: Path) -> None:
    path = _file(tmp_path, "", '{"id": "q", "text": "in Paris", "spans": [[3, 8, "LOC"], [8, 12, "LOC"]]}')
    report = AlignmentReport()
    [sentence] = read_span_jsonl(path, report=report)
    assert sentence["ner"] == ("O", "B-LOC") and report.unaligned == 1
    assert report.problems == [f"{path}:2: document q: span [8, 12) LOC '': out of range (the text has 8 characters)"]
    with pytest.raises(DataFormatError, match=r"x.jsonl:2: document q: .*out of range"):
        list(read_span_jsonl(path, strict=True))


def test_write_span_jsonl_round_trips(tmp_path: Path) -> None:
    sentences = list(read_span_jsonl(SPANS))
    out = tmp_path / "out.jsonl"
    assert write_span_jsonl(out, sentences) == 4
    first = json.loads(out.read_text().splitlines()[0])
    assert first == {"id": "a", "text": "Barack Obama visited Paris.", "spans": [
        {"start": 0, "end": 12, "label": "PER", "text": "Barack Obama"},
        {"start": 21, "end": 26, "label": "LOC", "text": "Paris"}], "sentences": [
        {"tokens": ["Barack", "Obama", "visited", "Paris", "."], "labels": ["B-PER", "I-PER", "O", "B-LOC", "O"],
         "offsets": [[0, 6], [7, 12], [13, 20], [21, 26], [26, 27]]}]}
    again = list(read_span_jsonl(out))
    assert [(s.columns, s.extra["offsets"], s.extra["doc_id"]) for s in again] == \
        [(s.columns, s.extra["offsets"], s.extra["doc_id"]) for s in sentences]


def test_write_span_jsonl_writes_column_sentences_one_per_line(tmp_path: Path) -> None:
    sentences = [ColumnSentence({"word": ("U.N.", "official", "Ekeus"), "ner": ("I-ORG", "O", "I-PER")}),
                 ColumnSentence({"word": ("Peter",), "ner": ("B-PER",)})]
    out = tmp_path / "out.jsonl"
    write_span_jsonl(out, sentences)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["text"] for r in rows] == ["U.N. official Ekeus", "Peter"]
    assert [(s["text"], s["label"]) for s in rows[0]["spans"]] == [("U.N.", "ORG"), ("Ekeus", "PER")]


def test_brat_converts_to_span_jsonl_and_back(tmp_path: Path) -> None:
    from seqlab.data.formats.brat import read_brat, write_brat

    sentences = list(read_brat(FIXTURES / "formats" / "brat"))
    write_span_jsonl(tmp_path / "x.jsonl", sentences)
    via_jsonl = list(read_span_jsonl(tmp_path / "x.jsonl"))
    write_brat(tmp_path / "back", via_jsonl)
    again = list(read_brat(tmp_path / "back"))
    for before, after in ((sentences, via_jsonl), (sentences, again)):
        assert [(s.columns, s.extra["offsets"], s.extra["doc_id"], s.extra["text"]) for s in after] == \
            [(s.columns, s.extra["offsets"], s.extra["doc_id"], s.extra["text"]) for s in before]
