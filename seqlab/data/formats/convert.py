"""Converting labelled data between formats: what ``seqlab convert IN OUT --from FMT --to FMT`` does.

Read with the readers (CoNLL columns, CoNLL-U, brat, span JSONL, Label Studio, HF token JSONL), written with the
writers (CoNLL, span JSONL, brat, HF token JSONL), through sentences of the columns ``word`` and ``ner``:

* CoNLL: the columns are given (``word,_,_,ner``) or read as ``token ... tag`` by the first line's width;
  ``-DOCSTART-`` lines group sentences into documents (a file without them: one document per sentence), whose
  text, for the span formats, is the tokens joined by spaces and the sentences by newlines. CoNLL is written
  ``token tag`` (TAB-separated when a token is empty or holds whitespace), a ``-DOCSTART-`` line before each
  document, tags in the scheme asked for (default: as read).
* CoNLL-U: the words (FORM) with their tags from ``NER=`` in MISC where the first sentence has it (as
  ``seqlab tag --format conllu`` writes them), else UPOS; ``tag_column`` names another field.
* brat, span JSONL, Label Studio: character spans aligned to tokens (:mod:`seqlab.data.formats.align`); the
  alignment report (spans aligned, split, dropped, unaligned) is part of the result.

Spans round-trip between span JSONL, brat and CoNLL: labels and token extents unchanged, and between the two
offset formats text and character offsets unchanged too.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from seqlab.core.errors import SeqlabError
from seqlab.data.conll import (DOCSTART, SKIP, ColumnSentence, column_separator, named_columns, numbered_lines,
                               read_conll, split_fields, write_conll)
from seqlab.data.conllu import read_conllu
from seqlab.data.formats.align import TAG, WORD, AlignmentReport
from seqlab.data.formats.brat import read_brat, write_brat
from seqlab.data.formats.hf import read_hf_jsonl, write_hf_jsonl
from seqlab.data.formats.jsonl import read_span_jsonl, write_span_jsonl
from seqlab.data.formats.labelstudio import read_label_studio
from seqlab.data.formats.registry import detect_format
from seqlab.data.label_map import LabelMapper
from seqlab.data.labelling import SpanLabelling
from seqlab.data.schemes import convert as convert_tags, spans

READ_FORMATS = ("conll", "conllu", "brat", "jsonl", "labelstudio", "hf")
WRITE_FORMATS = ("conll", "jsonl", "brat", "hf")
#: The MISC attribute of a CoNLL-U word that holds a span tag.
NER_ATTRIBUTE = "NER"


@dataclass
class Conversion:
    """What a conversion read and wrote: sentences, documents (groups of sentences sharing a text), spans
    written, and the alignment report of an offset format (empty for token formats)."""

    source: str
    target: str
    sentences: int = 0
    spans: int = 0
    written: int = 0  # documents (jsonl, brat) or sentences (conll, hf) written
    report: AlignmentReport = field(default_factory=AlignmentReport)

    def summary(self) -> str:
        """One line of counts."""
        unit = "documents" if self.target in ("jsonl", "brat") else "sentences"
        return (f"read {self.sentences} sentences with {self.spans} spans ({self.source}), wrote {self.written} "
                f"{unit} ({self.target})")


def _conll_columns(path: Path, columns: Sequence[str] | None) -> tuple[str, ...]:
    """The names of a CoNLL file's columns: given (with ``word`` and ``ner`` among them), or ``word ... ner`` by
    the width of its first token line."""
    if columns is not None:
        names = named_columns(columns, source=f"--columns {','.join(columns)}")
        if WORD not in names or TAG not in names:
            raise SeqlabError(f"--columns {','.join(columns)}: name the token column {WORD} and the tag column "
                              f"{TAG} (_ skips a column)")
        return names
    for number, text in numbered_lines(path):
        fields = split_fields(text)
        if fields and fields[0] != DOCSTART:
            if len(fields) < 2:
                raise SeqlabError(f"{path}:{number}: expected a token and its tag (at least 2 columns), found 1")
            return (WORD, *(SKIP for _ in range(len(fields) - 2)), TAG)
    raise SeqlabError(f"{path}: no token lines")


def _documents(sentences: Iterable[ColumnSentence], stem: str) -> Iterator[ColumnSentence]:
    """CoNLL sentences with the offsets of a document text: a ``-DOCSTART-`` group (or, in a file without
    them, each sentence) becomes one document, tokens joined by spaces and sentences by newlines."""
    group: list[ColumnSentence] = []
    grouped = False  # the file has -DOCSTART- lines

    def flush() -> Iterator[ColumnSentence]:
        text = "\n".join(" ".join(s[WORD]) for s in group)
        ident, cursor = f"{stem}-{count}", 0
        for k, s in enumerate(group):
            offsets = []
            for word in s[WORD]:
                offsets.append((cursor, cursor + len(word)))
                cursor += len(word) + 1
            yield ColumnSentence(s.columns, path=s.path, line=s.line, doc_start=s.doc_start,
                                 extra={**s.extra, "doc_id": ident, "text": text, "offsets": tuple(offsets)})

    count = 0
    for sentence in sentences:
        grouped = grouped or sentence.doc_start
        if group and (sentence.doc_start or not grouped):
            count += 1
            yield from flush()
            group = []
        group.append(sentence)
    if group:
        count += 1
        yield from flush()


def _conllu(path: Path, tag_column: str | None) -> Iterator[ColumnSentence]:
    """CoNLL-U words with their tags: ``tag_column`` (a CoNLL-U field), else ``NER=`` in MISC where the first
    sentence has it, else UPOS."""
    column = tag_column
    for sentence in read_conllu(path):
        if column is None:
            column = "misc" if all(_ner(m) is not None for m in sentence["misc"]) else "upos"
        tags = tuple(_ner(m) or "O" for m in sentence["misc"]) if column == "misc" else sentence[column]
        yield ColumnSentence({WORD: sentence["form"], TAG: tuple(tags)}, path=sentence.path, line=sentence.line,
                             extra=sentence.extra)


def _ner(misc: str) -> str | None:
    """The value of ``NER=`` in a CoNLL-U MISC field, or None."""
    for item in misc.split("|"):
        key, sep, value = item.partition("=")
        if sep and key == NER_ATTRIBUTE:
            return value
    return None


def read_any(path: str | os.PathLike[str], fmt: str, report: AlignmentReport, *,
             columns: Sequence[str] | None = None, tag_column: str | None = None,
             offsets: str = "auto") -> Iterator[ColumnSentence]:
    """The sentences of ``path`` in format ``fmt`` (module docstring), columns ``word`` and ``ner``; an offset
    format's alignment counts go to ``report``."""
    path = Path(path)
    if fmt == "conll":
        names = _conll_columns(path, columns)
        return _documents(read_conll(path, names), path.stem)
    if fmt == "conllu":
        return _conllu(path, tag_column)
    if fmt == "hf":
        return read_hf_jsonl(path)
    readers: dict[str, Callable[..., Iterator[ColumnSentence]]] = {
        "brat": read_brat, "jsonl": read_span_jsonl, "labelstudio": read_label_studio}
    return readers[fmt](path, report=report, **({"offsets": offsets} if fmt != "brat" else {}))


def _write_conll(path: Path, sentences: Iterable[ColumnSentence]) -> int:
    """Write ``token tag`` lines (TAB-separated when a token needs it), a ``-DOCSTART- O`` line before each
    document when the sentences come in documents; returns how many sentences."""
    rows = list(sentences)
    sep = column_separator(s[WORD] for s in rows)
    with_starts = any(s.doc_start for s in rows)

    def sentence_rows() -> Iterator[list[tuple[str, ...]]]:
        for s in rows:
            yield [(DOCSTART, "O")] if with_starts and s.doc_start else []
            yield list(zip(s[WORD], s[TAG]))

    write_conll(path, (r for r in sentence_rows() if r), sep=sep)
    return len(rows)


WRITERS: dict[str, Callable[[Path, Iterable[ColumnSentence]], int]] = {
    "conll": _write_conll, "jsonl": write_span_jsonl, "brat": write_brat, "hf": write_hf_jsonl}


def convert(source: str | os.PathLike[str], target: str | os.PathLike[str], *, source_format: str = "auto",
            target_format: str, label_map: Mapping[str, str | None] | None = None, scheme: str | None = None,
            columns: Sequence[str] | None = None, tag_column: str | None = None, offsets: str = "auto") -> Conversion:
    """Read ``source`` (``auto``: its format detected) and write ``target`` in ``target_format``, with the types
    renamed by ``label_map`` and the tags written in ``scheme`` (None: as read); ``offsets``: the unit of an
    offset format's offsets (:mod:`seqlab.data.formats.offsets`); returns the counts."""
    fmt = detect_format(source) if source_format == "auto" else source_format
    if fmt not in READ_FORMATS:
        raise SeqlabError(f"--from: expected one of {['auto', *READ_FORMATS]}, got {fmt!r}")
    if target_format not in WRITERS:
        raise SeqlabError(f"--to: expected one of {list(WRITERS)}, got {target_format!r}")
    result = Conversion(fmt, target_format)
    relabel = LabelMapper(label_map, SpanLabelling("bilou", "iob2")) if label_map else None

    def sentences() -> Iterator[ColumnSentence]:
        for s in read_any(source, fmt, result.report, columns=columns, tag_column=tag_column, offsets=offsets):
            tags = s[TAG]
            try:
                tags = relabel(tags) if relabel else tags
                result.spans += len(spans(tags))
                tags = tuple(convert_tags(tags, scheme)) if scheme is not None else tags
            except SeqlabError as err:
                if target_format in ("jsonl", "brat") or relabel or scheme:
                    raise SeqlabError(f"{s.path}:{s.line}: {err}: these are not span tags (B-/I- prefixed), so "
                                      "they cannot be written as spans, mapped or given a scheme; convert them "
                                      "--to conll or hf as they are") from None
            result.sentences += 1
            yield ColumnSentence({WORD: s[WORD], TAG: tuple(tags)}, path=s.path, line=s.line, doc_start=s.doc_start,
                                 extra=s.extra)
        if relabel:  # before the writer finishes, so that a map that maps nothing leaves no file
            relabel.warn_unmet(str(source), refuse=True)

    result.written = WRITERS[target_format](Path(target), sentences())
    return result
