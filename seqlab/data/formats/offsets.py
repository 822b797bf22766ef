"""The unit a document's span offsets count: characters, UTF-8 bytes or UTF-16 code units.

Python tools write character offsets; byte-level tools write UTF-8 byte offsets; JavaScript tools (Label Studio,
browser annotators) write UTF-16 code units, which differ from characters after an astral character (an emoji).
The units agree on ASCII text, so only a document with other characters needs deciding. :func:`in_chars` gives a
document with its spans in characters:

* ``chars``, ``utf8`` or ``utf16``: the offsets are read in that unit; one that falls inside a character or past
  the text is a :class:`DataFormatError` naming the file and line. Read as ``chars``, a document whose spans'
  own texts all match in another unit (and not in characters) is refused, naming the unit it looks like.
* ``auto``: each unit the text tells apart is tried; the one under which the most spans' own texts match
  (then the most spans in range with word edges) is used, and counted in the report. A document no unit fits
  better than characters is read in characters.

Every span that carries its own text (Label Studio ``value.text``, a JSONL span's ``text``) is checked against
``text[start:end]`` in the unit used; a mismatch is named in the alignment report (the offsets are read).
"""
from __future__ import annotations

from dataclasses import replace

from seqlab.core.errors import DataFormatError
from seqlab.data.formats.align import AlignmentReport, CharSpan, SpanDocument, problem

#: The ``data.offsets`` values.
UNITS = ("auto", "chars", "utf8", "utf16")
_NAMES = {"chars": "characters", "utf8": "UTF-8 bytes", "utf16": "UTF-16 code units"}


def _table(text: str, unit: str) -> dict[int, int]:
    """Unit offset -> character offset, for every offset at a character boundary (and the end)."""
    table, at = {}, 0
    for k, char in enumerate(text):
        table[at] = k
        code = ord(char)
        at += (1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4) if unit == "utf8" \
            else 2 if code >= 0x10000 else 1
    table[at] = len(text)
    return table


def _candidates(text: str) -> list[str]:
    """The units that give different offsets over ``text``."""
    if text.isascii():
        return ["chars"]
    return ["chars", "utf8"] + (["utf16"] if any(ord(c) >= 0x10000 for c in text) else [])


def _converted(doc: SpanDocument, unit: str) -> list[CharSpan] | None:
    """``doc``'s spans in characters when read in ``unit``; None when an offset is no character boundary."""
    if unit == "chars":
        return list(doc.spans)
    table = _table(doc.text, unit)
    out = []
    for span in doc.spans:
        start, end = table.get(span.start), table.get(span.end)
        if start is None or end is None:
            return None
        out.append(replace(span, start=start, end=end))
    return out


def _score(text: str, spans: list[CharSpan]) -> tuple[int, int]:
    """(spans whose own text matches, spans in range with word edges): how well a reading fits."""
    matched = sum(s.text is not None and 0 <= s.start < s.end <= len(text) and text[s.start:s.end] == s.text
                  for s in spans)
    edged = sum(0 <= s.start < s.end <= len(text) and (s.start == 0 or not text[s.start - 1].isalnum()
                or not text[s.start].isalnum()) and (s.end == len(text) or not text[s.end].isalnum()
                or not text[s.end - 1].isalnum()) for s in spans)
    return matched, edged


def _where(doc: SpanDocument) -> tuple[str, int]:
    line = doc.spans[0].line if doc.spans and doc.spans[0].line else doc.line
    return doc.span_path or doc.path, line


def _decide(doc: SpanDocument, unit: str) -> tuple[str, list[CharSpan]]:
    """The unit to read ``doc`` in and its spans in characters (module docstring)."""
    readings = {u: s for u in _candidates(doc.text) if (s := _converted(doc, u)) is not None}
    if unit != "auto":
        if unit in _candidates(doc.text) and unit not in readings:
            path, line = _where(doc)
            raise DataFormatError(path, line, f"document {doc.ident}: an offset falls inside a character when read "
                                              f"as {_NAMES[unit]} (offsets: {unit})")
        spans = readings.get(unit, list(doc.spans))
        if unit == "chars":
            _refuse_if_other(doc, readings, spans)
        return unit, spans
    scores = {u: _score(doc.text, s) for u, s in readings.items()}
    best = max(scores, key=lambda u: (scores[u], u == "chars"))
    return best, readings[best]


def _refuse_if_other(doc: SpanDocument, readings: dict[str, list[CharSpan]], spans: list[CharSpan]) -> None:
    """Read as characters, spans whose own texts all match in another unit and not in characters are refused."""
    owned = sum(s.text is not None for s in doc.spans)
    if not owned or _score(doc.text, spans)[0] == owned:
        return
    other = next((u for u, s in readings.items() if u != "chars" and _score(doc.text, s)[0] == owned), None)
    if other is not None:
        path, line = _where(doc)
        raise DataFormatError(path, line, f"document {doc.ident}: the spans' offsets look like {_NAMES[other]}, "
                                          f"not characters (their texts match there); set data.offsets: {other} "
                                          f"or --offsets {other}")


def in_chars(doc: SpanDocument, unit: str, report: AlignmentReport, *, strict: bool = False) -> SpanDocument:
    """``doc`` with its span offsets in characters (module docstring); each span's own text checked."""
    if unit not in UNITS:
        raise DataFormatError(doc.path, doc.line, f"offsets: expected one of {list(UNITS)}, got {unit!r}")
    if not doc.spans:
        return doc
    used, spans = _decide(doc, unit)
    if used != "chars":
        report.notes[f"documents whose offsets were read as {_NAMES[used]}"] += 1
    for span in spans:
        if span.text is not None and doc.text[max(span.start, 0):max(span.end, 0)] != span.text:
            report.notes["spans whose own text differs from the document's at their offsets"] += 1
            problem(report, doc.span_path or doc.path, span.line,
                    f"document {doc.ident}: span{' ' + span.ident if span.ident else ''} [{span.start}, {span.end}) "
                    f"{span.label} says {span.text[:60]!r}, the text there is "
                    f"{doc.text[max(span.start, 0):max(span.end, 0)][:60]!r} (read by the offsets)", strict=strict)
    return replace(doc, spans=tuple(spans))
