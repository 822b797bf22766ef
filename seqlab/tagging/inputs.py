"""Checks of what a caller hands the tagging API: one-line errors naming the argument, never a traceback.

Text must be valid Unicode (a lone surrogate such as ``"\\ud800"``, which JSON and Python strings can carry, is
refused with its position); pre-tokenised input must be a list of token lists, each token a string
(:func:`check_token`: the one rule for a token, the same as ``seqlab eval`` reads from a file, where a TAB-separated
line may hold an empty or whitespace-only token); sizes must be positive integers.
"""
from __future__ import annotations

from typing import Any, Sequence

from seqlab.core.errors import SeqlabError


def check_positive(name: str, value: Any) -> int:
    """``value`` as a positive int, or an error naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SeqlabError(f"{name}: expected a positive integer, got {value!r}")
    return value


def check_text(text: Any, where: str) -> str:
    """``text`` checked to be a string of valid Unicode (no lone surrogate)."""
    if not isinstance(text, str):
        raise SeqlabError(f"{where}: expected a string, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise SeqlabError(f"{where}: character {err.start + 1} is a lone surrogate ({text[err.start]!r}), not "
                          "valid Unicode text; decode the input as UTF-8 (errors='replace' keeps the rest)") from None
    return text


def check_token(token: Any, where: str) -> str:
    """``token`` checked to be a string of valid Unicode. An empty or whitespace-only token is one, as in a
    TAB-separated CoNLL file that ``seqlab eval`` reads (``<TAB>O``: some public Twitter files hold such tokens)."""
    if not isinstance(token, str):
        raise SeqlabError(f"{where}: expected a token string, got {type(token).__name__} {token!r}")
    return check_text(token, where)


def check_token_sentences(sentences: Any) -> list[list[str]]:
    """Pre-tokenised sentences checked: a sequence (not a string) of token sequences, every token a string."""
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, Sequence):
        raise SeqlabError(f"tag_tokens: expected a list of sentences, each a list of token strings, got "
                          f"{type(sentences).__name__} (for raw text use tag() or tag_many())")
    checked = []
    for number, tokens in enumerate(sentences, start=1):
        if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
            raise SeqlabError(f"tag_tokens: sentence {number}: expected a list of token strings, got "
                              f"{type(tokens).__name__}")
        for position, token in enumerate(tokens, start=1):
            check_token(token, f"tag_tokens: sentence {number}, token {position}")
        checked.append(list(tokens))
    return checked
