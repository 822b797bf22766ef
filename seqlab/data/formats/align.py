"""Character spans over a document's text, aligned to tokens: sentences of words with IOB2 tags.

The one alignment behind every reader of character-offset annotations (brat standoff, JSONL spans, Label
Studio). The text is split into sentences and tokens by :func:`features.tokenize.sentence_tokens` (CoNLL-2003
style; offsets into the text as given), and then:

1. each span is checked: ``0 <= start < end <= len(text)``, something other than whitespace between, and a
   label usable as a tag type (a non-empty string without whitespace); whitespace at its edges is trimmed (no
   token holds any). A span that fails is *unaligned*.
2. overlapping or nested spans: the longest is kept (the earliest on ties, then the first read); each span
   overlapping a kept one is *dropped*, naming the one kept.
3. where a kept span's edge falls inside a token, the token is split there (the text is unchanged: the pieces
   are its slices), so ``text[first.start:last.end]`` of a span's tokens is the span's text.
4. a kept span that crosses a sentence boundary joins the two sentences (the annotation outranks the splitter).

Unaligned and dropped spans are never lost silently: a strict reading raises :class:`DataFormatError` naming
the file and line; a lenient one records each in an :class:`AlignmentReport`, which the reader logs.
"""
from __future__ import annotations

import logging
import unicodedata
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

from features.tokenize import SEPARATORS, sentence_tokens
from seqlab.core.errors import DataFormatError
from seqlab.data.conll import ColumnSentence
from seqlab.data.schemes import Chunk, from_spans, spans as tag_spans

LOG = logging.getLogger("seqlab")
WORD, TAG = "word", "ner"
#: The columns of every sentence the offset readers produce.
COLUMNS = (WORD, TAG)
SCHEME = "iob2"
#: How many problems a report writes to the log one by one (the rest as a count).
LOGGED_PROBLEMS = 20
_BLANK = frozenset(SEPARATORS)


@dataclass(frozen=True)
class CharSpan:
    """A labelled character span ``[start, end)`` of a document's text, and where it was read."""

    start: int
    end: int
    label: str
    line: int = 0  # the line of the annotation file that holds it (brat .ann, JSONL object); 0: unknown
    ident: str = ""  # its id in that file (brat ``T3``), for messages
    text: str | None = None  # the text the file says it covers, when it says (checked by seqlab.data.formats.offsets)


@dataclass(frozen=True)
class SpanDocument:
    """A text with character spans over it, as an offset format holds it."""

    ident: str
    text: str
    spans: tuple[CharSpan, ...] = ()
    path: str = ""  # the file holding the text
    line: int = 1  # the line of that file where the text begins
    span_path: str = ""  # the file holding the spans when it is another (brat .ann)
    raw_text: bool = False  # the text is the file as it is, so each newline in it is a line of the file (brat .txt)
    relations: tuple[tuple[int, int, str], ...] = ()  # (head, tail, label), head and tail indexing spans (brat R)


@dataclass
class AlignmentReport:
    """What aligning spans to tokens did, over one reading: ``spans_read == aligned + overlaps_dropped +
    unaligned`` always holds, and each dropped or unaligned span has a line in ``problems``."""

    documents: int = 0
    sentences: int = 0
    spans_read: int = 0
    aligned: int = 0
    split_spans: int = 0  # aligned spans with an edge inside a token
    split_tokens: int = 0  # tokens cut at span edges
    overlaps_dropped: int = 0
    unaligned: int = 0
    merged_sentences: int = 0  # sentence boundaries removed because a span crossed them
    trimmed: int = 0  # spans whose edges held whitespace (trimmed off)
    notes: Counter[str] = field(default_factory=Counter)  # a reader's own counts (lines ignored, ...)
    problems: list[str] = field(default_factory=list)  # "file:line: ..." per dropped, unaligned or suspect span

    @property
    def lost(self) -> int:
        """Spans read that are in no sentence's tags."""
        return self.overlaps_dropped + self.unaligned

    def summary(self) -> str:
        """One line of counts."""
        parts = [f"{self.documents} documents, {self.sentences} sentences, {self.spans_read} spans read: "
                 f"{self.aligned} aligned ({self.split_spans} needed {self.split_tokens} token splits), "
                 f"{self.overlaps_dropped} dropped as overlapping, {self.unaligned} unaligned"]
        if self.merged_sentences:
            parts.append(f"{self.merged_sentences} sentence boundaries removed inside spans")
        if self.trimmed:
            parts.append(f"{self.trimmed} spans trimmed of whitespace at an edge")
        parts.extend(f"{count} {what}" for what, count in sorted(self.notes.items()))
        return "; ".join(parts)

    def log(self, source: str) -> None:
        """Log the summary (a warning when spans were lost or problems found) and the first problems."""
        level = logging.WARNING if self.problems else logging.INFO
        LOG.log(level, "%s: %s", source, self.summary())
        for problem in self.problems[:LOGGED_PROBLEMS]:
            LOG.warning("%s", problem)
        if len(self.problems) > LOGGED_PROBLEMS:
            LOG.warning("%s: ... and %d more problems", source, len(self.problems) - LOGGED_PROBLEMS)


def problem(report: AlignmentReport, path: str, line: int, message: str, *, strict: bool) -> None:
    """Record ``message`` about ``path:line`` in ``report``, or raise it as a DataFormatError when ``strict``."""
    error = DataFormatError(path, line, message)
    if strict:
        raise error
    report.problems.append(str(error))


def describe(doc: SpanDocument, span: CharSpan) -> str:
    """How a message names a span: document, id, offsets, label and (a bounded excerpt of) its text."""
    return f"document {doc.ident}: {_span(doc, span)}"


def _span(doc: SpanDocument, span: CharSpan) -> str:
    start, end = max(0, min(span.start, len(doc.text))), max(0, min(span.end, len(doc.text)))
    excerpt = doc.text[start:end]
    excerpt = excerpt if len(excerpt) <= 60 else excerpt[:57] + "..."
    ident = f" {span.ident}" if span.ident else ""
    return f"span{ident} [{span.start}, {span.end}) {span.label} {excerpt!r}"


def _fault(doc: SpanDocument, span: CharSpan) -> str:
    """Why ``span`` cannot be aligned, or ``""``."""
    if not isinstance(span.label, str) or not span.label or any(c.isspace() for c in span.label):
        return f"label {span.label!r} cannot be a tag type (expected a non-empty name without whitespace)"
    if span.start == span.end:
        return "empty (start == end)"
    if span.start > span.end:
        return "ends before it starts"
    if span.start < 0 or span.end > len(doc.text):
        return f"out of range (the text has {len(doc.text)} characters)"
    if all(c.isspace() or c in _BLANK for c in doc.text[span.start:span.end]):
        return "covers only whitespace"
    return ""


def _trim(text: str, span: CharSpan) -> CharSpan:
    start, end = span.start, span.end
    while text[start].isspace() or text[start] in _BLANK:
        start += 1
    while text[end - 1].isspace() or text[end - 1] in _BLANK:
        end -= 1
    return span if (start, end) == (span.start, span.end) else CharSpan(start, end, span.label, span.line, span.ident)


def _checked(doc: SpanDocument, report: AlignmentReport, strict: bool) -> list[CharSpan]:
    """The spans that can be aligned, trimmed; the others reported as unaligned."""
    kept = []
    for span in doc.spans:
        report.spans_read += 1
        fault = _fault(doc, span)
        if fault:
            report.unaligned += 1
            problem(report, doc.span_path or doc.path, span.line, f"{describe(doc, span)}: {fault}", strict=strict)
            continue
        trimmed = _trim(doc.text, span)
        report.trimmed += trimmed is not span
        kept.append(trimmed)
    return kept


def _without_overlaps(doc: SpanDocument, spans: list[CharSpan], report: AlignmentReport,
                      strict: bool) -> list[CharSpan]:
    """The longest of overlapping spans (the earliest on ties, then the first read), in text order; the others
    are reported in the order read."""
    owner = [-1] * len(doc.text)  # each character's kept span (an index into kept), -1 where none holds it
    kept: list[CharSpan] = []
    dropped: list[tuple[int, CharSpan, CharSpan]] = []
    for k in sorted(range(len(spans)), key=lambda k: (spans[k].start - spans[k].end, spans[k].start, k)):
        span = spans[k]
        # every kept span is at least as long, so one that overlaps this span holds its first or last character
        held = owner[span.start] if owner[span.start] >= 0 else owner[span.end - 1]
        if held < 0:
            owner[span.start:span.end] = [len(kept)] * (span.end - span.start)  # kept spans never overlap: linear
            kept.append(span)
        else:
            dropped.append((k, span, kept[held]))
    kept.sort(key=lambda s: s.start)
    for _, span, rival in sorted(dropped, key=lambda d: d[0]):
        report.overlaps_dropped += 1
        how = "duplicates" if (rival.start, rival.end) == (span.start, span.end) else "overlaps"
        problem(report, doc.span_path or doc.path, span.line,
                f"{describe(doc, span)}: dropped, it {how} the span kept, {_span(doc, rival)}"
                f" (policy: keep the longest, the earliest on ties)", strict=strict)
    return kept


class _Tokens:
    """A document's tokens in order (words, offsets), and the index of each sentence's first token."""

    def __init__(self, text: str) -> None:
        self.words: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.firsts: list[int] = []
        for sentence in sentence_tokens(text):
            self.firsts.append(len(self.words))
            self.words.extend(sentence.words)
            self.starts.extend(sentence.starts)
            self.ends.extend(sentence.ends)

    def split_at(self, text: str, edges: Sequence[int]) -> tuple[set[int], int]:
        """Cut every token at the ``edges`` (sorted) inside it; returns the edges that cut one and how many
        tokens were cut."""
        words, starts, ends, firsts = [], [], [], []
        cuts: set[int] = set()
        sentence = cut = 0
        for k, (word, start, end) in enumerate(zip(self.words, self.starts, self.ends)):
            while sentence < len(self.firsts) and self.firsts[sentence] == k:
                firsts.append(len(words))
                sentence += 1
            inside = edges[bisect_right(edges, start):bisect_left(edges, end)]
            if not inside:
                words.append(word)
                starts.append(start)
                ends.append(end)
                continue
            cuts.update(inside)
            cut += 1
            bounds = [start, *inside, end]
            as_is = text[start:end] == word  # else the token is text normalized to NFC; so are its pieces
            words.extend(text[a:b] if as_is else unicodedata.normalize("NFC", text[a:b])
                         for a, b in zip(bounds, bounds[1:]))
            starts.extend(bounds[:-1])
            ends.extend(bounds[1:])
        self.words, self.starts, self.ends, self.firsts = words, starts, ends, firsts
        return cuts, cut


def _chunks(doc: SpanDocument, spans: list[CharSpan], tokens: _Tokens, report: AlignmentReport,
            strict: bool) -> list[Chunk]:
    """The spans as token chunks ``(label, first, end)`` of the document; one with no token boundary at an
    edge (which splitting should rule out) is reported as unaligned."""
    chunks = []
    for span in spans:
        i, j = bisect_left(tokens.starts, span.start), bisect_left(tokens.ends, span.end)
        if i < len(tokens.starts) and j < len(tokens.ends) and i <= j and tokens.starts[i] == span.start \
                and tokens.ends[j] == span.end:
            chunks.append((span.label, i, j + 1))
            report.aligned += 1
            continue
        report.unaligned += 1
        problem(report, doc.span_path or doc.path, span.line,
                f"{describe(doc, span)}: no token starts and ends at its edges", strict=strict)
    return chunks


def _join_sentences(firsts: list[int], chunks: list[Chunk]) -> tuple[list[int], int]:
    """The sentence starts left once no chunk crosses one, and how many were removed."""
    crossed = set()
    for _, first, end in chunks:
        crossed.update(firsts[bisect_right(firsts, first):bisect_left(firsts, end)])
    return [f for f in firsts if f not in crossed], len(crossed)


def align_document(doc: SpanDocument, report: AlignmentReport | None = None, *,
                   strict: bool = False) -> list[ColumnSentence]:
    """The sentences of ``doc`` with IOB2 tags for its spans (module docstring for the policy); ``report``
    gets the counts and problems (strict: the first problem raises DataFormatError).

    Each sentence has the columns ``word`` and ``ner``; ``extra`` holds ``doc_id``, ``text`` (the document's),
    ``span`` (the sentence's ``[start, end)`` in it), ``offsets`` (each token's) and ``lines`` (each token's
    line in ``doc.path``); the first sentence of a document has ``doc_start``."""
    report = report if report is not None else AlignmentReport()
    report.documents += 1
    spans = _without_overlaps(doc, _checked(doc, report, strict), report, strict)
    tokens = _Tokens(doc.text)
    cuts, cut = tokens.split_at(doc.text, sorted({edge for s in spans for edge in (s.start, s.end)}))
    report.split_tokens += cut
    chunks = _chunks(doc, spans, tokens, report, strict)
    report.split_spans += sum(s.start in cuts or s.end in cuts for s in spans)
    firsts, merged = _join_sentences(tokens.firsts, chunks)
    report.merged_sentences += merged
    lines = _lines(doc, tokens.starts)
    out = []
    chunk_firsts = [first for _, first, _ in chunks]  # in text order, as the spans kept are
    for n, (begin, stop) in enumerate(zip(firsts, [*firsts[1:], len(tokens.words)])):
        inside = [(label, a - begin, b - begin)
                  for label, a, b in chunks[bisect_left(chunk_firsts, begin):bisect_left(chunk_firsts, stop)]]
        out.append(ColumnSentence(
            {WORD: tuple(tokens.words[begin:stop]), TAG: tuple(from_spans(inside, stop - begin, SCHEME))},
            path=doc.path, line=lines[begin], doc_start=n == 0,
            extra={"doc_id": doc.ident, "text": doc.text, "span": (tokens.starts[begin], tokens.ends[stop - 1]),
                   "offsets": tuple(zip(tokens.starts[begin:stop], tokens.ends[begin:stop])),
                   "lines": tuple(lines[begin:stop])}))
    report.sentences += len(out)
    return out


def _lines(doc: SpanDocument, starts: list[int]) -> list[int]:
    """Each token's line in ``doc.path``: the document's line, or for a raw text that line plus the newlines
    before the token."""
    if not doc.raw_text:
        return [doc.line] * len(starts)
    newlines = [k for k, c in enumerate(doc.text) if c == "\n"]
    return [doc.line + bisect_left(newlines, start) for start in starts]


def align_documents(documents: Iterable[SpanDocument], report: AlignmentReport, *,
                    strict: bool = False) -> Iterator[ColumnSentence]:
    """:func:`align_document` over a stream of documents, one report for all."""
    for doc in documents:
        yield from align_document(doc, report, strict=strict)


def documents_of(sentences: Iterable[ColumnSentence], *, word_column: str = WORD,
                 tag_column: str = TAG) -> Iterator[SpanDocument]:
    """The inverse of alignment, for the writers: sentences grouped into documents with character spans.

    Consecutive sentences with one ``extra["doc_id"]`` and ``extra["text"]`` (an offset reader's) form that
    document, spans at their tokens' offsets. A sentence without them (from a CoNLL file) is a document of its
    own, its words joined by spaces. Tags are read in any scheme (:func:`seqlab.data.schemes.spans`).
    ``extra["relations"]``, ``(head, tail, label)`` among a sentence's spans, become the document's relations."""
    group: list[ColumnSentence] = []
    count = 0
    for sentence in sentences:
        if group and not _same_document(group[-1], sentence):
            count += 1
            yield _document(group, count, word_column, tag_column)
            group = []
        group.append(sentence)
    if group:
        yield _document(group, count + 1, word_column, tag_column)


def _same_document(a: ColumnSentence, b: ColumnSentence) -> bool:
    return (not b.doc_start and a.extra.get("offsets") is not None and b.extra.get("offsets") is not None
            and a.extra.get("doc_id") == b.extra.get("doc_id") and a.extra.get("text") is b.extra.get("text"))


def _document(group: list[ColumnSentence], number: int, word_column: str, tag_column: str) -> SpanDocument:
    first = group[0]
    text = first.extra.get("text")
    if isinstance(text, str) and first.extra.get("offsets") is not None:
        offsets_of = [s.extra["offsets"] for s in group]
    else:  # a sentence without offsets: its words joined by spaces
        words = first[word_column]
        text = " ".join(words)
        ends = [sum(map(len, words[:k + 1])) + k for k in range(len(words))]
        offsets_of = [tuple((end - len(w), end) for w, end in zip(words, ends))]
    spans: list[CharSpan] = []
    relations: list[tuple[int, int, str]] = []  # extra["relations"]: (head, tail, label) among a sentence's spans
    for s, offsets in zip(group, offsets_of):
        first_span = len(spans)
        spans.extend(CharSpan(offsets[a][0], offsets[b - 1][1], label, s.line)
                     for label, a, b in tag_spans(s[tag_column]))
        relations.extend((first_span + h, first_span + t, label) for h, t, label in s.extra.get("relations", ()))
    ident = first.extra.get("doc_id") or f"doc{number:05d}"
    return SpanDocument(str(ident), text, tuple(spans), path=first.path, line=first.line, relations=tuple(relations))
