"""Converting labelled data between formats: what ``seqlab convert IN OUT --from FMT --to FMT`` does.

Read with the readers of :data:`seqlab.data.formats.registry.TABLE` (CoNLL columns, CoNLL-U, brat, span JSONL,
Label Studio, HF token JSONL, seqlab's own JSONL), written with its writers (CoNLL, CoNLL-U, span JSONL, brat,
HF token JSONL), through sentences of the columns ``word`` and ``ner``:

* CoNLL: the columns are given (``word,_,_,ner``) or read as ``token ... tag`` by the first line's width;
  ``-DOCSTART-`` lines group sentences into documents (a file without them: one document per sentence), whose
  text, for the span formats, is the tokens joined by spaces and the sentences by newlines. CoNLL is written
  ``token tag`` (TAB-separated when a token is empty or holds whitespace), a ``-DOCSTART-`` line before each
  document, tags in the scheme asked for (default: as read).
* CoNLL-U: the words (FORM) with their tags from ``NER=`` in MISC where the first sentence has it (as
  ``seqlab tag --format conllu`` writes them), else UPOS; ``tag_column`` names another field.
* brat, span JSONL, Label Studio: character spans aligned to tokens (:mod:`seqlab.data.formats.align`); the
  alignment report (spans aligned, split, dropped, unaligned) is part of the result.
* span JSONL is written with each document's sentences (tokens, offsets, labels), and read back by their tokens
  (``auto`` detects it as ``seqlab``): CoNLL -> JSONL -> CoNLL keeps every token and sentence boundary.

Spans round-trip between span JSONL, brat and CoNLL: labels and token extents unchanged, and between the two
offset formats text and character offsets unchanged too.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from seqlab.core.errors import SeqlabError
from seqlab.data.conll import ColumnSentence, named_columns
from seqlab.data.encoding import DEFAULT_ENCODING
from seqlab.data.formats.align import TAG, WORD, AlignmentReport
from seqlab.data.formats.registry import BY_NAME, READ_FORMATS, WRITE_FORMATS, detect_format, read_format
from seqlab.data.formats.seqlab_jsonl import joined_offsets
from seqlab.data.label_map import LabelMapper
from seqlab.data.labelling import labelling
from seqlab.data.schemes import convert as convert_tags, spans



@dataclass
class Conversion:
    """What a conversion read and wrote: sentences, documents (groups of sentences sharing a text), spans
    written, and the alignment report of an offset format (empty for token formats)."""

    source: str
    target: str
    sentences: int = 0
    spans: int = 0
    written: int = 0  # documents (jsonl, brat) or sentences (conll, conllu, hf) written
    report: AlignmentReport = field(default_factory=AlignmentReport)

    def summary(self) -> str:
        """One line of counts."""
        unit = BY_NAME[self.target].unit
        return (f"read {self.sentences} sentences with {self.spans} spans ({self.source}), wrote {self.written} "
                f"{unit} ({self.target})")


def _conll_columns(columns: Sequence[str] | None) -> tuple[str, ...] | None:
    """The names given a CoNLL file's columns (with ``word`` and ``ner`` among them), or None: ``word ... ner``
    by the width of its first token line (:func:`seqlab.data.formats.columns.fitted_columns`)."""
    if columns is None:
        return None
    names = named_columns(columns, source=f"--columns {','.join(columns)}")
    if WORD not in names or TAG not in names:
        raise SeqlabError(f"--columns {','.join(columns)}: name the token column {WORD} and the tag column "
                          f"{TAG} (_ skips a column)")
    return names


def _documents(sentences: Iterable[ColumnSentence], stem: str) -> Iterator[ColumnSentence]:
    """CoNLL sentences with the offsets of a document text: a ``-DOCSTART-`` group (or, in a file without
    them, each sentence) becomes one document, tokens joined by spaces and sentences by newlines."""
    group: list[ColumnSentence] = []
    grouped = False  # the file has -DOCSTART- lines

    def flush() -> Iterator[ColumnSentence]:
        text = "\n".join(" ".join(s[WORD]) for s in group)
        ident, cursor = f"{stem}-{count}", 0
        for s in group:
            offsets = joined_offsets(s[WORD], cursor)
            cursor += sum(map(len, s[WORD])) + len(s[WORD])
            yield ColumnSentence(s.columns, path=s.path, line=s.line, doc_start=s.doc_start,
                                 extra={**s.extra, "doc_id": ident, "text": text, "offsets": offsets})

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


def read_any(path: str | os.PathLike[str], fmt: str, report: AlignmentReport, *,
             columns: Sequence[str] | None = None, tag_column: str | None = None,
             encoding: str = DEFAULT_ENCODING, offsets: str = "auto") -> Iterator[ColumnSentence]:
    """The sentences of ``path`` in format ``fmt`` (module docstring), columns ``word`` and ``ner`` (``ner``
    taken from ``tag_column`` when given); an offset format's alignment counts go to ``report``."""
    path = Path(path)
    sentences = read_format(path, fmt, encoding=encoding, columns=_conll_columns(columns) if fmt == "conll" else None,
                            report=report, offsets=offsets)
    if tag_column is not None:
        sentences = (ColumnSentence({**s.columns, TAG: s[tag_column]}, path=s.path, line=s.line,
                                    doc_start=s.doc_start, extra=s.extra) for s in sentences)
    return _documents(sentences, path.stem) if fmt == "conll" else sentences


def convert(source: str | os.PathLike[str], target: str | os.PathLike[str], *, source_format: str = "auto",
            target_format: str, label_map: Mapping[str, str | None] | None = None, scheme: str | None = None,
            columns: Sequence[str] | None = None, tag_column: str | None = None,
            encoding: str = DEFAULT_ENCODING, offsets: str = "auto") -> Conversion:
    """Read ``source`` (``auto``: its format detected; its text in ``encoding``) and write ``target`` in
    ``target_format``, with the types renamed by ``label_map`` and the tags written in ``scheme`` (None: as read);
    ``offsets``: the unit of an offset format's offsets (:mod:`seqlab.data.formats.offsets`); returns
    the counts."""
    fmt = detect_format(source) if source_format == "auto" else source_format
    if fmt not in READ_FORMATS:
        raise SeqlabError(f"--from: expected one of {['auto', *READ_FORMATS]}, got {fmt!r}")
    if target_format not in WRITE_FORMATS:
        raise SeqlabError(f"--to: expected one of {list(WRITE_FORMATS)}, got {target_format!r}")
    result = Conversion(fmt, target_format)
    relabel = LabelMapper(label_map, labelling("bilou", "iob2")) if label_map else None

    def sentences() -> Iterator[ColumnSentence]:
        for s in read_any(source, fmt, result.report, columns=columns, tag_column=tag_column, encoding=encoding,
                          offsets=offsets):
            tags = s[TAG]
            try:
                tags = relabel(tags) if relabel else tags
                result.spans += len(spans(tags))
                tags = tuple(convert_tags(tags, scheme)) if scheme is not None else tags
            except SeqlabError as err:
                if BY_NAME[target_format].spans or relabel or scheme:
                    raise SeqlabError(f"{s.path}:{s.line}: {err}: these are not span tags (B-/I- prefixed), so "
                                      "they cannot be written as spans, mapped or given a scheme; convert them "
                                      "--to conll or hf as they are") from None
            result.sentences += 1
            yield ColumnSentence({WORD: s[WORD], TAG: tuple(tags)}, path=s.path, line=s.line, doc_start=s.doc_start,
                                 extra=s.extra)
        if relabel:  # before the writer finishes, so that a map that maps nothing leaves no file
            relabel.warn_unmet(str(source), refuse=True)

    write = BY_NAME[target_format].write
    if write is None:  # not in WRITE_FORMATS: refused above
        raise SeqlabError(f"--to: {target_format} is read, not written")
    result.written = write(Path(target), sentences())
    return result
