"""JSON from outside (a model file's members, a run directory's files, a request body) parsed within bounds:
nesting depth is checked in one linear pass before the parser recurses, so ``[[[[...`` 100,000 deep is a one-line
refusal naming the file, not a RecursionError.

It sits on the ground floor so that every floor reads JSON the same way: :mod:`seqlab.core.rundir` (a run's
``features.json`` and ``encoder.json``), :mod:`seqlab.data.vocab` (``vocabs.json``), :mod:`seqlab.apps.model_file`
(a model file's manifest, vocabularies and fitted features) and ``seqlab serve``'s request bodies
(:mod:`seqlab.serve.app`).
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

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # a JSON string (unrolled: linear, no backtracking)
_BRACKET = re.compile(rb"[\[\]{}]")
_OPENS = frozenset(b"[{")


def too_deep(data: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``data`` (JSON text) opens more than ``limit`` arrays or objects inside one another, brackets in
    strings not counted; stops at the first bracket past the limit."""
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub(b'""', data)):
        depth += 1 if match.group()[0] in _OPENS else -1
        if depth > limit:
            return True
    return False


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
