"""Alignment under random texts and spans: every aligned span's tokens slice back to the span's text, the spans
kept are those the policy keeps, and every span read is aligned, dropped or unaligned, with a problem line for
each that is not (FEW examples by default, MANY with ``--runslow``)."""
from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from features.tokenize import SEPARATORS
from seqlab.core.errors import DataFormatError
from seqlab.data.formats.align import AlignmentReport, CharSpan, SpanDocument, align_document
from seqlab.data.schemes import spans as tag_spans

FEW, MANY = 150, 5_000
PIECES = ["Mr.", "U.S.", "don't", "A-T", "1,234.5", "x@y.org", "(", ")", '"', ".", ",", "-", "é", "e\u0301",
          "\u200b", "Paris", "he", "Smith", "IL-2", "co-op", "?", "..."]
SPACES = [" ", "  ", "\n", "\n\n", "\t", ""]
LABELS = ["A", "B", "C-D", "", "x y"]
BLANK = set(SEPARATORS)


@st.composite
def documents(draw: st.DrawFn) -> SpanDocument:
    parts = draw(st.lists(st.tuples(st.sampled_from(PIECES) | st.text(min_size=1, max_size=4),
                                    st.sampled_from(SPACES)), max_size=25))
    text = "".join(word + space for word, space in parts)
    bound = len(text) + 2
    raw = draw(st.lists(st.tuples(st.integers(-2, bound), st.integers(-2, bound), st.sampled_from(LABELS)),
                        max_size=8))
    spans = tuple(CharSpan(s, e, label, line=k + 1) for k, (s, e, label) in enumerate(raw))
    return SpanDocument("doc", text, spans, path="doc.txt", raw_text=draw(st.booleans()))


def _trimmed(text: str, span: CharSpan) -> tuple[int, int] | None:
    """The span without whitespace at its edges, or None when it cannot be aligned (the reference rules)."""
    if not span.label or " " in span.label or not 0 <= span.start < span.end <= len(text):
        return None
    start, end = span.start, span.end
    while start < end and (text[start].isspace() or text[start] in BLANK):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in BLANK):
        end -= 1
    return (start, end) if start < end else None


def _expected(doc: SpanDocument) -> list[tuple[int, int, str]]:
    """The spans the policy keeps, by brute force: longest first, earliest on ties, then first read."""
    valid = [(k, _trimmed(doc.text, s), s.label) for k, s in enumerate(doc.spans)]
    valid = [(k, bounds, label) for k, bounds, label in valid if bounds is not None]
    kept: list[tuple[int, int, str]] = []
    for _, (start, end), label in sorted(valid, key=lambda v: (v[1][0] - v[1][1], v[1][0], v[0])):
        if all(end <= a or b <= start for a, b, _ in kept):
            kept.append((start, end, label))
    return sorted(kept)


@pytest.mark.slow
@settings(max_examples=MANY, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_alignment_many(doc: SpanDocument) -> None:
    _check(doc)


@settings(max_examples=FEW, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_alignment(doc: SpanDocument) -> None:
    _check(doc)


def _check(doc: SpanDocument) -> None:
    report = AlignmentReport()
    sentences = align_document(doc, report)
    text = doc.text
    assert report.spans_read == len(doc.spans) == report.aligned + report.overlaps_dropped + report.unaligned
    assert len(report.problems) == report.overlaps_dropped + report.unaligned  # nothing lost without a line
    found = []
    previous_end = 0
    for sentence in sentences:
        offsets = sentence.extra["offsets"]
        for word, (start, end) in zip(sentence["word"], offsets):
            assert previous_end <= start < end and word == unicodedata.normalize("NFC", text[start:end])
            assert all(c.isspace() or c in BLANK for c in text[previous_end:start])
            previous_end = end
        for label, first, stop in tag_spans(sentence["ner"]):
            found.append((offsets[first][0], offsets[stop - 1][1], label))
    assert all(c.isspace() or c in BLANK for c in text[previous_end:])  # no text is left out of the tokens
    assert sorted(found) == _expected(doc)  # each kept span's tokens slice back to exactly its (trimmed) text
    assert report.aligned == len(found)
    if report.problems:
        with pytest.raises(DataFormatError):
            align_document(doc, strict=True)
    else:
        assert align_document(doc, strict=True) == sentences
