"""fastText skip-gram vectors from a sentence stream: trained for real on a tiny corpus, checked by neighbours."""
from __future__ import annotations

import logging
import os
import random

import numpy as np
import pytest

pytest.importorskip("fasttext")

from features.skipgram import train_skipgram  # noqa: E402
from features.vocab import Embeddings  # noqa: E402


def _sentences(n: int = 3000, seed: int = 0) -> list[list[str]]:
    """Two word families in disjoint contexts: cat/dog/cow after "the ... barked", red/blue/green before "paint"."""
    rng = random.Random(seed)
    animals, colours = ["cat", "dog", "cow"], ["red", "blue", "green"]
    out = []
    for _ in range(n):
        if rng.random() < 0.5:
            out.append(["the", rng.choice(animals), "ran", "across", "the", "farm", "yard"])
        else:
            out.append(["we", "bought", rng.choice(colours), "paint", "for", "the", "wall"])
    return out


def _cos(vectors: Embeddings, a: str, b: str) -> float:
    x, y = vectors([a])[0], vectors([b])[0]
    return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))


def test_words_sharing_contexts_are_closer_than_words_that_do_not():
    vectors = train_skipgram(_sentences(), dim=20, epochs=20, negatives=10, min_count=1, maxn=0, progress=False)
    assert isinstance(vectors, Embeddings) and vectors.dim == 20 and "</s>" not in vectors
    assert vectors.stats.windows_seen == 3000 * 7 * 20 and np.isnan(vectors.stats.final_loss)
    animals, colours = ["cat", "dog", "cow"], ["red", "blue", "green"]
    within = min(_cos(vectors, a, b) for group in (animals, colours) for a in group for b in group if a != b)
    across = max(_cos(vectors, a, b) for a in animals for b in colours)
    assert within > across + 0.2, (within, across)  # measured: within 0.99, across 0.51-0.57


def test_the_kept_model_gives_the_same_vectors_and_sub_word_vectors_for_unseen_words(tmp_path):
    import fasttext

    model = tmp_path / "model.bin"
    vectors = train_skipgram(_sentences(300), dim=10, epochs=1, min_count=1, bucket=1000, progress=False,
                             model_out=model)
    reloaded = fasttext.load_model(str(model))
    np.testing.assert_allclose(reloaded.get_word_vector("cat"), vectors(["cat"])[0], rtol=1e-6)
    assert "catdog" not in vectors and np.abs(reloaded.get_word_vector("catdog")).sum() > 0


def test_min_count_drops_rare_words_and_an_empty_result_is_refused():
    vectors = train_skipgram(_sentences(200) + [["zebra"]], dim=10, epochs=1, min_count=2, bucket=1000,
                             progress=False)
    assert "cat" in vectors and "zebra" not in vectors
    with pytest.raises(ValueError, match="no word is seen 1000 times"):
        train_skipgram(_sentences(20), dim=10, epochs=1, min_count=1000, bucket=1000, progress=False)
    with pytest.raises(ValueError, match="the corpus has no tokens"):
        train_skipgram([[], []], dim=10, progress=False)


def test_defaults_follow_the_corpus_and_the_cores_and_a_redirected_stderr_gets_one_summary(capfd, caplog,
                                                                                              monkeypatch):
    import fasttext

    from features import fasttext_train

    real, seen = fasttext.train_unsupervised, []

    def spy(*args, **kwargs):
        seen.append((kwargs["bucket"], kwargs["thread"], len(os.sched_getaffinity(0)), kwargs["verbose"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(fasttext, "train_unsupervised", spy)
    monkeypatch.setattr(fasttext_train, "available_cores", lambda: 1)  # a one-core machine
    with caplog.at_level(logging.INFO, logger="features"):
        vectors = train_skipgram(_sentences(300), dim=10, epochs=1, min_count=1, progress=True)
    words = len(vectors) + 1  # fastText's dictionary also holds </s>
    # 20 buckets a word, not 2,000,000; one core (fastText's 10 threads pinned to it); no progress off a terminal
    assert seen == [(fasttext_train.BUCKETS_PER_WORD * words, fasttext_train.MIN_THREADS, 1, 0)]
    stderr = capfd.readouterr().err  # fastText writes to file descriptor 2 itself
    assert "Progress" not in stderr and "Read " not in stderr and "\r" not in stderr
    summary = [r.getMessage() for r in caplog.records if r.getMessage().startswith("fastText skip-gram:")]
    assert summary == [f"fastText skip-gram: {len(vectors)} words of dim 10 ({20 * words} sub-word buckets) from "
                       f"2,100 tokens x 1 epochs in {vectors.stats.seconds:.1f} s "
                       f"({vectors.stats.windows_per_second:,.0f} tokens/s)"]
    assert any("model about" in r.getMessage() and "training on 1 core(s) (10 threads" in r.getMessage()
               for r in caplog.records)
