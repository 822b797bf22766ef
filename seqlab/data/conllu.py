"""Streaming reader for CoNLL-U files (Universal Dependencies).

Ten TAB-separated fields per line (:data:`CONLLU_FIELDS`), ``#`` comment lines, a blank line after each
sentence. What a tagger reads are the *syntactic words*, the lines with an integer ID: a multiword token
(``3-4  don't``) is read as the words that follow it (``do``, ``n't``), and empty nodes (``8.1``, enhanced
dependencies only) are skipped, as the UD evaluation script scores UPOS and XPOS. ``# text`` is kept, with
every word's character offsets into it (the words of a multiword token share that token's offsets).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator

from seqlab.core.errors import DataFormatError
from seqlab.core.paths import require_file
from seqlab.data.conll import ColumnSentence, numbered_lines

CONLLU_FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")
_WORD = re.compile(r"[1-9][0-9]*\Z")
_RANGE = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)\Z")
_EMPTY = re.compile(r"[0-9]+\.[1-9][0-9]*\Z")


class _Builder:
    """One sentence being read: its words' fields and line numbers, its comments and multiword tokens."""

    def __init__(self) -> None:
        self.rows: list[list[str]] = []
        self.lines: list[int] = []
        self.text: str | None = None
        self.sent_id: str | None = None
        self.tokens: dict[int, tuple[int, str]] = {}  # first word id -> (last word id, surface form)
        self.ranges: dict[int, int] = {}  # last word id of each multiword token -> the line that opened it

    def check_ranges(self, path: str) -> None:
        """A multiword token whose last word never came is a DataFormatError naming the line of the range."""
        missing = {last: line for last, line in self.ranges.items() if last > len(self.rows)}
        if missing:
            last, line = min(missing.items(), key=lambda item: item[1])
            raise DataFormatError(path, line, f"multiword token ends at word {last}, but the sentence has "
                                              f"{len(self.rows)} words (expected words up to {last})")

    def sentence(self, path: str) -> ColumnSentence:
        columns = {name: tuple(row[i] for row in self.rows) for i, name in enumerate(CONLLU_FIELDS)}
        extra: dict[str, object] = {"lines": tuple(self.lines), "sent_id": self.sent_id, "text": self.text}
        if self.text is not None:
            extra["offsets"] = _offsets(self.text, columns["form"], self.tokens)
        return ColumnSentence(columns, path=path, line=self.lines[0], extra=extra)


def _offsets(text: str, forms: tuple[str, ...], tokens: dict[int, tuple[int, str]]) -> tuple[tuple[int, int], ...] | None:
    """Each word's ``[start, end)`` in ``text``, found left to right; None where the words do not spell the text."""
    out: list[tuple[int, int]] = []
    cursor, word = 0, 1
    while word <= len(forms):
        last, surface = tokens.get(word, (word, forms[word - 1]))
        start = text.find(surface, cursor)
        if start < 0 or text[cursor:start].strip():
            return None
        cursor = start + len(surface)
        out.extend([(start, cursor)] * (last - word + 1))
        word = last + 1
    return tuple(out)


def read_conllu(path: str | os.PathLike[str], encoding: str = "utf-8") -> Iterator[ColumnSentence]:
    """Stream the sentences of a CoNLL-U file, columns named by :data:`CONLLU_FIELDS` (syntactic words only).

    Malformed lines (a field count other than 10, an ID that is not a word, range or empty node, word IDs
    not counting 1, 2, 3, ...) are a :class:`DataFormatError` naming the file and line."""
    path = Path(path)
    require_file(path)
    where = str(path)
    current = _Builder()
    for number, text in numbered_lines(path, encoding):
        if not text.strip():
            current.check_ranges(where)
            if current.rows:
                yield current.sentence(where)
            current = _Builder()
            continue
        if text.startswith("#"):
            key, sep, value = text[1:].partition("=")
            if sep and key.strip() in ("text", "sent_id"):
                setattr(current, key.strip(), value.strip())
            continue
        fields = text.split("\t")
        if len(fields) != len(CONLLU_FIELDS):
            raise DataFormatError(where, number, f"expected {len(CONLLU_FIELDS)} TAB-separated CoNLL-U fields "
                                                 f"{list(CONLLU_FIELDS)}, found {len(fields)}: {text!r}")
        ident = fields[0]
        if _EMPTY.match(ident):
            continue  # an empty node: enhanced dependencies only, no token in the text
        span = _RANGE.match(ident)
        if span:
            first, last = int(span.group(1)), int(span.group(2))
            if first != len(current.rows) + 1 or last <= first:
                raise DataFormatError(where, number, f"multiword token {ident!r}: expected the range "
                                                     f"{len(current.rows) + 1}-N after word {len(current.rows)}")
            current.tokens[first] = (last, fields[1])
            current.ranges[last] = number
            continue
        if not _WORD.match(ident):
            raise DataFormatError(where, number, f"ID {ident!r}: expected a word number, a range (3-4) or an "
                                                 "empty node (8.1)")
        if int(ident) != len(current.rows) + 1:
            raise DataFormatError(where, number, f"word ID {ident}: expected {len(current.rows) + 1} (word IDs "
                                                 "count 1, 2, 3, ... in each sentence)")
        if not fields[1]:
            raise DataFormatError(where, number, "empty FORM: every word needs its form")
        current.rows.append(fields)
        current.lines.append(number)
    current.check_ranges(where)
    if current.rows:
        yield current.sentence(where)
