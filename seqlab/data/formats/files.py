"""Reading the files of :mod:`seqlab.data.formats`: a UTF-8 text whole, JSON lines, integer offsets; every
failure a :class:`DataFormatError` naming the file and line."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

from seqlab.core.errors import DataFormatError
from seqlab.core.paths import require_file
from seqlab.data.conll import UTF8_BOM, numbered_lines


def read_text(path: str | os.PathLike[str], *, keep_bom: bool = False) -> str:
    """The whole of a UTF-8 file, newlines untranslated (so character offsets count every ``\\r``); a leading
    byte-order mark is dropped unless ``keep_bom`` (brat counts it as a character of a document's text)."""
    path = require_file(path)
    raw = path.read_bytes()
    if not keep_bom:
        raw = raw.removeprefix(UTF8_BOM)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataFormatError(str(path), raw.count(b"\n", 0, err.start) + 1,
                              f"not valid UTF-8 (byte {raw[err.start]:#04x})") from None


def json_objects(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSONL file; a line that is not a JSON object is a
    DataFormatError naming the file and line."""
    path = require_file(path)
    for number, line in numbered_lines(Path(path)):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataFormatError(str(path), number, f"not JSON: {err.msg} (column {err.colno})") from None
        if not isinstance(value, dict):
            raise DataFormatError(str(path), number, f"expected a JSON object per line, got {type(value).__name__}")
        yield number, value


def integer(value: object, what: str, path: str, line: int) -> int:
    """``value`` if it is an integer (not a bool), else a DataFormatError saying what ``what`` should be."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise DataFormatError(path, line, f"{what}: expected an integer character offset, got {value!r}")
    return value
