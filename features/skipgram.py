"""Skip-gram word vectors with sub-words (fastText: Mikolov et al. 2013, Bojanowski et al. 2017) from a corpus.

:func:`train_skipgram` takes the same sentence stream as :func:`features.cw.train_cw` and
:func:`features.hlbl.train_hlbl` (:func:`features.corpus.read_corpus`), writes it to a temporary
file of space-separated tokens (fastText reads files), trains fastText's skip-gram through
:func:`features.fasttext_train.train_unsupervised` (a fully initialised matrix, checked after
training) and returns the vocabulary's vectors as :class:`features.vocab.Embeddings`. A vector is
fastText's word vector: the word's own row averaged with its character n-grams'. ``model_out``
also keeps the fastText model, whose sub-words give vectors to words outside the vocabulary (the
taggers read it with ``format: fasttext_bin``).

Its sizes follow the corpus and the machine unless given (:mod:`features.fasttext_train`): sub-word buckets 20
per vocabulary word (at most fastText's 2,000,000), threads the cores this process may use (at most fastText's
12); the model's size is logged before training. fastText's progress line is drawn only on a terminal: off one
(a redirected log) the run is summed up in one logged line at the end.

fastText trains Hogwild on several threads and its Python binding (0.9.3) takes no seed: two runs are not
bit-identical.
"""
from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from features.atomic import atomic_path
from features.fasttext_train import train_unsupervised, verbosity
from features.vocab import Embeddings, TrainingStats

logger = logging.getLogger(__name__)

EOS = "</s>"  # fastText's end-of-line token: in its vocabulary, not a word of the corpus


def train_skipgram(sentences: Iterable[Sequence[str]], *, dim: int = 300, window: int = 5, epochs: int = 5,
                   min_count: int = 5, negatives: int = 5, lr: float = 0.05, minn: int = 3, maxn: int = 6,
                   bucket: int | None = None, threads: int | None = None, progress: bool = True,
                   model_out: str | os.PathLike[str] | None = None) -> Embeddings:
    """fastText skip-gram vectors of every word seen ``min_count`` times or more.

    ``window``: context words on each side (fastText samples 1..window per word); ``negatives``: negative
    samples per context word; ``minn``..``maxn``: character n-gram lengths (``maxn`` 0: no sub-words);
    ``bucket``: hash rows for the n-grams (default: 20 per vocabulary word, at most 2,000,000); ``threads``:
    the cores fastText trains on (default: this process's, at most 12; fastText still starts at least
    :data:`features.fasttext_train.MIN_THREADS` threads, pinned to them). ``progress``: fastText's progress
    line, on a terminal only. The stats count the corpus tokens passed over (``windows_seen``); fastText
    reports no loss to Python, so ``final_loss`` is NaN.
    """
    for name, value in (("dim", dim), ("window", window), ("epochs", epochs), ("min_count", min_count),
                        ("negatives", negatives)):
        if value < 1:
            raise ValueError(f"{name} must be a positive integer, but got {value}")
    if not 0.0 < lr < 10.0:
        raise ValueError(f"lr must be in (0, 10), but got {lr}")
    if maxn and not 1 <= minn <= maxn:
        raise ValueError(f"character n-grams need 1 <= minn <= maxn (or maxn 0), but got minn {minn}, maxn {maxn}")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="seqlab-skipgram-") as scratch:
        text = Path(scratch) / "corpus.txt"
        tokens = _write_tokens(sentences, text)
        if tokens == 0:
            raise ValueError("the corpus has no tokens")
        logger.info("training fastText skip-gram on %d tokens (dim %d, window %d, %d epochs, minCount %d)",
                    tokens, dim, window, epochs, min_count)
        try:
            model = train_unsupervised(str(text), model="skipgram", dim=dim, ws=window, epoch=epochs,
                                       min_count=min_count, neg=negatives, lr=lr, minn=minn, maxn=maxn,
                                       bucket=bucket, thread=threads, verbose=verbosity(progress))
        except ValueError as err:
            if "Empty vocabulary" not in str(err):
                raise
            raise ValueError(f"no word is seen {min_count} times or more; lower min_count") from None
    words = [w for w in model.get_words() if w != EOS]
    matrix = np.stack([model.get_word_vector(w) for w in words]).astype(np.float32)  # shape: (V, dim)
    if model_out is not None:
        with atomic_path(model_out) as tmp:
            model.save_model(str(tmp))
    stats = TrainingStats(windows_seen=tokens * epochs, updates=0, seconds=time.perf_counter() - start,
                          final_loss=float("nan"))
    args = model.f.getArgs()
    logger.info("fastText skip-gram: %s words of dim %d (%s sub-word buckets) from %s tokens x %d epochs in %.1f s "
                "(%s tokens/s)", f"{len(words):,}", dim, f"{args.bucket:,}", f"{tokens:,}", epochs, stats.seconds,
                f"{stats.windows_per_second:,.0f}")
    return Embeddings(words, matrix, stats=stats)


def _write_tokens(sentences: Iterable[Sequence[str]], path: Path) -> int:
    """One sentence per line, tokens separated by spaces; returns the number of tokens."""
    tokens = 0
    with path.open("w", encoding="utf-8") as handle:
        for sentence in sentences:
            if sentence:
                handle.write(" ".join(sentence) + "\n")
                tokens += len(sentence)
    return tokens
