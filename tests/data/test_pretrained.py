"""The initial word-embedding matrix (seqlab.data.pretrained.embedding_matrix): pretrained rows, random rows, scaling."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from seqlab.data.pretrained import embedding_matrix
from seqlab.tagging.config import ConfigError, EmbeddingsConfig
from seqlab.data.vocab import Vocab

DIM = 4


def table(n_found: int = 300, n_random: int = 300) -> tuple[Vocab, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    found = {f"w{i}": rng.normal(0.5, 2.0, DIM).astype(np.float32) for i in range(n_found)}
    return Vocab(list(found) + [f"r{i}" for i in range(n_random)]), found


def test_pretrained_rows_are_copied_and_the_rest_drawn_uniform():
    words, found = table()
    matrix = embedding_matrix(words, found, DIM, seed=1)
    assert torch.equal(matrix[0], torch.zeros(DIM))  # padding
    for word, vec in found.items():
        assert torch.equal(matrix[words.stoi[word]], torch.from_numpy(vec))
    rest = matrix[[words.stoi[f"r{i}"] for i in range(300)]]
    assert rest.abs().max() <= math.sqrt(3.0 / DIM)
    assert torch.equal(embedding_matrix(words, found, DIM, seed=1), matrix)


def test_scale_rescales_the_pretrained_rows_together_and_draws_the_rest_at_the_same_std():
    words, found = table(n_random=3000)
    plain = embedding_matrix(words, found, DIM, seed=1)
    scaled = embedding_matrix(words, found, DIM, seed=1, scale=0.1)
    rows = [words.stoi[w] for w in found]
    assert scaled[rows].double().std(unbiased=False).item() == pytest.approx(0.1, rel=1e-5)
    ratio = scaled[rows] / plain[rows]  # one factor for the whole matrix: directions and relative norms are kept
    assert torch.allclose(ratio, ratio.flatten()[0].expand_as(ratio), rtol=1e-5)
    rest = scaled[[words.stoi[f"r{i}"] for i in range(3000)]]
    assert rest.abs().max() <= math.sqrt(3.0) * 0.1
    assert rest.std().item() == pytest.approx(0.1, rel=0.05)
    assert torch.equal(scaled[0], torch.zeros(DIM))


def test_scale_must_be_positive():
    assert EmbeddingsConfig(scale=0.5).scale == 0.5 and EmbeddingsConfig().scale is None
    with pytest.raises(ConfigError, match="model.embeddings.scale"):
        EmbeddingsConfig(scale=0.0)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_scale_and_forget_bias_must_be_finite(value):
    from seqlab.tagging.config import ModelConfig

    with pytest.raises(ConfigError, match="model.embeddings.scale: expected a positive finite std"):
        EmbeddingsConfig(scale=value)
    with pytest.raises(ConfigError, match="model.forget_bias: expected a finite number"):
        ModelConfig(forget_bias=value)


def test_scale_refuses_pretrained_vectors_without_spread():
    from seqlab.core.errors import SeqlabError

    words = Vocab(["a", "b"])
    found = {"a": np.full(DIM, 0.5, np.float32), "b": np.full(DIM, 0.5, np.float32)}
    with pytest.raises(SeqlabError, match="2 pretrained vectors found all hold one value"):
        embedding_matrix(words, found, DIM, seed=1, scale=0.1)
    assert torch.equal(embedding_matrix(words, found, DIM, seed=1)[2], torch.full((DIM,), 0.5))
