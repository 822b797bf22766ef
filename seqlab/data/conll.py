"""Streaming reader and writer for CoNLL column files.

One token per line, columns separated by spaces or tabs, sentences separated by
blank lines, and ``-DOCSTART-`` lines marking document boundaries (CoNLL-2000,
CoNLL-2003, OntoNotes in CoNLL form); a line whose first field is ``-X-`` ends a sentence and is no token,
as conlleval (and ``seqlab score conll``) reads it. Columns are named by the caller, e.g.
``("word", "pos", "chunk", "ner")``; a column named ``_`` is skipped (``data.columns: [word, _, _, ner]``
in a config, ``seqlab eval --columns word,_,_,ner``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from seqlab.core.atomic import atomic_open
from seqlab.core.paths import require_file
from seqlab.data.encoding import DEFAULT_ENCODING, decode_line, decode_text, is_utf8
from seqlab.core.errors import DataFormatError, SeqlabError

DOCSTART = "-DOCSTART-"
BOUNDARY = "-X-"  # conlleval's sentence boundary: a line whose first field this is is no token
UTF8_BOM = b"\xef\xbb\xbf"
SKIP = "_"  # the name of a column that is read past


def named_columns(columns: Sequence[str], *, source: str = "columns") -> tuple[str, ...]:
    """``columns`` checked: names unique, except ``_`` (a column to skip), which may repeat; the names of
    ``data.columns`` and of ``seqlab eval --columns`` (``source`` names which in the error)."""
    names = tuple(c.strip() for c in columns)
    named = [c for c in names if c != SKIP]
    if not all(names) or len(set(named)) != len(named):
        raise SeqlabError(f"{source}: expected one name per column (unique; _ skips a column), got {list(names)}")
    return names


@dataclass(frozen=True)
class ColumnSentence:
    """One sentence of a column file (CoNLL, CoNLL-U): a tuple of values per named column, and where it came
    from; the data-level record (the API's tagged sentence is :class:`seqlab.tagging.document.Sentence`)."""

    columns: dict[str, tuple[str, ...]]
    path: str = ""
    line: int = 0  # line number of the sentence's first token (1-based)
    doc_start: bool = False  # first sentence after a -DOCSTART- line
    extra: dict[str, object] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __getitem__(self, column: str) -> tuple[str, ...]:
        try:
            return self.columns[column]
        except KeyError:
            raise SeqlabError(
                f"{self.path}: no column {column!r}; columns are {list(self.columns)}"
            ) from None


def split_fields(line: str) -> list[str]:
    """The fields of a line: split on tabs when it has any (so a token may be a space, a no-break space or
    hold one, as in TAB-separated files), else on any run of whitespace. A TAB-separated line that opens with a
    TAB has an empty first field (``<TAB>O``: an empty token, as some public Twitter files hold)."""
    if "\t" in line:
        fields = [f.strip(" ") or f for f in line.split("\t") if f]  # a field of spaces only is a token
        return [""] + fields if fields and line.startswith("\t") else fields
    return line.split()


def written_fields(line: str) -> list[str]:
    """The fields of a TAB-separated line exactly as written (spaces at their edges kept), as :func:`split_fields`
    counts them; what a token is written back as (:func:`column_separator`)."""
    fields = [f for f in line.split("\t") if f]
    return [""] + fields if fields and line.startswith("\t") else fields


def is_plain_field(value: str) -> bool:
    """Whether ``value`` survives a space-separated line as it is: not empty, no whitespace, printable."""
    return bool(value) and value.isprintable() and not any(c.isspace() for c in value)


_LINE_BREAKS = str.maketrans({"\t": " ", "\n": " ", "\r": " ", "\v": " ", "\f": " ", "\x1c": " ", "\x1d": " ",
                              "\x1e": " ", "\x85": " ", "\u2028": " ", "\u2029": " "})


def as_field(value: str) -> str:
    """``value`` as one field of a TAB-separated line: a TAB or line break in it (a token read from JSON may hold
    one) becomes a space; anything else is kept as it is."""
    return value.translate(_LINE_BREAKS)


def column_separator(rows: Iterable[Iterable[str]]) -> str:
    """``" "`` when every value of ``rows`` is a plain field (:func:`is_plain_field`), else ``"\\t"``: an empty,
    whitespace or unprintable token is written TAB-separated, so it reads back as the same one field."""
    return " " if all(is_plain_field(v) for row in rows for v in row) else "\t"


def numbered_lines(path: Path, encoding: str = DEFAULT_ENCODING) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) from a text file in ``encoding`` (UTF-8 by default), with a clear error on bad
    bytes (:mod:`seqlab.data.encoding`: it names the encoding the file most likely is); a byte-order mark opening
    the file (as Windows editors save UTF-8) is not part of its first line."""
    if not is_utf8(encoding):
        yield from _other_encoding_lines(path, encoding)
        return
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                raw = raw.removeprefix(UTF8_BOM)
            yield number, decode_line(raw, "utf-8", str(path), number).rstrip("\r\n")


def _other_encoding_lines(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    """The lines of a file in an encoding other than UTF-8 (Latin-1, UTF-16, ...), decoded by Python's codec."""
    with open(path, "rb") as handle:
        raw = handle.read()
    lines = decode_text(raw, encoding, str(path)).removeprefix("\ufeff").split("\n")
    if lines[-1] == "":  # the newline ending the last line opens no line of its own
        lines.pop()
    for number, line in enumerate(lines, start=1):
        yield number, line.rstrip("\r")


def read_conll(
    path: str | os.PathLike[str],
    columns: Sequence[str],
    *,
    min_columns: int | None = None,
    encoding: str = DEFAULT_ENCODING,
) -> Iterator[ColumnSentence]:
    """Stream sentences from a CoNLL column file (in ``encoding``: :func:`numbered_lines`).

    Every token line must have exactly ``len(columns)`` fields (or at least
    ``min_columns`` when given, extra fields being ignored). ``-DOCSTART-`` lines
    are skipped; the next sentence is flagged ``doc_start``.
    """
    path = Path(path)
    require_file(path)
    names = named_columns(columns)
    needed = len(names) if min_columns is None else min_columns
    rows: list[list[str]] = []
    written: dict[int, list[str]] = {}  # row -> its fields as written, where spaces at their edges were cut
    first_line = 0
    doc_start = False
    for number, text in numbered_lines(path, encoding):
        fields = split_fields(text)
        if not fields or fields[0] == BOUNDARY:
            if rows:
                yield _sentence(rows, names, str(path), first_line, doc_start, written)
                rows, doc_start, written = [], False, {}
            continue
        if fields[0] == DOCSTART:
            if rows:
                yield _sentence(rows, names, str(path), first_line, doc_start, written)
                rows, written = [], {}
            doc_start = True
            continue
        if "\t" in text and " " in text and written_fields(text) != fields:
            written[len(rows)] = written_fields(text)[: len(names)]
        if len(fields) < needed or (min_columns is None and len(fields) != needed):
            example = ", ".join(("word", *(f"col{i}" for i in range(2, len(fields))), "ner")[: max(2, len(fields))])
            raise DataFormatError(
                str(path), number, f"expected {needed} columns {list(names)}, found {len(fields)}: {text!r}; if the "
                f"file has {len(fields)} columns, name them (data.columns: [{example}] in a config, "
                "--columns for eval)"
            )
        if not rows:
            first_line = number
        rows.append(fields[: len(names)])
    if rows:
        yield _sentence(rows, names, str(path), first_line, doc_start, written)


def _sentence(rows: list[list[str]], names: tuple[str, ...], path: str, line: int, doc_start: bool,
              written: dict[int, list[str]] | None = None) -> ColumnSentence:
    """The sentence of ``rows``; where some fields were written with spaces at their edges (``written``),
    ``extra["written"]`` holds those columns as written (``{column: values}``)."""
    cols = {name: tuple(row[i] if i < len(row) else "" for row in rows) for i, name in enumerate(names)
            if name != SKIP}
    extra: dict[str, object] = {}
    if written:
        as_written = [written.get(k, row) for k, row in enumerate(rows)]
        extra["written"] = {name: tuple(row[i] if i < len(row) else "" for row in as_written)
                            for i, name in enumerate(names) if name != SKIP and any(
                                len(row) > i and row[i] != cols[name][k] for k, row in enumerate(as_written))}
    return ColumnSentence(cols, path=path, line=line, doc_start=doc_start, extra=extra)


def format_sentence(rows: Iterable[Sequence[str]], sep: str = " ") -> str:
    """Format one sentence's rows as column lines followed by a blank line."""
    return "".join(sep.join(row) + "\n" for row in rows) + "\n"


def write_conll(
    path: str | os.PathLike[str],
    sentences: Iterable[Sequence[Sequence[str]]],
    *,
    sep: str = " ",
    docstart: bool = False,
) -> None:
    """Write sentences (each a list of rows of column values) atomically."""
    with atomic_open(path) as out:
        if docstart:
            out.write(f"{DOCSTART}{sep}-X-{sep}O\n\n")
        for rows in sentences:
            out.write(format_sentence(rows, sep))
