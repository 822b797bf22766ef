"""features.fasttext_train: every row of fastText's input matrix initialised, whatever memory held; retries."""
from __future__ import annotations

import logging
import random
from pathlib import Path

import numpy as np
import pytest

from features.fasttext_train import MIN_THREADS, healthy, train_unsupervised, vocabulary_size, whole_bucket

fasttext = pytest.importorskip("fasttext")

TINY = dict(model="skipgram", dim=8, min_count=1, epoch=1, bucket=5_003, verbose=0, lr=1e-6)


@pytest.fixture()
def corpus(tmp_path) -> Path:
    rng = random.Random(0)
    vocab = "the cat sat on a mat dog ran in park Paris London city river __label__x".split()
    path = tmp_path / "corpus.txt"
    lines = [" ".join(rng.choices(vocab, k=9)) for _ in range(30)]
    path.write_bytes(("\n".join(lines) + "\n  \tcat\0dog once\n").encode("utf-8"))
    return path


def stale_memory(floats: int) -> None:
    """Leave freed heap blocks full of 3e38, as a process that has worked a while does."""
    for _ in range(3):
        blocks = [np.full(floats // 4, 3e38, dtype=np.float32) for _ in range(4)]
        del blocks


def test_vocabulary_size_counts_as_fasttext_does(corpus):
    for min_count in (1, 2, 5):
        model = fasttext.train_unsupervised(str(corpus), model="skipgram", dim=10, minCount=min_count, epoch=1,
                                            bucket=100, verbose=0, thread=10)
        assert vocabulary_size(str(corpus), min_count) == len(model.words)


def test_whole_bucket_makes_rows_times_dim_a_multiple_of_ten(corpus):
    words = vocabulary_size(str(corpus), 1)
    for dim, bucket in ((8, 5_003), (7, 100), (3, 1)):
        grown = whole_bucket(str(corpus), dim, bucket, 1)
        assert bucket <= grown < bucket + 10 and (words + grown) * dim % 10 == 0
    assert whole_bucket(str(corpus), 50, 5_003, 1) == 5_003  # a multiple of 10 needs no change
    with pytest.raises(ValueError, match=f"last {words * 8 % 10} coefficients .* choose a dim that is a multiple"):
        whole_bucket(str(corpus), 8, 5_003, 1, subwords=False)  # fastText drops the buckets: nothing to pad


def test_every_row_is_initialised_even_from_stale_memory(corpus):
    # fastText 0.9.3 with thread=1 writes only the first tenth of its input matrix; the rest is zero in a
    # fresh process and stale floats (1e20 vectors, "Encountered NaN.") in a used one
    for _ in range(3):
        stale_memory(4 * 8 * 5_013)
        model = train_unsupervised(str(corpus), thread=1, **TINY)
        matrix = model.get_input_matrix()
        assert model.f.getArgs().thread == MIN_THREADS and healthy(model)
        assert (np.abs(matrix).max(axis=1) > 0).all()  # no row left at zero
        assert np.abs(matrix).max() <= 1 / 8 + 1e-4  # fastText's uniform(-1/dim, 1/dim), barely trained
        assert matrix.shape[0] * 8 % 10 == 0


def test_nan_and_huge_coefficients_are_retried_then_reported(corpus, monkeypatch, caplog):
    real, calls = fasttext.train_unsupervised, []

    def flaky(*args, **kwargs):
        calls.append(kwargs["thread"])
        if len(calls) == 1:
            raise RuntimeError("Encountered NaN.")
        model = real(*args, **kwargs)
        if len(calls) == 2:
            model.get_input_matrix = lambda: np.full((3, 8), 1e20, dtype=np.float32)
        return model

    monkeypatch.setattr(fasttext, "train_unsupervised", flaky)
    with caplog.at_level(logging.WARNING):
        model = train_unsupervised(str(corpus), thread=2, **TINY)
    assert calls == [MIN_THREADS] * 3 and healthy(model)
    assert "Encountered NaN." in caplog.text and "beyond 10000" in caplog.text and "(3 of 3)" in caplog.text

    def nan(*args, **kwargs):
        raise RuntimeError("Encountered NaN.")

    monkeypatch.setattr(fasttext, "train_unsupervised", nan)
    with pytest.raises(ValueError, match=r"failed 3 times \(Encountered NaN\.\); try a lower learning rate"):
        train_unsupervised(str(corpus), **TINY)
