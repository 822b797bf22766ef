"""Which reader reads a file: the ``data.format`` names of :mod:`seqlab.data.formats`, and detection.

:func:`detect_format` tells formats apart by extension and, where an extension is shared, by content:

* a folder holding ``.ann`` files, an ``.ann`` file, or an ``x.txt`` with ``x.ann`` beside it: ``brat``;
* ``.conllu``: ``conllu``;
* ``.jsonl``, ``.json`` or ``.ndjson``: a JSON list (first character ``[``) is a Label Studio export
  (``labelstudio``); JSON lines whose first object has ``tokens`` are ``hf``; other JSON lines are span JSONL
  (``jsonl``), as is such a file that is missing or unreadable (its reader says why);
* anything else: CoNLL columns (``conll``).

A relative path that is not found from the working directory is looked for under the data folder, as config
paths are (:func:`seqlab.core.paths.resolve_data_path`).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Iterator

from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.data.conll import UTF8_BOM, ColumnSentence
from seqlab.data.formats.align import COLUMNS
from seqlab.data.formats.brat import ANN, TXT, read_brat
from seqlab.data.formats.hf import read_hf_jsonl
from seqlab.data.formats.jsonl import read_span_jsonl
from seqlab.data.formats.labelstudio import read_label_studio
from seqlab.data.formats.spert import read_spert_tags

Reader = Callable[[Path], Iterator[ColumnSentence]]
#: The readers by ``data.format`` name (CoNLL and CoNLL-U are read by :mod:`seqlab.data.conll` and
#: :mod:`seqlab.data.conllu`). Offset formats read leniently: what cannot be aligned is logged, not fatal.
READERS: dict[str, Reader] = {
    "brat": read_brat,
    "jsonl": read_span_jsonl,
    "labelstudio": read_label_studio,
    "hf": read_hf_jsonl,
    "spert": read_spert_tags,
}
#: The formats of character spans, which the readers write as IOB2 tags.
SPAN_FORMATS = ("brat", "jsonl", "labelstudio", "spert")
#: The columns, word column and tag column of every format in :data:`READERS`.
LAYOUT = (COLUMNS, COLUMNS[0], COLUMNS[1])
JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
_SNIFF_BYTES = 1 << 16


def _located(path: str | os.PathLike[str]) -> Path:
    """``path``, or where the data folder has it when it is relative and not here."""
    found = Path(path)
    if found.exists() or found.is_absolute():
        return found
    try:
        return resolve_data_path(str(path), key="data", must_exist=False)
    except SeqlabError:  # no data folder
        return found


def _json_kind(path: Path) -> str:
    """``labelstudio``, ``hf`` or ``jsonl`` by the first characters of a JSON file."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES).removeprefix(UTF8_BOM).lstrip()
    except OSError:
        return "jsonl"
    if head.startswith(b"["):
        return "labelstudio"
    try:
        first = json.loads(head.split(b"\n", 1)[0])
    except ValueError:
        return "jsonl"
    return "hf" if isinstance(first, dict) and "tokens" in first else "jsonl"


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of ``path`` (module docstring for the rules): a name of :data:`READERS`, ``conllu`` or
    ``conll``."""
    where = _located(path)
    suffix = where.suffix.lower()
    if where.is_dir():
        return "brat" if next(where.glob(f"*{ANN}"), None) is not None else "conll"
    if suffix == ANN or (suffix == TXT and where.with_suffix(ANN).is_file()):
        return "brat"
    if suffix == ".conllu":
        return "conllu"
    if suffix in JSON_SUFFIXES:
        return _json_kind(where)
    return "conll"
