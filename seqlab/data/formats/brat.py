"""brat standoff (Stenetorp et al. 2012): a document's text in ``x.txt``, its annotations in ``x.ann``.

Read are the text-bound annotations, ``T1<TAB>Disease 10 25<TAB>text`` (character offsets into the .txt
decoded as UTF-8, end exclusive), aligned to tokens by :mod:`seqlab.data.formats.align`. A discontinuous one
(``T2<TAB>Type 0 5;10 15<TAB>...``, fragments in any order) is read by the policy ``discontinuous``:
``fragments`` (each fragment a span of the type, in text order; the default), ``first`` (the fragment that
comes first in the text) or ``refuse`` (the span is unaligned, named in the report; strict: an error). It is
never merged into the range covering its fragments, which would tag the words between them. Each is counted.
Relations, events, attributes, normalizations and notes (``R``, ``E``, ``A``/``M``, ``N``, ``#``, ``*``) are
counted and ignored. A T line whose text differs from the .txt at its offsets is read by its offsets, and
reported: offsets are what brat means, the text a check.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable, Iterator

from seqlab.core.atomic import atomic_open
from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.data.conll import ColumnSentence
from seqlab.data.formats.align import (TAG, WORD, AlignmentReport, CharSpan, SpanDocument, align_documents,
                                       documents_of, problem)
from seqlab.data.encoding import DEFAULT_ENCODING
from seqlab.data.formats.files import read_text
from seqlab.data.formats.format import Format, offset_reader

ANN, TXT = ".ann", ".txt"
#: How a discontinuous span (several fragments) is read: each fragment a span, the first one only, or refused.
DISCONTINUOUS = ("fragments", "first", "refuse")
#: The annotation kinds read past, by the first character of their id.
IGNORED = {"R": "relation", "E": "event", "A": "attribute", "M": "attribute", "N": "normalization",
           "#": "note", "*": "equivalence"}
_OFFSETS = re.compile(r"[0-9]+ [0-9]+(?:;[0-9]+ [0-9]+)*\Z")
_UNSAFE = re.compile(r"[^\w.-]")


def brat_files(path: str | os.PathLike[str]) -> list[Path]:
    """The .ann files to read: a folder's (sorted by name; subfolders are not read), or the one document
    that ``x.ann`` or ``x.txt`` names."""
    path = Path(path)
    if path.is_dir():
        found = sorted(path.glob(f"*{ANN}"))
        if not found:
            raise SeqlabError(f"{path}: no {ANN} files (a brat folder holds pairs of x{TXT} and x{ANN})")
        return found
    ann = path.with_suffix(ANN)
    if path.suffix not in (ANN, TXT) or not ann.is_file():
        raise SeqlabError(f"{path}: expected a brat folder, or a document's {ANN} file (with its {TXT} beside it)")
    return [ann]


def _fragments(ann: Path, number: int, line: str) -> tuple[str, str, list[tuple[int, int]], str | None]:
    """The id, type, fragments and text of a T line."""
    fields = line.split("\t", 2)
    kind, _, offsets = fields[1].partition(" ") if len(fields) > 1 else ("", "", "")
    if len(fields) < 2 or not kind or not _OFFSETS.match(offsets):
        raise DataFormatError(str(ann), number, f"expected 'T<n><TAB>TYPE START END[;START END...]<TAB>TEXT', "
                                                f"got {line!r}")
    pairs = sorted(tuple(map(int, fragment.split())) for fragment in offsets.split(";"))
    return fields[0], kind, pairs, fields[2] if len(fields) > 2 else None  # type: ignore[return-value]


def read_ann(ann: Path, doc: SpanDocument, report: AlignmentReport, *, discontinuous: str = "fragments",
             strict: bool = False, encoding: str = DEFAULT_ENCODING) -> tuple[CharSpan, ...]:
    """The text-bound spans of ``ann`` over ``doc``'s text (module docstring for the policies)."""
    if discontinuous not in DISCONTINUOUS:
        raise SeqlabError(f"discontinuous: expected one of {list(DISCONTINUOUS)}, got {discontinuous!r}")
    lines = read_text(ann, encoding=encoding).splitlines()
    spans = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if line[0] in IGNORED:
            report.notes[f"{IGNORED[line[0]]} lines ({line[0]}) ignored"] += 1
            continue
        if line[0] != "T":
            raise DataFormatError(str(ann), number, f"expected a brat annotation (T, R, E, A, M, N, # or * and "
                                                    f"an id), got {line[:40]!r}")
        ident, kind, pairs, written = _fragments(ann, number, line)
        spans.extend(_read_fragments(ann, number, doc, report, (ident, kind, pairs), discontinuous, strict))
        if written is not None and all(0 <= a <= b <= len(doc.text) for a, b in pairs):
            stored = " ".join(doc.text[a:b] for a, b in pairs)
            if written.split() != stored.split():
                report.notes["T lines whose text differs from the .txt"] += 1
                problem(report, str(ann), number, f"document {doc.ident}: {ident} reads {written!r}, the .txt "
                                                  f"has {stored!r} at {pairs} (read by the offsets)", strict=strict)
    return tuple(spans)


def _read_fragments(ann: Path, number: int, doc: SpanDocument, report: AlignmentReport,
                    span: tuple[str, str, list[tuple[int, int]]], policy: str, strict: bool) -> list[CharSpan]:
    """The spans of one T line's fragments (sorted) by the ``discontinuous`` policy; a refused one is counted
    as read and unaligned, and named in the report."""
    ident, kind, pairs = span
    if len(pairs) == 1:
        return [CharSpan(pairs[0][0], pairs[0][1], kind, number, ident)]
    report.notes[f"discontinuous spans read as {policy}"] += 1
    if policy == "refuse":
        report.spans_read += 1
        report.unaligned += 1
        problem(report, str(ann), number, f"document {doc.ident}: span {ident} {kind} is discontinuous {pairs} "
                                          f"(refused by discontinuous: refuse; 'fragments' reads each)", strict=strict)
        return []
    chosen = pairs[:1] if policy == "first" else pairs
    return [CharSpan(a, b, kind, number, f"{ident}" if policy == "first" else f"{ident}#{k}")
            for k, (a, b) in enumerate(chosen, start=1)]



def brat_documents(path: str | os.PathLike[str], report: AlignmentReport, *, discontinuous: str = "fragments",
                   strict: bool = False, encoding: str = DEFAULT_ENCODING) -> Iterator[SpanDocument]:
    """The documents of a brat folder (or of one .ann), their spans read from the .ann files."""
    files = brat_files(path)
    if Path(path).is_dir():
        unpaired = {p.stem for p in Path(path).glob(f"*{TXT}")} - {p.stem for p in files}
        if unpaired:
            report.notes[f"{TXT} files without {ANN} (not read)"] += len(unpaired)
    for ann in files:
        txt = ann.with_suffix(TXT)
        if not txt.is_file():
            raise SeqlabError(f"{txt}: no such file (every {ANN} needs its {TXT})")
        doc = SpanDocument(ann.stem, read_text(txt, keep_bom=True, encoding=encoding), path=str(txt),
                           span_path=str(ann), raw_text=True)
        spans = read_ann(ann, doc, report, discontinuous=discontinuous, strict=strict, encoding=encoding)
        yield SpanDocument(doc.ident, doc.text, spans, path=doc.path, span_path=doc.span_path, raw_text=True)


def read_brat(path: str | os.PathLike[str], *, strict: bool = False, discontinuous: str = "fragments",
              report: AlignmentReport | None = None, encoding: str = DEFAULT_ENCODING) -> Iterator[ColumnSentence]:
    """Stream the sentences of a brat folder (or one document), tagged IOB2 in the columns ``word`` and
    ``ner``; the report (counts and problems) is logged at the end, unless the caller passes its own ``report``."""
    own, report = report is None, report if report is not None else AlignmentReport()
    yield from align_documents(brat_documents(path, report, discontinuous=discontinuous, strict=strict,
                                              encoding=encoding), report, strict=strict)
    if own:  # a caller that passes its report reads it (seqlab convert prints it)
        report.log(str(path))


def write_brat(folder: str | os.PathLike[str], sentences: Iterable[ColumnSentence], *,
               word_column: str = WORD, tag_column: str = TAG) -> int:
    """Write sentences as brat documents, ``<doc_id>.txt`` and ``<doc_id>.ann`` (T lines numbered from T1), each
    file atomically; returns how many documents. Sentences are grouped as
    :func:`seqlab.data.formats.align.documents_of` says; a document id is made a safe file name."""
    return write_brat_documents(folder, documents_of(sentences, word_column=word_column, tag_column=tag_column))


def write_brat_documents(folder: str | os.PathLike[str], documents: Iterable[SpanDocument]) -> int:
    """Write documents with character spans (and relations, as ``R`` lines) as brat ``<id>.txt`` and ``<id>.ann``
    pairs (each file atomically;
    an id made a safe file name, two ids that would share one refused); returns how many documents."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    for doc in documents:
        name = _UNSAFE.sub("_", doc.ident).lstrip(".") or "doc"
        if name in written:
            raise SeqlabError(f"{folder}: documents {written[name]!r} and {doc.ident!r} would both be written "
                              f"as {name}{TXT}; give them distinct ids")
        written[name] = doc.ident
        with atomic_open(folder / f"{name}{TXT}", "wb") as out:
            out.write(doc.text.encode("utf-8"))
        lines = [f"T{k}\t{s.label} {s.start} {s.end}\t{' '.join(doc.text[s.start:s.end].split())}\n"
                 for k, s in enumerate(doc.spans, start=1)]
        lines += [f"R{k}\t{label} Arg1:T{head + 1} Arg2:T{tail + 1}\n"
                  for k, (head, tail, label) in enumerate(doc.relations, start=1)]
        with atomic_open(folder / f"{name}{ANN}", "wb") as out:
            out.write("".join(lines).encode("utf-8"))
    return len(written)


def is_brat(path: Path) -> bool:
    """A folder holding ``.ann`` files, an ``.ann`` file, or an ``x.txt`` with ``x.ann`` beside it."""
    if path.is_dir():
        return next(path.glob(f"*{ANN}"), None) is not None
    suffix = path.suffix.lower()
    return suffix == ANN or (suffix == TXT and path.with_suffix(ANN).is_file())


FORMAT = Format("brat", is_brat, offset_reader(read_brat), write_brat, spans=True, unit="documents", output="brat")
