"""The one table of labelled-data formats: every :class:`~seqlab.data.formats.format.Format` seqlab reads or
writes, each defined in its own module, and detection.

Training (``data.format``, :func:`seqlab.data.dataset.read_split`), ``seqlab eval``, ``seqlab convert`` and
``seqlab tag --format`` all go through :data:`TABLE`; a new format is one module defining its ``FORMAT`` and one
line here.

:func:`detect_format` asks the formats in table order and takes the first that recognises the file:

* a folder holding ``.ann`` files, an ``.ann`` file, or an ``x.txt`` with ``x.ann`` beside it: ``brat``;
* ``.conllu``: ``conllu``;
* ``.jsonl``, ``.json`` or ``.ndjson``: a JSON list whose first object has ``tokens`` and ``entities`` is
  SpERT-style JSON (``spert``, CoNLL04 as SpERT ships it); another JSON list (first character ``[``) is a Label
  Studio export (``labelstudio``); JSON lines whose first object has ``sentences``, or ``tokens``, ``offsets`` and ``labels``, are seqlab's
  own (``seqlab``: what ``seqlab tag --format jsonl`` and ``seqlab convert --to jsonl`` write); other objects with
  ``tokens`` are ``hf``; other JSON lines are span JSONL (``jsonl``), as is such a file that is missing or
  unreadable (its reader says why);
* anything else: CoNLL columns (``conll``).

A relative path that is not found from the working directory is looked for under the data folder, as config
paths are (:func:`seqlab.core.paths.resolve_data_path`).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Sequence

from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.data.conll import ColumnSentence
from seqlab.data.encoding import DEFAULT_ENCODING
from seqlab.data.formats import brat, columns, conllu_writer, hf, html, inline, jsonl, labelstudio, seqlab_jsonl, spert
from seqlab.data.formats.align import COLUMNS, AlignmentReport
from seqlab.data.formats.files import JSON_SUFFIXES  # noqa: F401  (the suffixes seqlab.data.relations reads too)
from seqlab.data.formats.format import Format

#: Every format, in the order detection asks them (CoNLL, which has no ``detect``, reads the rest; seqlab's own
#: and HF JSONL before span JSONL, which takes any other JSON lines) and ``seqlab tag --format`` lists them.
TABLE: tuple[Format, ...] = (
    columns.FORMAT,
    seqlab_jsonl.FORMAT,
    inline.FORMAT,
    conllu_writer.FORMAT,
    brat.FORMAT,
    spert.FORMAT,
    html.FORMAT,
    labelstudio.FORMAT,
    hf.FORMAT,
    jsonl.FORMAT,
)
BY_NAME: dict[str, Format] = {f.name: f for f in TABLE}
#: The ``data.format`` names: the formats seqlab reads.
READ_FORMATS = tuple(f.name for f in TABLE if f.read is not None)
#: The ``seqlab convert --to`` names: the formats written from sentences.
WRITE_FORMATS = tuple(f.name for f in TABLE if f.write is not None)
#: ``seqlab tag --format``: the formats tagged documents are written in, by the name the option gives them.
OUTPUTS: dict[str, Format] = {f.output: f for f in TABLE if f.output}
#: The formats of character spans, which the readers write as IOB2 tags.
SPAN_FORMATS = tuple(f.name for f in TABLE if f.spans)
#: The formats read as the columns ``word`` and ``ner`` whatever the config names (all but column files).
WORD_NER_FORMATS = tuple(name for name in READ_FORMATS if name not in ("conll", "conllu"))
#: The columns, word column and tag column of every format in :data:`WORD_NER_FORMATS`.
LAYOUT = (COLUMNS, COLUMNS[0], COLUMNS[1])
FALLBACK = "conll"


def located(path: str | os.PathLike[str]) -> Path:
    """``path``, or where the data folder has it when it is relative and not here."""
    found = Path(path)
    if found.exists() or found.is_absolute():
        return found
    try:
        return resolve_data_path(str(path), key="data", must_exist=False)
    except SeqlabError:  # no data folder
        return found


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of ``path`` (module docstring for the rules): a name of :data:`READ_FORMATS`."""
    where = located(path)
    return next((f.name for f in TABLE if f.detect is not None and f.detect(where)), FALLBACK)


def format_named(name: str, what: str = "format") -> Format:
    """The format called ``name``; an unknown name is a one-line error listing the known ones."""
    if name not in BY_NAME:
        raise SeqlabError(f"{what}: expected one of {list(BY_NAME)}, got {name!r}")
    return BY_NAME[name]


def read_format(path: str | os.PathLike[str], fmt: str = "auto", *, encoding: str = DEFAULT_ENCODING,
                columns: Sequence[str] | None = None, report: AlignmentReport | None = None,
                offsets: str = "auto") -> Iterator[ColumnSentence]:
    """The sentences of ``path`` read as format ``fmt`` (``auto``: :func:`detect_format`): text in ``encoding``,
    a column file's ``columns`` (None: the format's own), an offset format's alignment counted in ``report``
    (None: logged), its offsets in the unit ``offsets`` (:mod:`seqlab.data.formats.offsets`)."""
    found = format_named(detect_format(path) if fmt == "auto" else fmt)
    if found.read is None:
        raise SeqlabError(f"{path}: {found.name} is written, not read; expected one of {list(READ_FORMATS)}")
    return found.read(located(path), encoding=encoding, columns=columns, report=report, offsets=offsets)
