"""JSONL documents with character spans: one JSON object per line, as doccano, spaCy and Prodigy write them.

Each object holds ``text`` and its spans under the first of :data:`SPAN_KEYS` it has: ``spans`` (spaCy,
Prodigy), ``entities`` or ``label`` (doccano). A span is an object ``{"start", "end", "label"}`` (doccano's
``start_offset``/``end_offset`` too) or a list ``[start, end, label]``. An object without any holds no
entities. ``id`` names the document (else ``<file stem>-<line>``). Prodigy's rejected and ignored answers
(``"answer"`` other than ``accept``) are skipped and counted. Spans are aligned to tokens by
:mod:`seqlab.data.formats.align`.

:func:`write_span_jsonl` writes sentences back as ``{"id", "text", "spans": [{"start", "end", "label",
"text"}], "sentences": [...]}``, the span fields of seqlab's output schema (:mod:`seqlab.core.schema`) and the
document's sentences (their tokens, offsets and labels), so that the file reads back, as a seqlab document
(:mod:`seqlab.data.formats.seqlab_jsonl`), to the very tokens and sentences written.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from seqlab.core.atomic import atomic_open
from seqlab.core.errors import DataFormatError
from seqlab.data.conll import ColumnSentence
from seqlab.data.encoding import DEFAULT_ENCODING
from seqlab.data.formats.align import (TAG, WORD, AlignmentReport, CharSpan, SpanDocument, align_documents,
                                       documents_of)
from seqlab.data.formats.files import integer, json_objects, json_suffix
from seqlab.data.formats.format import Format
from seqlab.data.formats.seqlab_jsonl import document_groups, encode_sentences, is_seqlab_jsonl, read_seqlab_jsonl
from seqlab.data.formats.offsets import in_chars

#: Where an object's spans are looked for, in this order.
SPAN_KEYS = ("spans", "entities", "label")
_STARTS, _ENDS = ("start", "start_offset"), ("end", "end_offset")


def _first(item: dict[str, Any], keys: tuple[str, ...]) -> object:
    return next((item[k] for k in keys if k in item), None)


def parse_span(item: object, where: str, path: str, line: int) -> CharSpan:
    """One span: ``{"start", "end", "label"}`` (or doccano's ``start_offset``/``end_offset``) or
    ``[start, end, label]``; ``where`` names it in errors (``spans[2]``)."""
    own = None
    if isinstance(item, dict):
        start, end, label, own = _first(item, _STARTS), _first(item, _ENDS), item.get("label"), item.get("text")
    elif isinstance(item, list) and len(item) == 3:
        start, end, label = item
    else:
        raise DataFormatError(path, line, f"{where}: expected {{\"start\", \"end\", \"label\"}} or "
                                          f"[start, end, label], got {json.dumps(item)[:80]}")
    if not isinstance(label, str):
        raise DataFormatError(path, line, f"{where}: expected a label string, got {label!r}")
    return CharSpan(integer(start, f"{where} start", path, line), integer(end, f"{where} end", path, line),
                    label, line, text=own if isinstance(own, str) else None)


def span_document(obj: dict[str, Any], path: str, line: int, *, text_key: str = "text") -> SpanDocument:
    """The document of one JSONL object (module docstring for its shape)."""
    text = obj.get(text_key)
    if not isinstance(text, str):
        raise DataFormatError(path, line, f"expected a string under {text_key!r}, got "
                                          f"{'no such key' if text is None else type(text).__name__}; "
                                          f"keys: {sorted(obj)}")
    key = next((k for k in SPAN_KEYS if k in obj), None)
    items = obj[key] if key else []
    if not isinstance(items, list):
        raise DataFormatError(path, line, f"{key}: expected a list of spans, got {type(items).__name__}")
    spans = tuple(parse_span(item, f"{key}[{k}]", path, line) for k, item in enumerate(items))
    ident = obj.get("id")
    ident = str(ident) if ident is not None else f"{Path(path).stem}-{line}"
    return SpanDocument(ident, text, spans, path=path, line=line)


def span_documents(path: str | os.PathLike[str], report: AlignmentReport, *, offsets: str = "auto",
                   strict: bool = False, encoding: str = DEFAULT_ENCODING) -> Iterator[SpanDocument]:
    """The documents of a span JSONL file, their offsets read in the unit ``offsets`` names
    (:mod:`seqlab.data.formats.offsets`)."""
    for number, obj in json_objects(path, encoding):
        if obj.get("answer", "accept") != "accept":
            report.notes["records not accepted (answer reject or ignore) skipped"] += 1
            continue
        yield in_chars(span_document(obj, str(path), number), offsets, report, strict=strict)


def read_span_jsonl(path: str | os.PathLike[str], *, strict: bool = False, report: AlignmentReport | None = None,
                    encoding: str = DEFAULT_ENCODING, offsets: str = "auto") -> Iterator[ColumnSentence]:
    """Stream the sentences of a span JSONL file, tagged IOB2 in the columns ``word`` and ``ner``; the
    report (counts and problems) is logged at the end, unless the caller passes its own ``report``;
    ``offsets``: the unit the offsets count (:data:`seqlab.data.formats.offsets.UNITS`)."""
    own, report = report is None, report if report is not None else AlignmentReport()
    yield from align_documents(span_documents(path, report, offsets=offsets, strict=strict, encoding=encoding),
                               report, strict=strict)
    if own:  # a caller that passes its report reads it (seqlab convert prints it)
        report.log(str(path))


def write_span_jsonl(path: str | os.PathLike[str], sentences: Iterable[ColumnSentence], *,
                     word_column: str = WORD, tag_column: str = TAG) -> int:
    """Write sentences as span JSONL, one document per line (grouped as
    :func:`seqlab.data.formats.align.documents_of` says), its sentences under ``sentences`` (tokens, offsets,
    labels: :func:`seqlab.data.formats.seqlab_jsonl.encode_sentences`), atomically; returns how many documents."""
    count = 0
    with atomic_open(path) as out:
        for doc, group in document_groups(sentences, word_column=word_column, tag_column=tag_column):
            spans = [{"start": s.start, "end": s.end, "label": s.label, "text": doc.text[s.start:s.end]}
                     for s in doc.spans]
            out.write(json.dumps({"id": doc.ident, "text": doc.text, "spans": spans,
                                  "sentences": encode_sentences(group, word_column, tag_column)},
                                 ensure_ascii=False) + "\n")
            count += 1
    return count


def _read(path: Path, *, encoding: str = DEFAULT_ENCODING, columns: Sequence[str] | None = None,
          report: AlignmentReport | None = None, offsets: str = "auto") -> Iterator[ColumnSentence]:
    """Span JSONL; a file that carries its sentences (as :func:`write_span_jsonl` writes it) is read by them."""
    if is_seqlab_jsonl(Path(path)):
        return read_seqlab_jsonl(path, encoding=encoding)
    return read_span_jsonl(path, encoding=encoding, report=report, offsets=offsets)


FORMAT = Format("jsonl", json_suffix, _read, write_span_jsonl, spans=True, unit="documents")
