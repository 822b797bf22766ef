"""The file helpers of the formats: whole UTF-8 texts with offsets intact, JSON lines, integer offsets."""
from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.core.json_limits import record_fault
from seqlab.data.formats.files import integer, json_objects, read_text


def test_read_text_keeps_carriage_returns_and_drops_a_bom_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"\xef\xbb\xbfa\r\nb")
    assert read_text(path) == "a\r\nb" and read_text(path, keep_bom=True) == "\ufeffa\r\nb"
    path.write_bytes(b"a\nb\n\xffc")
    with pytest.raises(DataFormatError, match=r"x.txt:3: not valid UTF-8 \(byte 0xff\)"):
        read_text(path)
    with pytest.raises(SeqlabError, match=r"nothing.txt: no such file"):
        read_text(tmp_path / "nothing.txt")


def test_json_objects_skip_blank_lines_and_name_bad_ones(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"b": 2}\n3\n', encoding="utf-8")
    rows = json_objects(path)
    assert [next(rows), next(rows)] == [(1, {"a": 1}), (3, {"b": 2})]
    with pytest.raises(DataFormatError, match=r"x.jsonl:4: expected a JSON object per line, got int"):
        next(rows)


@pytest.mark.parametrize("value", [True, 1.0, "1", None])
def test_integer_refuses_what_is_not_an_int(value: object) -> None:
    assert integer(7, "start", "f", 1) == 7
    with pytest.raises(DataFormatError, match=r"f:2: spans\[0\] start: expected an integer character offset"):
        integer(value, "spans[0] start", "f", 2)


@pytest.mark.parametrize("line, message", [
    ('{"text": "\\ud800 x"}', r"x.jsonl:1: a string holds the lone UTF-16 surrogate '\\ud800'"),
    ('{"text": "\\udc00"}', r"x.jsonl:1: a string holds the lone UTF-16 surrogate"),
    ('{"a": ' + "[" * 200 + "]" * 200 + "}", r"x.jsonl:1: JSON nested deeper than 64 levels; refused"),
])
def test_json_records_are_bounded_and_hold_only_text(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=message):
        list(json_objects(path))


def test_a_surrogate_pair_and_escaped_backslashes_are_text(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"text": "\\ud83d\\ude00 and \\\\ud800"}\n', encoding="utf-8")
    assert [value for _, value in json_objects(path)] == [{"text": "\U0001F600 and \\ud800"}]


def test_a_record_longer_than_the_limit_is_refused() -> None:
    assert record_fault("[1, 2, 3]", max_chars=5) == "a JSON record of 9 characters; refused (the limit is 5)"
    assert record_fault("[1]") == ""
