"""Tokenizers and sentence splitters by language, for raw text.

English (``en``) is tokenized and split by :mod:`features.tokenize` (CoNLL-2003 rules), unchanged. Every other
language is tokenized by spaCy's rule-based tokenizer for it (``spacy.blank(code)``: prefix, suffix and infix rules
and exceptions, no trained model) and split into sentences at tokens made only of sentence-final punctuation
(spaCy's sentencizer's characters, the ellipsis, and :data:`EXTRA_TERMINALS`), with the closing quotes and brackets
that follow them, and at blank lines.
"""
from __future__ import annotations

import functools
from typing import Any

from seqlab.core.errors import SeqlabError

ENGLISH = "en"
#: Sentence-final characters of a language beyond the sentencizer's: Greek writes its question mark as ``;``.
EXTRA_TERMINALS = {"el": frozenset({";", "\u037e"})}
#: Characters that, after a sentence end, still belong to the sentence (closing quotes and brackets).
CLOSERS = frozenset("\"')]}\u00bb\u201d\u2019")
#: Characters that end a sentence in every language (with spaCy's sentencizer's list, loaded with spaCy).
TERMINALS = frozenset({".", "!", "?", "\u2026", "\u203c", "\u2047", "\u2048", "\u2049", "\u061f", "\u3002"})
INSTALL_HINT = "pip install 'seqlab[languages]' (spaCy's rule-based tokenizers)"

Span = tuple[int, int]


@functools.lru_cache(maxsize=None)
def _blank(language: str) -> Any:
    """spaCy's blank pipeline for ``language`` (its tokenizer only), made once per language."""
    try:
        import spacy
    except ImportError:
        raise SeqlabError(f"raw text in language {language!r} needs spaCy: {INSTALL_HINT}") from None
    try:
        return spacy.blank(language)
    except (ImportError, KeyError, ValueError) as err:
        raise SeqlabError(f"data.language {language!r}: spaCy has no tokenizer for it ({type(err).__name__}); "
                          "pass pre-tokenized input (--tokenized)") from None


@functools.lru_cache(maxsize=None)
def terminals(language: str) -> frozenset[str]:
    """The characters that end a sentence in ``language``."""
    try:
        from spacy.pipeline import Sentencizer
        common = frozenset(Sentencizer.default_punct_chars)
    except ImportError:
        common = frozenset()
    return TERMINALS | common | EXTRA_TERMINALS.get(language, frozenset())


def word_spans(text: str, language: str) -> list[Span]:
    """The ``[start, end)`` character offsets of the tokens of ``text`` by spaCy's rules for ``language``
    (whitespace is not a token)."""
    return [(t.idx, t.idx + len(t.text)) for t in _blank(language).make_doc(text) if not t.is_space]


def _ends(token: str, ends: frozenset[str]) -> bool:
    return all(c in ends for c in token)


def split_sentences(text: str, spans: list[Span], language: str) -> list[list[Span]]:
    """``spans`` (tokens of ``text``, in order) cut into sentences: after a run of sentence-final punctuation and
    the closers that follow it, and at a blank line."""
    ends, out, current = terminals(language), [], []
    for k, (start, end) in enumerate(spans):
        if current and text.count("\n", current[-1][1], start) >= 2:
            out.append(current)
            current = []
        current.append((start, end))
        token = text[start:end]
        nxt = text[spans[k + 1][0]:spans[k + 1][1]] if k + 1 < len(spans) else ""
        if (_ends(token, ends) or (token in CLOSERS and len(current) > 1 and _ended(text, current, ends))) \
                and not _ends(nxt, ends) and nxt not in CLOSERS:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def _ended(text: str, current: list[Span], ends: frozenset[str]) -> bool:
    """Whether the tokens before a run of closers at the end of ``current`` end in sentence-final punctuation."""
    for start, end in reversed(current):
        if text[start:end] not in CLOSERS:
            return _ends(text[start:end], ends)
    return False
