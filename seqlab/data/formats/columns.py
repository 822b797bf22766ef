"""CoNLL columns as a format (``data.format: conll``): read by :func:`seqlab.data.conll.read_conll`, written
``token tag`` by ``seqlab convert --to conll``, rendered ``token label`` by ``seqlab tag --format conll``.

A file whose columns are not named is read as ``token ... tag`` by the width of its first token line
(:func:`fitted_columns`). CoNLL has no ``detect``: it reads whatever no other format claims.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.data.conll import (DOCSTART, SKIP, ColumnSentence, column_separator, numbered_lines, read_conll,
                               split_fields, write_conll)
from seqlab.data.encoding import DEFAULT_ENCODING
from seqlab.data.formats.align import TAG, WORD
from seqlab.data.formats.format import Format


def fitted_columns(path: Path, encoding: str = DEFAULT_ENCODING) -> tuple[str, ...]:
    """``word ... ner``: the names of a CoNLL file's columns by the width of its first token line."""
    for number, text in numbered_lines(path, encoding):
        fields = split_fields(text)
        if fields and fields[0] != DOCSTART:
            if len(fields) < 2:
                raise DataFormatError(str(path), number, "expected a token and its tag (at least 2 columns), found 1")
            return (WORD, *(SKIP for _ in range(len(fields) - 2)), TAG)
    raise SeqlabError(f"{path}: no token lines")


def read_columns(path: Path, *, encoding: str = DEFAULT_ENCODING, columns: Sequence[str] | None = None,
                 report: object = None, offsets: str = "auto") -> Iterator[ColumnSentence]:
    """The sentences of a CoNLL file, its columns named ``columns`` (None: :func:`fitted_columns`)."""
    return read_conll(path, columns if columns is not None else fitted_columns(Path(path), encoding),
                      encoding=encoding)


def write_columns(path: Path, sentences: Iterable[ColumnSentence]) -> int:
    """Write ``token tag`` lines (TAB-separated when a token needs it), a ``-DOCSTART- O`` line before each
    document when the sentences come in documents, atomically; returns how many sentences."""
    rows = list(sentences)
    sep = column_separator(s[WORD] for s in rows)
    with_starts = any(s.doc_start for s in rows)

    def sentence_rows() -> Iterator[list[tuple[str, ...]]]:
        for s in rows:
            yield [(DOCSTART, "O")] if with_starts and s.doc_start else []
            yield list(zip(s[WORD], s[TAG]))

    write_conll(path, (r for r in sentence_rows() if r), sep=sep)
    return len(rows)


def render_columns(number: int, document: Any, token_labels: bool = False) -> str:
    """``seqlab tag --format conll``: ``token label`` lines, a blank line after each sentence."""
    return "".join("\n".join(map(" ".join, zip(s.tokens, s.labels))) + "\n\n" for s in document.sentences)


FORMAT = Format("conll", None, read_columns, write_columns, render_columns, output="conll")
