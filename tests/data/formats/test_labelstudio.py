"""Label Studio JSON exports: the annotation read, the policies counted, errors at the line a task begins."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.data.formats.align import AlignmentReport
from seqlab.data.formats.labelstudio import read_label_studio
from tests.conftest import FIXTURES

EXPORT = FIXTURES / "formats" / "labelstudio.json"


def test_the_first_live_annotation_of_each_task_is_read() -> None:
    report = AlignmentReport()
    sentences = list(read_label_studio(EXPORT, report=report))
    assert [s.extra["doc_id"] for s in sentences] == ["11", "13", "13"]
    assert sentences[0]["ner"] == ("B-ORG", "I-ORG", "O", "B-PER", "I-PER", "O", "B-LOC", "O")
    assert [s["ner"][0] for s in sentences[1:]] == ["B-LOC", "B-LOC"]
    assert [s.line for s in sentences] == [2, 116, 116]  # where each task begins in the file
    assert (report.spans_read, report.aligned, report.lost) == (5, 5, 0)
    assert report.notes == {"tasks with several annotations (the first read)": 1,
                            "regions with several labels (the first read)": 1,
                            "results other than labels ignored": 1, "tasks without an annotation (skipped)": 1}


def _export(tmp_path: Path, tasks: object) -> Path:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(tasks, indent=1) if not isinstance(tasks, str) else tasks, encoding="utf-8")
    return path


def _task(value: object, text: str = "Paris") -> dict:
    return {"id": 1, "data": {"text": text}, "annotations": [{"result": [{"type": "labels", "value": value}]}]}


@pytest.mark.parametrize("tasks, message", [
    ({"data": {}}, r"x.json:1: expected a JSON list of tasks"),
    ("[{\"data\": {\"text\": \"a\"}} {}]", r"x.json:1: expected ',' or ']' after a task"),
    ("[{\"data\": {\"text\": \"a\"}},", r"x.json:1: the list is not closed"),
    ("[\n{\"data\": {\"text\": \"a\"}},\n{\"data\": }]", r"x.json:3: not JSON"),
    ([{"data": {"body": "a"}}], r"x.json:2: task 0: expected an object with data.text \(a string\); data has "
                                r"\['body'\]"),
    ([_task({"start": 0, "end": 5})], r"x.json:2: task 0 result 0: expected value.labels"),
    ([_task({"start": "0", "end": 5, "labels": ["LOC"]})], r"task 0 result 0 value.start: expected an integer"),
    ([], r"x.json: no tasks"),
    ('[\n{"data": {"text": "a \\ud800"}}]', r"x.json:2: a string holds the lone UTF-16 surrogate"),
    ("[" * 100 + "]" * 100, r"x.json:1: JSON nested deeper than 64 levels; refused"),
])
def test_malformed_exports_are_one_line_errors(tmp_path: Path, tasks: object, message: str) -> None:
    with pytest.raises(SeqlabError, match=message):
        list(read_label_studio(_export(tmp_path, tasks)))


def test_an_unaligned_region_is_reported_or_refused(tmp_path: Path) -> None:
    path = _export(tmp_path, [_task({"start": 0, "end": 9, "labels": ["LOC"]})])
    report = AlignmentReport()
    assert [s["ner"] for s in read_label_studio(path, report=report)] == [("O",)]
    assert report.unaligned == 1 and "out of range" in report.problems[0]
    with pytest.raises(DataFormatError, match=r"x.json:2: document 1: span"):
        list(read_label_studio(path, strict=True))


def test_another_text_key_can_be_named(tmp_path: Path) -> None:
    path = _export(tmp_path, [{"data": {"body": "Rome"}, "annotations": [
        {"result": [{"type": "labels", "value": {"start": 0, "end": 4, "labels": ["LOC"]}}]}]}])
    [sentence] = read_label_studio(path, text_key="body")
    assert sentence["ner"] == ("B-LOC",) and sentence.extra["doc_id"] == "x-0"
