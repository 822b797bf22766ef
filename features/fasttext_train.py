"""fastText skip-gram training sized to the corpus and the machine, that never starts from leftover memory.

**Sizes.** fastText's defaults (2,000,000 sub-word buckets, 12 threads) are made for corpora of billions of
words on large machines: at 300 dimensions the buckets alone are 2.4 GB of RAM and of ``.bin`` file, whatever the
corpus. Unless given, :func:`train_unsupervised` takes

* ``bucket`` = :func:`default_bucket`: :data:`BUCKETS_PER_WORD` (20) rows per vocabulary word, at most fastText's
  2,000,000. A word of the vocabulary has about 7 distinct character n-grams of 3 to 6 characters that no
  other word has (measured on the first 260,000 words of Reuters-21578: 6.8 per word at minCount 1, 7.6 at 5),
  so 20 rows a word is about 2.6 a distinct n-gram and leaves about a third of them sharing a row, less than
  fastText's own default does on the corpora it was made for. A tiny corpus gets no special case: the rule
  already gives it few rows (30 words: 600), and its sub-words are what gives unseen words a vector, the
  reason to train fastText rather than plain skip-gram. Without sub-words (``maxn=0``) fastText keeps no
  buckets, and neither does the estimate.
* ``thread`` = :func:`default_threads`: the cores this process may use (``os.sched_getaffinity``), at most
  fastText's default of 12.

The model's size is estimated and logged before training (:func:`model_bytes`; the ``.bin`` file is that size
and training holds about as much in memory), with the number of threads.

**Initialisation.** fastText 0.9.3 allocates its input matrix (word rows, then sub-word buckets) without zeroing
it and initialises it in ten blocks, one per training thread (``DenseMatrix::uniform``): with fewer than ten
threads the other blocks are never written and hold whatever the allocator hands out. A fresh process gets
zeroed pages, but in one that has already allocated and freed a few MB (a test suite, a notebook, a pipeline
that trained a tagger first) the matrix starts from stale floats and training stops with "Encountered NaN." or,
worse, ends with vectors of size 1e20. fastText takes one ``thread`` count for both jobs, so a run asked for
fewer than :data:`MIN_THREADS` threads is given :data:`MIN_THREADS` (which initialises every block as fastText
intends, each from its own seed, so the initial matrix does not depend on the thread count) and they are
pinned to ``thread`` of this process's cores for the time of the call (:func:`cores`): the work occupies the
cores asked for. The last ``rows x dim mod 10`` floats would still escape initialisation, so when ``dim`` is
not a multiple of 10 the bucket count is raised by at most 9 to make ``rows x dim`` one (``rows`` is the
vocabulary size, counted as fastText counts it, plus the buckets). The trained matrices are checked (finite,
bounded) all the same, and training is tried again when they are not. Training is Hogwild and not
bit-reproducible.
"""
from __future__ import annotations

import logging
import os
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

logger = logging.getLogger(__name__)

#: fastText initialises its input matrix in ten blocks, one per thread.
MIN_THREADS = 10
#: fastText's own defaults: threads, and hash buckets for the character n-grams.
FASTTEXT_THREADS, FASTTEXT_BUCKETS = 12, 2_000_000
#: Sub-word buckets per vocabulary word when none are given (see the module docstring for the measurement).
BUCKETS_PER_WORD = 20
#: Tries before giving up on a run that keeps producing NaN or huge values.
TRIES = 3
#: A trained coefficient larger than this means training diverged or started from stale memory.
MAX_ABS = 1e4


def vocabulary(path: str, min_count: int, label: str = "__label__") -> tuple[int, int]:
    """fastText's dictionary of ``path``: (how many word rows, their total bytes). Words are whitespace-split
    byte strings (and the end-of-line token ``</s>``) seen at least ``min_count`` times, labels excluded."""
    counts: Counter[bytes] = Counter()
    with open(path, "rb") as handle:
        for line in handle:
            counts.update(line.replace(b"\0", b" ").split())
            if line.endswith(b"\n"):
                counts[b"</s>"] += 1
    prefix = label.encode("utf-8")
    kept = [word for word, n in counts.items() if n >= min_count and not word.startswith(prefix)]
    return len(kept), sum(map(len, kept))


def vocabulary_size(path: str, min_count: int, label: str = "__label__") -> int:
    """How many word rows fastText's dictionary gives ``path`` (:func:`vocabulary`)."""
    return vocabulary(path, min_count, label)[0]


def default_bucket(words: int, subwords: bool = True) -> int:
    """Sub-word buckets for a vocabulary of ``words``: :data:`BUCKETS_PER_WORD` each, at most fastText's
    2,000,000; 0 without sub-words (fastText then keeps none)."""
    return min(FASTTEXT_BUCKETS, BUCKETS_PER_WORD * words) if subwords else 0


def available_cores() -> int:
    """How many cores this process may run on (its CPU affinity; the CPU count where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def default_threads() -> int:
    """The cores this process may use, at most fastText's default of 12 threads."""
    return min(available_cores(), FASTTEXT_THREADS)


def verbosity(progress: bool) -> int:
    """fastText's ``verbose`` level: 2 (a progress line redrawn in place) when ``progress`` is asked for and
    fastText's stderr (file descriptor 2, which it writes to directly) is a terminal; else 0, so a redirected
    log gets no progress lines (the caller logs a summary instead)."""
    return 2 if progress and os.isatty(2) else 0


def model_bytes(words: int, word_bytes: int, bucket: int, dim: int) -> int:
    """The size of the ``.bin`` file of a skip-gram model: the input matrix ((words + buckets) x dim floats), the
    output matrix (words x dim) and the dictionary (each word, NUL, count and type); training holds about as much."""
    return 4 * dim * (2 * words + bucket) + word_bytes + 10 * words + 160


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB" if size < 1e9 else f"{size / 1e9:,.2f} GB"


def whole_bucket(path: str, dim: int, bucket: int, min_count: int, subwords: bool = True) -> int:
    """The smallest bucket count >= ``bucket`` for which ``(words + buckets) x dim`` is a multiple of 10."""
    return pad_bucket(vocabulary_size(path, min_count) if dim % 10 else 0, dim, bucket, subwords)


def pad_bucket(words: int, dim: int, bucket: int, subwords: bool = True) -> int:
    """The smallest bucket count >= ``bucket`` for which ``(words + buckets) x dim`` is a multiple of 10.

    Without sub-words (``maxn=0``) fastText drops the buckets, so nothing can be padded: then ``words
    x dim`` must already be a multiple of 10, or :class:`ValueError` asks for another ``dim``.
    """
    if dim % 10 == 0:
        return bucket
    if not subwords or bucket == 0:
        if words * dim % 10:
            raise ValueError(f"fastText 0.9.3 would leave the last {words * dim % 10} coefficients of its "
                             f"{words} x {dim} matrix uninitialised; without sub-words (maxn=0) seqlab cannot pad "
                             f"it: choose a dim that is a multiple of 10")
        return bucket
    return next(b for b in range(bucket, bucket + 10) if (words + b) * dim % 10 == 0)


@contextmanager
def cores(n: int) -> Iterator[None]:
    """Threads started inside run on at most ``n`` of this process's cores: the calling thread's CPU affinity
    (which the threads it starts inherit) is narrowed to its first ``n`` cores, and restored afterwards. Nothing
    changes where affinity is unknown (not Linux) or ``n`` covers every core."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except AttributeError:
        allowed = []
    if not allowed or n >= len(allowed):
        yield
        return
    os.sched_setaffinity(0, allowed[:n])
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def healthy(model: Any) -> bool:
    """Whether a trained fastText model's input and output matrices are finite and bounded. Reads fastText's own
    memory (no copy, no temporary array: a 2,000,000-bucket matrix is checked without doubling the peak)."""
    for matrix in (model.f.getInputMatrix(), model.f.getOutputMatrix()):
        values = np.asarray(matrix)  # a view of fastText's matrix; min/max propagate NaN
        if values.size and not (-MAX_ABS < values.min() and values.max() < MAX_ABS):
            return False
    return True


def train_unsupervised(path: str, *, dim: int = 100, bucket: int | None = None, min_count: int = 5,
                       thread: int | None = None, tries: int = TRIES, **options: Any) -> Any:
    """``fasttext.train_unsupervised(path, dim=dim, bucket=..., minCount=min_count, thread=..., **options)``,
    from a fully initialised matrix, checked, with the sizes of the module docstring: ``bucket`` (default
    :func:`default_bucket`) may grow by up to 9; ``thread`` (default :func:`default_threads`) is the number of
    cores fastText runs on, with at least :data:`MIN_THREADS` threads. ``model.f.getArgs()`` has the counts used.

    A run that raises "Encountered NaN." or ends with non-finite or huge coefficients is tried
    again, ``tries`` times in all; then :class:`ValueError` says what to change.
    """
    import fasttext

    if bucket is not None and bucket < 0:
        raise ValueError(f"bucket must be 0 or more, but got {bucket}")
    if thread is not None and thread < 1:
        raise ValueError(f"threads must be a positive integer, but got {thread}")
    thread = default_threads() if thread is None else thread
    subwords = options.get("maxn", 6) > 0 or options.get("wordNgrams", 1) > 1  # else fastText drops the buckets
    words, word_bytes = vocabulary(path, min_count)
    bucket = pad_bucket(words, dim, default_bucket(words, subwords) if bucket is None else bucket, subwords)
    rows = bucket if subwords else 0
    pinned = (f" ({MIN_THREADS} threads: fastText 0.9.3 initialises its matrix in {MIN_THREADS} blocks, one per "
              "thread)" if thread < MIN_THREADS else "")
    logger.info("fastText: %s words + %s sub-word buckets of dim %d, model about %s; training on %d core(s)%s",
                f"{words:,}", f"{rows:,}", dim, _mb(model_bytes(words, word_bytes, rows, dim)), thread, pinned)
    problem = ""
    for attempt in range(tries):
        if problem:
            logger.warning("fastText training failed (%s); trying again (%d of %d)", problem, attempt + 1, tries)
        try:
            with cores(thread):
                model = fasttext.train_unsupervised(path, dim=dim, bucket=bucket, minCount=min_count,
                                                    thread=max(thread, MIN_THREADS), **options)
        except RuntimeError as err:  # "Encountered NaN."
            problem = str(err)
            continue
        if healthy(model):
            return model
        problem = f"coefficients non-finite or beyond {MAX_ABS:g} after training"
    raise ValueError(f"fastText training failed {tries} times ({problem}); try a lower learning rate")
