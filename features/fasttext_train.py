"""fastText skip-gram training that never starts from leftover memory.

fastText 0.9.3 allocates its input matrix (word rows, then sub-word buckets) without zeroing it and
initialises it in ten blocks, one per training thread (``DenseMatrix::uniform``): with fewer than
ten threads the other blocks are never written and hold whatever the allocator hands out. A fresh
process gets zeroed pages, but in one that has already allocated and freed a few MB (a test suite,
a notebook, a pipeline that trained a tagger first) the matrix starts from stale floats and
training stops with "Encountered NaN." or, worse, ends with vectors of size 1e20.

:func:`train_unsupervised` therefore always trains with at least :data:`MIN_THREADS` threads, which
initialises every block as fastText intends (each block from its own seed, so the initial matrix
does not depend on the thread count; the training that follows is Hogwild and not bit-reproducible).
The last ``rows x dim mod 10`` floats would still escape initialisation, so when ``dim`` is not a
multiple of 10 the bucket count is raised by at most 9 to make ``rows x dim`` one (``rows`` is the
vocabulary size, counted as fastText counts it, plus the buckets). The trained matrices are checked
(finite, bounded) all the same, and training is tried again when they are not.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

#: fastText initialises its input matrix in ten blocks, one per thread.
MIN_THREADS = 10
#: Tries before giving up on a run that keeps producing NaN or huge values.
TRIES = 3
#: A trained coefficient larger than this means training diverged or started from stale memory.
MAX_ABS = 1e4


def vocabulary_size(path: str, min_count: int, label: str = "__label__") -> int:
    """How many word rows fastText's dictionary gives ``path``: whitespace-split byte strings (and the
    end-of-line token ``</s>``) seen at least ``min_count`` times, labels excluded."""
    counts: Counter[bytes] = Counter()
    with open(path, "rb") as handle:
        for line in handle:
            counts.update(line.replace(b"\0", b" ").split())
            if line.endswith(b"\n"):
                counts[b"</s>"] += 1
    prefix = label.encode("utf-8")
    return sum(1 for word, n in counts.items() if n >= min_count and not word.startswith(prefix))


def whole_bucket(path: str, dim: int, bucket: int, min_count: int, subwords: bool = True) -> int:
    """The smallest bucket count >= ``bucket`` for which ``(words + buckets) x dim`` is a multiple of 10.

    Without sub-words (``maxn=0``) fastText drops the buckets, so nothing can be padded: then ``words
    x dim`` must already be a multiple of 10, or :class:`ValueError` asks for another ``dim``.
    """
    if dim % 10 == 0:
        return bucket
    words = vocabulary_size(path, min_count)
    if not subwords or bucket == 0:
        if words * dim % 10:
            raise ValueError(f"fastText 0.9.3 would leave the last {words * dim % 10} coefficients of its "
                             f"{words} x {dim} matrix uninitialised; without sub-words (maxn=0) seqlab cannot pad "
                             f"it: choose a dim that is a multiple of 10")
        return bucket
    return next(b for b in range(bucket, bucket + 10) if (words + b) * dim % 10 == 0)


def healthy(model: Any) -> bool:
    """Whether a trained fastText model's input and output matrices are finite and bounded."""
    for matrix in (model.get_input_matrix(), model.get_output_matrix()):
        if matrix.size and not (np.isfinite(matrix).all() and np.abs(matrix).max() < MAX_ABS):
            return False
    return True


def train_unsupervised(path: str, *, dim: int = 100, bucket: int = 2_000_000, min_count: int = 5,
                       thread: int = MIN_THREADS, tries: int = TRIES, **options: Any) -> Any:
    """``fasttext.train_unsupervised(path, dim=dim, bucket=..., minCount=min_count, thread=max(thread, 10),
    **options)``, from a fully initialised matrix, checked. ``bucket`` may grow by up to 9 (see above);
    ``model.f.getArgs().bucket`` has the count used.

    A run that raises "Encountered NaN." or ends with non-finite or huge coefficients is tried
    again, ``tries`` times in all; then :class:`ValueError` says what to change.
    """
    import fasttext

    if thread < MIN_THREADS:
        logger.info("training fastText with %d threads, not %d: fastText 0.9.3 leaves part of its input matrix "
                    "uninitialised with fewer", MIN_THREADS, thread)
    subwords = options.get("maxn", 6) > 0 or options.get("wordNgrams", 1) > 1  # else fastText drops the buckets
    bucket = whole_bucket(path, dim, bucket, min_count, subwords)
    problem = ""
    for attempt in range(tries):
        if problem:
            logger.warning("fastText training failed (%s); trying again (%d of %d)", problem, attempt + 1, tries)
        try:
            model = fasttext.train_unsupervised(path, dim=dim, bucket=bucket, minCount=min_count,
                                                thread=max(thread, MIN_THREADS), **options)
        except RuntimeError as err:  # "Encountered NaN."
            problem = str(err)
            continue
        if healthy(model):
            return model
        problem = f"coefficients non-finite or beyond {MAX_ABS:g} after training"
    raise ValueError(f"fastText training failed {tries} times ({problem}); try a lower learning rate")
