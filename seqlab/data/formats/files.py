"""Reading the files of :mod:`seqlab.data.formats`: a UTF-8 text whole, JSON lines, integer offsets; every
failure a :class:`DataFormatError` naming the file and line."""
from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any, Iterator

from seqlab.core.errors import DataFormatError
from seqlab.core.json_limits import lone_surrogate, record_fault
from seqlab.core.paths import require_file
from seqlab.data.conll import UTF8_BOM, numbered_lines
from seqlab.data.encoding import DEFAULT_ENCODING, decode_text, is_utf8

#: How much of a JSON file is read to tell its format.
SNIFF_BYTES = 1 << 16
JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")


def json_suffix(path: Path) -> bool:
    """Whether ``path`` is named as JSON or JSON lines."""
    return path.suffix.lower() in JSON_SUFFIXES


def read_text(path: str | os.PathLike[str], *, keep_bom: bool = False, encoding: str = DEFAULT_ENCODING) -> str:
    """The whole of a text file in ``encoding`` (UTF-8 by default), newlines untranslated (so character offsets
    count every ``\\r``); a leading byte-order mark is dropped unless ``keep_bom`` (brat counts it as a character
    of a document's text)."""
    path = require_file(path)
    raw = path.read_bytes()
    if not keep_bom and is_utf8(encoding):
        raw = raw.removeprefix(UTF8_BOM)
    text = decode_text(raw, encoding, str(path))
    return text if keep_bom or is_utf8(encoding) else text.removeprefix("\ufeff")


def json_objects(path: str | os.PathLike[str],
                 encoding: str = DEFAULT_ENCODING) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSONL file in ``encoding``; a line that is not a
    JSON object is a DataFormatError naming the file and line."""
    path = require_file(path)
    for number, line in numbered_lines(Path(path), encoding):
        if not line.strip():
            continue
        value = json_record(line, str(path), number)
        if not isinstance(value, dict):
            raise DataFormatError(str(path), number, f"expected a JSON object per line, got {type(value).__name__}")
        yield number, value


def json_head(path: Path) -> object:
    """What a JSON file opens with, for telling formats apart: ``[`` (a JSON list), the first line's JSON value,
    or None (not JSON, or not readable: the reader that is tried says why). Read once per version of the file,
    however many formats ask."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return _json_head(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _json_head(path: str, mtime_ns: int, size: int) -> object:
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES).removeprefix(UTF8_BOM).lstrip()
    except OSError:
        return None
    if head.startswith(b"["):
        return "["
    try:
        return json.loads(head.split(b"\n", 1)[0])
    except (ValueError, RecursionError):  # not JSON, or nested too deep: the reader says which, in one line
        return None


def json_record(text: str, path: str, line: int) -> Any:
    """One JSON record (a JSONL line) parsed within :mod:`seqlab.core.json_limits`' bounds (length, depth, no lone
    surrogate); every refusal a DataFormatError naming ``path`` and ``line``."""
    fault = record_fault(text)
    if fault:
        raise DataFormatError(path, line, fault)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataFormatError(path, line, f"not JSON: {err.msg} (column {err.colno})") from None
    except RecursionError:  # a depth the scan missed
        raise DataFormatError(path, line, "JSON nested too deep; refused") from None
    fault = lone_surrogate(text, value)
    if fault:
        raise DataFormatError(path, line, fault)
    return value


def json_list(path: str | os.PathLike[str], encoding: str = DEFAULT_ENCODING, *,
              expected: str = "a JSON list", item: str = "element") -> Iterator[tuple[int, Any]]:
    """``(line number, element)`` for each element of the JSON list that is the whole of ``path`` (Label Studio's
    export, SpERT's sentences), parsed within :mod:`seqlab.core.json_limits`' bounds; ``expected`` and ``item``
    say in errors what the file and each element should be."""
    text = read_text(path, encoding=encoding)
    fault = record_fault(text)
    if fault:
        raise DataFormatError(str(path), 1, fault)
    decoder = json.JSONDecoder()
    at = _skip(text, 0)
    if not text.startswith("[", at):
        raise DataFormatError(str(path), text.count("\n", 0, at) + 1, f"expected {expected}")
    at = _skip(text, at + 1)
    line, counted = 1, 0  # the line of text[counted]
    while not text.startswith("]", at):
        line, counted = line + text.count("\n", counted, at), at
        if at == len(text):
            raise DataFormatError(str(path), line, "the list is not closed")
        try:
            value, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as err:
            raise DataFormatError(str(path), err.lineno, f"not JSON: {err.msg} (column {err.colno})") from None
        fault = lone_surrogate(text[counted:at], value)
        if fault:
            raise DataFormatError(str(path), line, fault)
        yield line, value
        at = _skip(text, at)
        if text.startswith(",", at):
            at = _skip(text, at + 1)
        elif not text.startswith("]", at):
            raise DataFormatError(str(path), line + text.count("\n", counted, at),
                                  f"expected ',' or ']' after a {item}")


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def integer(value: object, what: str, path: str, line: int) -> int:
    """``value`` if it is an integer (not a bool), else a DataFormatError saying what ``what`` should be."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise DataFormatError(path, line, f"{what}: expected an integer character offset, got {value!r}")
    return value
