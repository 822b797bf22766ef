"""Raw text → the sentences of words a model reads, tokenized the way its training data was.

English goes through :func:`features.tokenize.sentence_tokens` as it always has. Any other language: spaCy's
rule-based tokenizer (:func:`seqlab.text.tokenizers.word_spans`), the cuts and joins learned from the training data
(:class:`seqlab.text.learned.Adaptations`), the sentence splitter, then the multiword tokens expanded into their
words; the words of one multiword token share its character offsets (as :func:`seqlab.data.conllu.read_conllu`
reads them), which is how a :class:`seqlab.tagging.document.Sentence` and the CoNLL-U writer know its surface form.
"""
from __future__ import annotations

from features.tokenize import SentenceTokens, sentence_tokens
from seqlab.text.learned import MAX_MERGE, Adaptations, pattern, shape
from seqlab.text.tokenizers import ENGLISH, Span, split_sentences, word_spans


class TextPipeline:
    """A language's raw-text path, with what a treebank taught it (``adaptations``; None: the base rules only)."""

    def __init__(self, language: str, adaptations: Adaptations | None = None) -> None:
        self.language, self.adaptations = language, adaptations

    def sentences(self, text: str) -> list[SentenceTokens]:
        """``text`` as sentences of words with their ``[start, end)`` offsets into it."""
        if self.language == ENGLISH:
            return sentence_tokens(text)
        spans = word_spans(text, self.language)
        if self.adaptations is not None:
            spans = merge(text, cut(text, spans, self.adaptations), self.adaptations)
        return [self._words(text, sentence) for sentence in split_sentences(text, spans, self.language)]

    def _words(self, text: str, spans: list[Span]) -> SentenceTokens:
        tokens = [text[s:e] for s, e in spans]
        table = self.adaptations.multiwords if self.adaptations is not None else None
        out = SentenceTokens([], [], [])
        for k, (start, end) in enumerate(spans):
            words = (table.words(tokens, k) if table is not None else None) or [tokens[k]]
            out.words.extend(words)
            out.starts.extend([start] * len(words))
            out.ends.extend([end] * len(words))
        return out


def _pieces(token: str, adaptations: Adaptations) -> list[int]:
    """The lengths of the pieces the training data cuts ``token`` into (``[len(token)]``: left whole)."""
    if token in adaptations.splits and sum(adaptations.splits[token]) == len(token):
        return adaptations.splits[token]
    low, head, tail = token.lower(), 0, 0
    for prefix in sorted(adaptations.prefixes, key=len, reverse=True):
        if len(low) > len(prefix) and low.startswith(prefix):
            head = len(prefix)
            break
    for suffix in sorted(adaptations.suffixes, key=len, reverse=True):
        if len(low) - head > len(suffix) and low.endswith(suffix):
            tail = len(suffix)
            break
    return [n for n in (head, len(token) - head - tail, tail) if n]


def cut(text: str, spans: list[Span], adaptations: Adaptations) -> list[Span]:
    """``spans`` with every token the training data splits cut into its pieces."""
    out: list[Span] = []
    for start, end in spans:
        for length in _pieces(text[start:end], adaptations):
            out.append((start, start + length))
            start += length
    return out


def _joins(run: str, n: int, adaptations: Adaptations) -> bool:
    return adaptations.merges.get(shape(run)) == n or adaptations.patterns.get(pattern(run)) == n


def merge(text: str, spans: list[Span], adaptations: Adaptations) -> list[Span]:
    """``spans`` with each run of tokens whose shape or pattern the training data has as one token joined, longest
    first."""
    if not adaptations.merges and not adaptations.patterns:
        return spans
    out, k = [], 0
    while k < len(spans):
        n = next((n for n in range(min(MAX_MERGE, len(spans) - k), 1, -1)
                  if _joins(text[spans[k][0]:spans[k + n - 1][1]], n, adaptations)), 1)
        out.append((spans[k][0], spans[k + n - 1][1]))
        k += n
    return out


def token_sentence(tokens: list[str]) -> tuple[str, SentenceTokens]:
    """Pre-tokenized ``tokens`` as a text (the tokens joined by single spaces) and its one sentence, with offsets."""
    starts, cursor = [], 0
    for token in tokens:
        starts.append(cursor)
        cursor += len(token) + 1
    return " ".join(tokens), SentenceTokens(list(tokens), starts, [s + len(t) for s, t in zip(starts, tokens)])
