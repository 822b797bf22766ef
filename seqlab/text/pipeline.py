"""Raw text → the sentences of words a model reads, tokenized the way its training data was.

English goes through :func:`features.tokenize.sentence_tokens` as it always has. Any other language: spaCy's
rule-based tokenizer (:func:`seqlab.text.tokenizers.word_spans`), the cuts and joins learned from the training data
(:class:`seqlab.text.learned.Adaptations`), the sentence splitter, then the multiword tokens expanded into their
words; the words of one multiword token share its character offsets (as :func:`seqlab.data.conllu.read_conllu`
reads them), which is how a :class:`seqlab.tagging.document.Sentence` and the CoNLL-U writer know its surface form.
"""
from __future__ import annotations

from features.tokenize import SentenceTokens, sentence_tokens
from seqlab.text.learned import MAX_MERGE, Adaptations, char_classes, collapse, shape
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


def merge(text: str, spans: list[Span], adaptations: Adaptations) -> list[Span]:
    """``spans`` with each run of tokens whose shape or pattern the training data has as one token joined, longest
    first. Shapes and letter/digit classes are per character, so they are computed once for the whole text and a
    run's are slices of them; a run's pattern is computed only where its first and last characters' classes match
    a pattern of that length."""
    merges, patterns = adaptations.merges, adaptations.patterns
    if not merges and not patterns:
        return spans
    shaped, classes = shape(text), char_classes(text)
    sizes = sorted({n for n in (*merges.values(), *patterns.values()) if 1 < n <= MAX_MERGE}, reverse=True)
    ends = {n: {(key[0], key[-1]) for key, m in patterns.items() if m == n and key} for n in sizes}
    out, k = [], 0
    while k < len(spans):
        n = 1
        for size in sizes:
            if size > len(spans) - k:
                continue
            start, end = spans[k][0], spans[k + size - 1][1]
            if merges.get(shaped[start:end]) == size or (
                    (classes[start], classes[end - 1]) in ends[size]
                    and patterns.get(collapse(classes[start:end])) == size):
                n = size
                break
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
