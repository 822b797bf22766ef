"""Windows over long piece sequences and pooling of pieces to words (no transformer needed)."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from seqlab.modules.subwords import piece_windows, pool, pooling_index


@given(n=st.integers(0, 300), size=st.integers(1, 40), data=st.data())
def test_windows_cover_every_piece_and_give_each_the_window_with_most_context(n, size, data):
    stride = data.draw(st.integers(1, size))
    windows, where = piece_windows(n, size, stride)
    assert len(where) == n and windows[0].start == 0
    assert all(w.end - w.start <= size for w in windows)
    assert all(b.start - a.start == stride for a, b in zip(windows, windows[1:]))
    assert windows[-1].end == n or n == 0
    for i, (w, position) in enumerate(where):
        assert windows[w].start + position == i  # the piece is read where it is
        best = max(min(i - x.start, x.end - 1 - i) for x in windows if x.start <= i < x.end)
        assert min(position, windows[w].end - 1 - i) == best


def test_a_sentence_within_the_limit_is_one_window():
    windows, where = piece_windows(5, 8, 4)
    assert [(w.start, w.end) for w in windows] == [(0, 5)]
    assert where == [(0, i) for i in range(5)]


def test_an_over_long_sentence_is_read_in_overlapping_windows_not_truncated():
    windows, where = piece_windows(10, 4, 2)
    assert [(w.start, w.end) for w in windows] == [(0, 4), (2, 6), (4, 8), (6, 10)]
    assert [w for w, _ in where] == [0, 0, 0, 1, 1, 2, 2, 3, 3, 3]  # each piece away from its window's edges


@pytest.mark.parametrize("size, stride", [(0, 1), (4, 0), (4, 5)])
def test_bad_window_settings_are_refused(size, stride):
    with pytest.raises(ValueError, match="1 <= stride <= size"):
        piece_windows(10, size, stride)


@pytest.mark.parametrize("pooling, pieces, words", [
    ("first", [0, 1, 4], [0, 1, 2]),
    ("last", [0, 3, 4], [0, 1, 2]),
    ("mean", [0, 1, 2, 3, 4], [0, 1, 1, 1, 2]),
])
def test_pooling_picks_a_words_pieces(pooling, pieces, words):
    assert pooling_index([1, 3, 1], pooling) == (pieces, words)


def test_pooled_vectors_are_the_mean_of_the_chosen_pieces():
    vectors = torch.arange(10.0).view(5, 2)  # shape: (5 pieces, 2)
    pieces, words = pooling_index([1, 3, 1], "mean")
    out = pool(vectors, torch.tensor(pieces), torch.tensor(words), 3)
    assert torch.equal(out, torch.stack([vectors[0], vectors[1:4].mean(0), vectors[4]]))


def test_a_word_without_pieces_is_refused():
    with pytest.raises(ValueError, match="word 1 has no pieces"):
        pooling_index([2, 0, 1], "mean")
