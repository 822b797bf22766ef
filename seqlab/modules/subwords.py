"""Sub-word pieces ↔ the toolkit's tokens: windows over long sentences, and pooling pieces back to words.

A transformer reads word pieces (WordPiece, BPE), at most a fixed number at a time; the taggers and the
relation classifier want one vector per token. :func:`piece_windows` cuts a sentence's pieces into
overlapping windows (never truncating it), and gives each piece the window in which it has the most
context on both sides, as in the sliding-window reading of BERT for long documents (Devlin et al. 2019
§4.2, SQuAD); :func:`pooling_index` says which piece vectors make each token's vector.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

POOLINGS = ("first", "mean", "last")


@dataclass(frozen=True)
class Window:
    """``pieces[start:end]`` of one sentence, read as one transformer input."""

    start: int
    end: int


def piece_windows(n: int, size: int, stride: int) -> tuple[list[Window], list[tuple[int, int]]]:
    """Windows of at most ``size`` pieces, starting every ``stride`` pieces, that cover ``n`` pieces, and for
    each piece ``(window, position in it)``: the window whose edges are furthest from it.

    ``stride <= size``; consecutive windows overlap by ``size - stride`` pieces.
    """
    if size < 1 or not 1 <= stride <= size:
        raise ValueError(f"window size and stride must satisfy 1 <= stride <= size, but got {size} and {stride}")
    starts = [0]
    while starts[-1] + size < n:
        starts.append(starts[-1] + stride)
    windows = [Window(s, min(s + size, n)) for s in starts]
    where: list[tuple[int, int]] = []
    w = 0
    for i in range(n):
        # windows are in order, so the best one for piece i is never before the best one for piece i - 1
        while w + 1 < len(windows) and windows[w + 1].start <= i and \
                _context(windows[w + 1], i) >= _context(windows[w], i):
            w += 1
        where.append((w, i - windows[w].start))
    return windows, where


def _context(window: Window, i: int) -> int:
    """How many pieces piece ``i`` has on its shorter side inside ``window`` (-1 if outside)."""
    if not window.start <= i < window.end:
        return -1
    return min(i - window.start, window.end - 1 - i)


def pooling_index(pieces_per_word: Sequence[int], pooling: str) -> tuple[list[int], list[int]]:
    """(piece, word) pairs whose piece vectors are averaged into each word's vector: every piece for
    ``mean``, a word's first or last piece for ``first`` / ``last``. Every word needs at least one piece."""
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, but got {pooling!r}")
    pieces: list[int] = []
    words: list[int] = []
    at = 0
    for word, count in enumerate(pieces_per_word):
        if count < 1:
            raise ValueError(f"word {word} has no pieces; give unknown words the unknown piece")
        chosen = range(at, at + count) if pooling == "mean" else [at if pooling == "first" else at + count - 1]
        pieces.extend(chosen)
        words.extend([word] * len(chosen))
        at += count
    return pieces, words


def pool(vectors: torch.Tensor, pieces: torch.Tensor, words: torch.Tensor, n_words: int) -> torch.Tensor:
    """Average ``vectors[pieces]`` into ``n_words`` rows by ``words`` (the pairs of :func:`pooling_index`)."""
    out = vectors.new_zeros(n_words, vectors.shape[-1])  # shape: (W, D)
    out.index_add_(0, words, vectors[pieces])
    counts = torch.bincount(words, minlength=n_words).clamp(min=1).to(vectors.dtype)  # shape: (W,)
    return out / counts.unsqueeze(-1)  # shape: (W, D)
