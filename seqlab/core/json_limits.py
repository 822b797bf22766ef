"""JSON from outside (a model file's members, a run directory's files, a request body) parsed within bounds:
nesting depth is checked in one linear pass before the parser recurses, so ``[[[[...`` 100,000 deep is a one-line
refusal naming the file, not a RecursionError.

It sits on the ground floor so that every floor reads JSON the same way: :mod:`seqlab.core.rundir` (a run's
``features.json`` and ``encoder.json``), :mod:`seqlab.data.vocab` (``vocabs.json``), :mod:`seqlab.apps.model_file`
(a model file's manifest, vocabularies and fitted features) and ``seqlab serve``'s request bodies
(:mod:`seqlab.serve.app`). The data readers (span JSONL, Label Studio, Hugging Face JSONL, relation JSONL) bound
each record the same way with :func:`record_fault` and :func:`lone_surrogate`: a record longer than
:data:`MAX_JSON_RECORD_CHARS`, nested deeper than :data:`MAX_JSON_DEPTH`, or holding a lone UTF-16 surrogate
(``"\\ud800"`` is valid JSON but no text: it cannot be written as UTF-8) is refused.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from seqlab.core.errors import SeqlabError

#: Deepest nesting accepted: a model file's JSON is at most 5 levels deep, a request body 3.
MAX_JSON_DEPTH = 64

#: Longest JSON record (a JSONL line, a Label Studio export) a data reader parses, in characters.
MAX_JSON_RECORD_CHARS = 1 << 28
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # where a lone surrogate could hide
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # a JSON string (unrolled: linear, no backtracking)
_BRACKET = re.compile(rb"[\[\]{}]")
_OPENS = frozenset(b"[{")


def too_deep(data: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``data`` (JSON text) opens more than ``limit`` arrays or objects inside one another, brackets in
    strings not counted; stops at the first bracket past the limit."""
    return deep_at(data, limit) >= 0


def deep_at(data: bytes, limit: int = MAX_JSON_DEPTH) -> int:
    """The line (from 1) of the first bracket of ``data`` (JSON text) nested past ``limit``, or -1."""
    depth, line, counted = 0, 1, 0
    blanked = _STRING.sub(lambda m: b'"' + b"\n" * m.group().count(b"\n") + b'"', data)  # newlines kept
    for match in _BRACKET.finditer(blanked):
        depth += 1 if match.group()[0] in _OPENS else -1
        if depth > limit:
            return line + blanked.count(b"\n", counted, match.start())
    return -1


def record_fault(text: str, *, limit: int = MAX_JSON_DEPTH, max_chars: int = MAX_JSON_RECORD_CHARS) -> str:
    """Why the JSON record ``text`` is refused before it is parsed (too long, too deep), or ``""``."""
    if len(text) > max_chars:
        return f"a JSON record of {len(text)} characters; refused (the limit is {max_chars})"
    at = deep_at(text.encode("utf-8", "surrogatepass"), limit)
    if at >= 0:
        return f"JSON nested deeper than {limit} levels{f' (line {at} of the record)' if at > 1 else ''}; refused"
    return ""


def lone_surrogate(text: str, value: Any) -> str:
    """Why the parsed ``value`` of ``text`` is refused for a lone surrogate in one of its strings, or ``""``."""
    if not _SURROGATE_ESCAPE.search(text):
        return ""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as err:
        return (f"a string holds the lone UTF-16 surrogate {err.object[err.start]!r} (valid JSON, but not text: "
                f"expected a surrogate pair or an astral character)")
    return ""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} given twice")
        out[key] = value
    return out


def load_json(data: bytes, where: str, *, limit: int = MAX_JSON_DEPTH, unique_keys: bool = False) -> Any:
    """``data`` (UTF-8 JSON) parsed, or a :class:`SeqlabError` starting with ``where``: not UTF-8, nested deeper
    than ``limit``, not valid JSON (line and column), or (``unique_keys``) an object giving a key twice."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SeqlabError(f"{where}: not valid UTF-8 (byte {err.object[err.start]:#04x} at offset {err.start})"
                          ) from None
    if too_deep(data, limit):
        raise SeqlabError(f"{where}: JSON nested deeper than {limit} levels; refused")
    try:
        return json.loads(text, object_pairs_hook=_unique if unique_keys else None)
    except json.JSONDecodeError as err:
        raise SeqlabError(f"{where}:{err.lineno}:{err.colno}: not valid JSON: {err.msg}") from None
    except (ValueError, RecursionError) as err:  # a key given twice; a depth the scan missed
        raise SeqlabError(f"{where}: refused: {err}") from None


def read_json(path: str | os.PathLike[str], *, limit: int = MAX_JSON_DEPTH, unique_keys: bool = False) -> Any:
    """The JSON file at ``path`` parsed as :func:`load_json` parses bytes; every failure (missing, unreadable, not
    UTF-8, too deep, not JSON) is a one-line :class:`SeqlabError` starting with the file's path."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise SeqlabError(f"{path}: no such file") from None
    except OSError as err:
        raise SeqlabError(f"{path}: cannot be read: {err.strerror or err}") from None
    return load_json(data, str(path), limit=limit, unique_keys=unique_keys)
