"""seqlab's own JSONL: the lines of ``seqlab tag --format jsonl`` and documents with sentences, read back by their
tokens, labels and sentences."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqlab.core.errors import DataFormatError
from seqlab.data.formats.registry import detect_format
from seqlab.data.formats.seqlab_jsonl import read_seqlab_jsonl

#: Two input lines as seqlab tag writes them: line 1 with two sentences, line 3 with one.
TAGGED = [
    {"line": 1, "tokens": ["Bob", "ran", "."], "offsets": [[0, 3], [4, 7], [7, 8]], "labels": ["B-PER", "O", "O"],
     "spans": [{"text": "Bob", "label": "PER", "start": 0, "end": 3, "confidence": 0.9, "token_start": 0,
                "token_end": 1}]},
    {"line": 1, "tokens": ["In", "Paris"], "offsets": [[9, 11], [12, 17]], "labels": ["O", "B-LOC"], "spans": []},
    {"line": 3, "tokens": ["Hi"], "offsets": [[2, 4]], "labels": ["O"], "spans": []},
]


def _write(tmp_path: Path, objects: list[object]) -> Path:
    path = tmp_path / "x.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def test_tag_lines_are_sentences_of_one_document_per_input_line(tmp_path: Path) -> None:
    path = _write(tmp_path, TAGGED)
    assert detect_format(path) == "seqlab"
    sentences = list(read_seqlab_jsonl(path))
    assert [(s["word"], s["ner"]) for s in sentences] == [(tuple(o["tokens"]), tuple(o["labels"])) for o in TAGGED]
    assert [s.doc_start for s in sentences] == [True, False, True]
    assert [s.extra["doc_id"] for s in sentences] == ["x-line1", "x-line1", "x-line3"]
    assert sentences[0].extra["text"] == "Bob ran. In Paris" and sentences[2].extra["text"] == "  Hi"
    assert [s.line for s in sentences] == [1, 2, 3]


def test_a_document_keeps_its_text_and_sentences(tmp_path: Path) -> None:
    doc = {"id": "d", "text": "Bob ran.\nHi", "spans": [], "sentences": [
        {"tokens": ["Bob", "ran", "."], "offsets": [[0, 3], [4, 7], [7, 8]], "labels": ["B-PER", "O", "O"]},
        {"tokens": ["Hi"], "offsets": [[9, 11]], "labels": ["O"]}]}
    path = _write(tmp_path, [doc, {"text": "A b", "sentences": [{"tokens": ["A", "b"], "labels": ["O", "O"]}]}])
    assert detect_format(path) == "seqlab"
    first, second, third = read_seqlab_jsonl(path)
    assert first.extra["text"] is second.extra["text"] and second.extra["offsets"] == ((9, 11),)
    assert (first.extra["doc_id"], third.extra["doc_id"]) == ("d", "x-2")
    assert third.extra["offsets"] == ((0, 1), (2, 3))  # no offsets: the tokens joined by spaces


@pytest.mark.parametrize("obj, message", [
    ({"tokens": ["a"], "labels": "O"}, r"x.jsonl:1: labels: expected a list of strings"),
    ({"tokens": ["a", "b"], "labels": ["O"]}, r"x.jsonl:1: labels: expected one per token \(2\), got 1"),
    ({"tokens": ["a"], "labels": ["O"], "offsets": [[0]]}, r"x.jsonl:1: offsets: expected 1 \[start, end\]"),
    ({"sentences": {"tokens": []}}, r"x.jsonl:1: sentences: expected a list, got dict"),
    ({"sentences": [3]}, r"x.jsonl:1: sentences\[0\]: expected a sentence object, got int"),
    ({"text": "a", "sentences": [{"tokens": ["a"], "labels": ["O"], "offsets": [[0, 5]]}]},
     r"x.jsonl:1: offsets: token end 5 is past the end of the text \(1 characters\)"),
])
def test_bad_objects_name_the_file_line_and_what_was_expected(tmp_path: Path, obj: object, message: str) -> None:
    with pytest.raises(DataFormatError, match=message):
        list(read_seqlab_jsonl(_write(tmp_path, [obj])))
