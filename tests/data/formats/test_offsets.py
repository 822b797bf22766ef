"""Offset units: characters, UTF-8 bytes and UTF-16 code units told apart where the text decides, converted or
refused in one line, and every span's own text checked against the document's."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqlab.core.errors import DataFormatError
from seqlab.data.formats.align import AlignmentReport
from seqlab.data.formats.jsonl import read_span_jsonl
from seqlab.data.formats.labelstudio import read_label_studio

TEXT = "I \U0001F600 met Zoë in Paris ."  # an astral character, then a non-ASCII one


def _units(text: str, start: int, end: int, unit: str) -> tuple[int, int]:
    if unit == "utf8":
        return len(text[:start].encode("utf-8")), len(text[:end].encode("utf-8"))
    if unit == "utf16":
        return len(text[:start].encode("utf-16-le")) // 2, len(text[:end].encode("utf-16-le")) // 2
    return start, end


def _jsonl(tmp_path: Path, unit: str, with_text: bool = True) -> Path:
    spans = []
    for word, label in (("Zoë", "PER"), ("Paris", "LOC")):
        a = TEXT.index(word)
        start, end = _units(TEXT, a, a + len(word), unit)
        spans.append({"start": start, "end": end, "label": label, **({"text": word} if with_text else {})})
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"id": "d", "text": TEXT, "spans": spans}, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _entities(sentences) -> list[tuple[str, str]]:
    return [(tag[2:], word) for s in sentences for word, tag in zip(s["word"], s["ner"]) if tag != "O"]


@pytest.mark.parametrize("unit", ["chars", "utf8", "utf16"])
@pytest.mark.parametrize("with_text", [True, False])
def test_auto_reads_each_unit_to_the_same_spans(tmp_path: Path, unit: str, with_text: bool) -> None:
    report = AlignmentReport()
    assert _entities(read_span_jsonl(_jsonl(tmp_path, unit, with_text), report=report)) == [("PER", "Zoë"),
                                                                                            ("LOC", "Paris")]
    assert not report.problems and report.aligned == 2
    assert bool(report.notes) == (unit != "chars")


@pytest.mark.parametrize("unit", ["utf8", "utf16"])
def test_an_explicit_unit_is_read_and_chars_refuses_offsets_that_look_like_another(tmp_path: Path, unit: str) -> None:
    path = _jsonl(tmp_path, unit)
    assert _entities(read_span_jsonl(path, offsets=unit)) == [("PER", "Zoë"), ("LOC", "Paris")]
    name = {"utf8": "UTF-8 bytes", "utf16": "UTF-16 code units"}[unit]
    with pytest.raises(DataFormatError, match=rf"x.jsonl:1: document d: the spans' offsets look like {name}, not "
                                              rf"characters .* --offsets {unit}"):
        list(read_span_jsonl(path, offsets="chars"))


def test_an_offset_inside_a_character_is_refused_for_its_unit(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"text": "Zoë x", "spans": [[0, 3, "PER"]]}) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"x.jsonl:1: document x-1: an offset falls inside a character when "
                                              r"read as UTF-8 bytes"):
        list(read_span_jsonl(path, offsets="utf8"))


def test_a_span_whose_own_text_differs_is_named_in_the_report(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    task = {"id": 7, "data": {"text": "Ann met Bob ."}, "annotations": [{"result": [
        {"id": "r1", "type": "labels", "value": {"start": 0, "end": 3, "labels": ["PER"], "text": "Bob"}}]}]}
    path.write_text(json.dumps([task]), encoding="utf-8")
    report = AlignmentReport()
    list(read_label_studio(path, report=report))
    assert "document 7: span r1 [0, 3) PER says 'Bob', the text there is 'Ann'" in report.problems[0]
    with pytest.raises(DataFormatError, match=r"x.json:1: document 7: span r1 .* says 'Bob'"):
        list(read_label_studio(path, strict=True))


def test_label_studio_utf16_offsets_after_an_emoji_are_converted(tmp_path: Path) -> None:
    a = TEXT.index("Paris")
    start, end = _units(TEXT, a, a + 5, "utf16")
    task = {"data": {"text": TEXT}, "annotations": [{"result": [
        {"type": "labels", "value": {"start": start, "end": end, "labels": ["LOC"], "text": "Paris"}}]}]}
    path = tmp_path / "x.json"
    path.write_text(json.dumps([task], ensure_ascii=False), encoding="utf-8")
    assert _entities(read_label_studio(path)) == [("LOC", "Paris")]


def test_data_offsets_is_checked_and_read_by_the_dataset(tmp_path: Path) -> None:
    from seqlab.core.errors import ConfigError
    from seqlab.data.dataset import read_split
    from seqlab.tagging.config import DataConfig

    with pytest.raises(ConfigError, match=r"data.offsets"):
        DataConfig(train="x.jsonl", offsets="bytes")
    path = _jsonl(tmp_path, "utf16")
    split = read_split(DataConfig(train=str(path), dev=str(path), offsets="utf16"), "train")
    assert [t for tags in split.file_tags for t in tags if t != "O"] == ["B-PER", "B-LOC"]
    with pytest.raises(DataFormatError, match=r"look like UTF-16 code units"):
        read_split(DataConfig(train=str(path), dev=str(path), offsets="chars"), "train")
