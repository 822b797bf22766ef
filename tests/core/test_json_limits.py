"""seqlab.core.json_limits: JSON from files and requests parsed within bounds, every refusal one line naming where."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqlab.core.errors import SeqlabError
from seqlab.core.json_limits import MAX_JSON_DEPTH, load_json, read_json, too_deep


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_depth_is_counted_outside_strings_and_stops_at_the_limit():
    assert not too_deep(nested(MAX_JSON_DEPTH)) and too_deep(nested(MAX_JSON_DEPTH + 1))
    assert not too_deep(json.dumps({"k": "[" * 1000, "e": '\\"[[[['}).encode())  # brackets in strings, escapes
    assert too_deep(b'{"a": {"b": [1]}}', limit=2) and not too_deep(b'{"a": {"b": 1}}', limit=2)


@pytest.mark.parametrize("data, message", [
    (nested(100_000), r"^x\.json: JSON nested deeper than 64 levels; refused$"),
    (b'{"a": 1,}', r"^x\.json:1:9: not valid JSON"),
    (b'"\xff"', r"^x\.json: not valid UTF-8 \(byte 0xff at offset 1\)$"),
])
def test_load_json_refuses_in_one_line_naming_where(data: bytes, message: str):
    with pytest.raises(SeqlabError, match=message) as info:
        load_json(data, "x.json")
    assert "\n" not in str(info.value)


def test_load_json_can_refuse_a_key_given_twice():
    assert load_json(b'{"a": 1, "a": 2}', "x") == {"a": 2}
    with pytest.raises(SeqlabError, match=r"^x: refused: key 'a' given twice$"):
        load_json(b'{"a": 1, "a": 2}', "x", unique_keys=True)


def test_read_json_names_the_file(tmp_path: Path):
    path = tmp_path / "state.json"
    with pytest.raises(SeqlabError, match=rf"^{path}: no such file$"):
        read_json(path)
    path.write_bytes(b'{"a": ' + nested(50_000) + b"}")
    with pytest.raises(SeqlabError, match=rf"^{path}: JSON nested deeper than 64 levels; refused$"):
        read_json(path)
    with pytest.raises(SeqlabError, match=rf"^{tmp_path}: cannot be read: Is a directory$"):
        read_json(tmp_path)
    path.write_text('{"a": [1, {"b": null}]}', encoding="utf-8")
    assert read_json(path) == {"a": [1, {"b": None}]}
