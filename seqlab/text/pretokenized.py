"""Pre-tokenized input for ``seqlab tag``: one sentence per line with its tokens separated by spaces
(``--tokenized``), or the sentences of a CoNLL or CoNLL-U file (``--input-format``; labels in it are ignored).

Each yields token lists, which :meth:`seqlab.tagging.api.SequenceTagger.tag_many` tags as they stand, so the tokens
are written back exactly. A CoNLL file's token is its first column; a CoNLL-U file's are its syntactic words.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from seqlab.core.errors import SeqlabError
from seqlab.data.conll import read_conll
from seqlab.data.conllu import read_conllu
from seqlab.data.encoding import DEFAULT_ENCODING

#: What ``--input-format`` takes: raw text lines, space-separated tokens, or a column file.
INPUT_FORMATS = ("auto", "text", "tokenized", "conll", "conllu")
#: File name endings ``--input-format auto`` reads as column files; anything else is text.
EXTENSIONS = {".conll": "conll", ".conllu": "conllu"}


def input_format(file: str | None, given: str, tokenized: bool) -> str:
    """The input format: ``--tokenized``, ``--input-format`` or, by default, the file name's ending."""
    if tokenized and given not in ("auto", "tokenized"):
        raise SeqlabError(f"--tokenized reads one sentence per line; it cannot be combined with --input-format {given}")
    if tokenized:
        return "tokenized"
    if given != "auto":
        return given
    return EXTENSIONS.get(Path(file).suffix.lower(), "text") if file not in (None, "-") else "text"


def token_lines(lines: Iterable[str]) -> Iterator[list[str]]:
    """Each line's tokens (split at whitespace; an empty line is an empty sentence)."""
    for line in lines:
        yield line.split()


def file_sentences(file: str | None, fmt: str, encoding: str = DEFAULT_ENCODING) -> Iterator[list[str]]:
    """The token lists of a CoNLL (first column) or CoNLL-U (FORM of each word) file in ``encoding``."""
    if file in (None, "-"):
        raise SeqlabError(f"--input-format {fmt} reads a file; name it (standard input is read as text)")
    if fmt == "conllu":
        return (list(s.columns["form"]) for s in read_conllu(file, encoding))
    return (list(s.columns["word"]) for s in read_conll(file, ("word",), min_columns=1, encoding=encoding))
