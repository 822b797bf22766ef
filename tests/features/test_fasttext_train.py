"""features.fasttext_train: every row of fastText's input matrix initialised, whatever memory held; retries."""
from __future__ import annotations

import logging
import os
import random
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from features import fasttext_train
from features.fasttext_train import (BUCKETS_PER_WORD, FASTTEXT_BUCKETS, FASTTEXT_THREADS, MIN_THREADS,
                                       default_bucket, default_threads, healthy, model_bytes, train_unsupervised,
                                       verbosity, vocabulary, vocabulary_size, whole_bucket)

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
        if len(calls) == 2:  # huge coefficients where healthy() reads them: fastText's own matrices
            return SimpleNamespace(f=SimpleNamespace(getInputMatrix=lambda: np.full((3, 8), 1e20, dtype=np.float32),
                                                     getOutputMatrix=model.f.getOutputMatrix))
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


def test_healthy_reads_nan_inf_and_huge_values_in_either_matrix():
    def model(inputs, outputs):
        return SimpleNamespace(f=SimpleNamespace(getInputMatrix=lambda: np.array(inputs, dtype=np.float32),
                                                 getOutputMatrix=lambda: np.array(outputs, dtype=np.float32)))

    assert healthy(model([[0.1, -0.2]], [[0.0, 0.0]])) and healthy(model(np.zeros((0, 4)), [[1.0]]))
    for bad in (float("nan"), float("inf"), -float("inf"), 2e4, -2e4):
        assert not healthy(model([[0.1, bad]], [[0.0, 0.0]])) and not healthy(model([[0.1]], [[bad, 0.0]]))


def test_the_default_buckets_follow_the_vocabulary_and_the_model_size_is_estimated(corpus, tmp_path, caplog):
    assert default_bucket(30) == 30 * BUCKETS_PER_WORD and default_bucket(10**6) == FASTTEXT_BUCKETS
    assert default_bucket(30, subwords=False) == 0
    words, word_bytes = vocabulary(str(corpus), 1)
    options = dict(model="skipgram", dim=10, min_count=1, epoch=1, verbose=0)
    with caplog.at_level(logging.INFO, logger="features.fasttext_train"):
        model = train_unsupervised(str(corpus), **options)
    assert model.f.getArgs().bucket == BUCKETS_PER_WORD * words == len(model.get_input_matrix()) - words
    model.save_model(str(tmp_path / "m.bin"))
    size = (tmp_path / "m.bin").stat().st_size
    assert abs(model_bytes(words, word_bytes, BUCKETS_PER_WORD * words, 10) - size) < 0.01 * size
    assert f"{words} words + {BUCKETS_PER_WORD * words} sub-word buckets of dim 10, model about" in caplog.text
    assert train_unsupervised(str(corpus), maxn=0, **options).f.getArgs().bucket == 0  # no sub-words, no buckets


def test_the_default_threads_are_the_cores_at_most_fastText_s_default(monkeypatch):
    for cores, expected in ((1, 1), (2, 2), (12, 12), (64, FASTTEXT_THREADS)):
        monkeypatch.setattr(fasttext_train, "available_cores", lambda: cores)
        assert default_threads() == expected


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs CPU affinity and two cores")
def test_fewer_threads_than_ten_run_ten_pinned_to_that_many_cores(corpus, monkeypatch):
    real, seen = fasttext.train_unsupervised, []

    def spy(*args, **kwargs):
        seen.append((kwargs["thread"], len(os.sched_getaffinity(0))))  # the threads fastText starts inherit it
        return real(*args, **kwargs)

    monkeypatch.setattr(fasttext, "train_unsupervised", spy)
    before = os.sched_getaffinity(0)
    train_unsupervised(str(corpus), thread=1, **TINY)
    train_unsupervised(str(corpus), thread=len(before), **TINY)
    assert seen == [(MIN_THREADS, 1), (MIN_THREADS, len(before))] and os.sched_getaffinity(0) == before
    with pytest.raises(ValueError, match="threads must be a positive integer, but got 0"):
        train_unsupervised(str(corpus), thread=0, **TINY)


def test_fastText_draws_progress_only_on_a_terminal(monkeypatch):
    for tty in (True, False):
        monkeypatch.setattr(os, "isatty", lambda fd, tty=tty: tty and fd == 2)
        assert verbosity(True) == (2 if tty else 0) and verbosity(False) == 0
