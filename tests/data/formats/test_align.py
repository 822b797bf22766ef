"""Alignment of character spans to tokens: token splits, the overlap policy, unaligned spans, sentence offsets."""
from __future__ import annotations

import logging

import pytest

from seqlab.core.errors import DataFormatError
from seqlab.data.conll import ColumnSentence
from seqlab.data.formats.align import (AlignmentReport, CharSpan, SpanDocument, align_document, documents_of)


def _doc(text: str, *spans: tuple[int, int, str], raw: bool = False) -> SpanDocument:
    found = tuple(CharSpan(s, e, label, line=k + 1, ident=f"T{k + 1}") for k, (s, e, label) in enumerate(spans))
    return SpanDocument("d", text, found, path="d.txt", span_path="d.ann", raw_text=raw)


def _at(text: str, part: str, label: str, nth: int = 0) -> tuple[int, int, str]:
    start = -1
    for _ in range(nth + 1):
        start = text.index(part, start + 1)
    return start, start + len(part), label


def _pairs(sentences: list[ColumnSentence]) -> list[list[tuple[str, str]]]:
    return [list(zip(s["word"], s["ner"])) for s in sentences]


def test_a_span_edge_inside_a_token_splits_it_and_the_text_is_unchanged() -> None:
    text = "Early-onset Alzheimer disease runs in families."
    report = AlignmentReport()
    [sentence] = align_document(_doc(text, _at(text, "onset Alzheimer disease", "Disease")), report)
    assert _pairs([sentence])[0][:5] == [("Early-", "O"), ("onset", "B-Disease"), ("Alzheimer", "I-Disease"),
                                         ("disease", "I-Disease"), ("runs", "O")]
    assert [text[a:b] for a, b in sentence.extra["offsets"]] == list(sentence["word"])
    assert (report.spans_read, report.aligned, report.split_spans, report.split_tokens) == (1, 1, 1, 1)
    assert report.problems == []


def test_one_token_cut_for_two_spans_counts_once() -> None:
    text = "The A-T gene."
    report = AlignmentReport()
    [sentence] = align_document(_doc(text, (4, 5, "X"), (6, 7, "Y")), report)
    assert _pairs([sentence])[0][1:4] == [("A", "B-X"), ("-", "O"), ("T", "B-Y")]
    assert (report.split_spans, report.split_tokens) == (2, 1)


def test_nested_and_overlapping_spans_keep_the_longest_and_report_each_dropped() -> None:
    text = "BRCA1 causes breast-cancer and ovarian and uterine tumours."
    doc = _doc(text, _at(text, "breast-cancer", "Disease"), _at(text, "cancer", "Disease"),
               _at(text, "ovarian and uterine tumours", "Disease"), _at(text, "uterine tumours", "Disease"),
               _at(text, "BRCA1 causes", "A"), _at(text, "causes", "B"))
    report = AlignmentReport()
    [sentence] = align_document(doc, report)
    assert (report.aligned, report.overlaps_dropped, report.unaligned) == (3, 3, 0)
    dropped = sorted(p.split(":")[1] for p in report.problems)
    assert dropped == ["2", "4", "6"]  # cancer, uterine tumours, causes: each inside a longer span
    assert "keep the longest" in report.problems[0] and "d.ann:" in report.problems[0]
    assert _pairs([sentence])[0][:3] == [("BRCA1", "B-A"), ("causes", "I-A"), ("breast-cancer", "B-Disease")]


def test_ties_keep_the_earliest_then_the_first_read() -> None:
    text = "aa bb cc"
    report = AlignmentReport()
    [sentence] = align_document(_doc(text, (3, 8, "LATE"), (0, 5, "EARLY"), (0, 5, "SECOND")), report)
    assert sentence["ner"] == ("B-EARLY", "I-EARLY", "O")
    assert report.overlaps_dropped == 2 and any("duplicates" in p for p in report.problems)


@pytest.mark.parametrize("span, reason", [
    ((3, 3, "X"), "empty"),
    ((5, 3, "X"), "ends before it starts"),
    ((-1, 3, "X"), "out of range"),
    ((0, 99, "X"), "out of range"),
    ((5, 7, "X"), "covers only whitespace"),
    ((0, 4, ""), "cannot be a tag type"),
    ((0, 4, "two words"), "cannot be a tag type"),
])
def test_a_span_that_cannot_be_aligned_is_reported_with_file_line_and_text(span: tuple[int, int, str],
                                                                           reason: str) -> None:
    text = "Paris  \n is nice."
    report = AlignmentReport()
    sentences = align_document(_doc(text, (9, 11, "OK"), span), report)
    assert (report.spans_read, report.aligned, report.unaligned) == (2, 1, 1)
    [message] = report.problems
    assert message.startswith("d.ann:2: document d: span T2") and reason in message
    assert [t for s in sentences for t in s["ner"]].count("B-OK") == 1
    with pytest.raises(DataFormatError, match=f"d.ann:2: .*{reason}"):
        align_document(_doc(text, (9, 11, "OK"), span), strict=True)


def test_strict_refuses_a_dropped_overlap() -> None:
    with pytest.raises(DataFormatError, match=r"d.ann:2: .*dropped, it overlaps"):
        align_document(_doc("New York City", (0, 13, "LOC"), (0, 8, "LOC")), strict=True)


def test_whitespace_at_span_edges_is_trimmed() -> None:
    text = "in  Paris  ."
    report = AlignmentReport()
    [sentence] = align_document(_doc(text, (2, 11, "LOC")), report)
    assert sentence["ner"] == ("O", "B-LOC", "O") and report.trimmed == 1 and report.aligned == 1


def test_sentences_keep_document_offsets_lines_and_a_span_across_a_boundary_joins_them() -> None:
    text = "He left. Smith Inc. Holdings bought it.\nShe stayed."
    report = AlignmentReport()
    sentences = align_document(_doc(text, raw=True), report)
    assert len(sentences) == 3 and sentences[0].doc_start and not sentences[1].doc_start
    for sentence in sentences:
        offsets = sentence.extra["offsets"]
        assert sentence.extra["span"] == (offsets[0][0], offsets[-1][1])
        assert [text[a:b] for a, b in offsets] == list(sentence["word"])
        assert sentence.extra["doc_id"] == "d" and sentence.extra["text"] is text
    assert [s.line for s in sentences] == [1, 1, 2] and sentences[2].extra["lines"] == (2, 2, 2)
    joined = align_document(_doc(text, _at(text, "left. Smith", "X"), raw=True), report)
    assert len(joined) == 2 and report.merged_sentences == 1
    assert _pairs(joined)[0][1:4] == [("left", "B-X"), (".", "I-X"), ("Smith", "I-X")]


def test_the_report_adds_up_and_logs_a_warning_when_spans_are_lost(caplog: pytest.LogCaptureFixture) -> None:
    report = AlignmentReport()
    align_document(_doc("a b c", (0, 1, "X"), (0, 3, "Y"), (9, 10, "Z")), report)
    assert report.spans_read == report.aligned + report.overlaps_dropped + report.unaligned == 3
    assert report.lost == 2
    with caplog.at_level(logging.INFO, logger="seqlab"):
        report.log("d.ann")
    assert caplog.records[0].levelno == logging.WARNING
    assert "3 spans read: 1 aligned" in caplog.records[0].getMessage() and len(caplog.records) == 3


def test_documents_of_inverts_alignment_and_reads_plain_column_sentences() -> None:
    text = "Jane Doe met Acme-Corp staff.\nThey left."
    doc = _doc(text, _at(text, "Jane Doe", "PER"), _at(text, "Acme", "ORG"), raw=True)
    [back] = documents_of(align_document(doc))
    assert back.text is text and back.ident == "d"
    assert [(s.start, s.end, s.label) for s in back.spans] == [(0, 8, "PER"), (13, 17, "ORG")]
    plain = ColumnSentence({"word": ("EU", "rejects", "German", "call"), "ner": ("I-ORG", "O", "I-MISC", "O")})
    [doc] = documents_of([plain])
    assert doc.text == "EU rejects German call" and doc.ident == "doc00001"
    assert [(doc.text[s.start:s.end], s.label) for s in doc.spans] == [("EU", "ORG"), ("German", "MISC")]
