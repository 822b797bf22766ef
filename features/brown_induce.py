"""Inducing Brown clusters: Liang's (2005, §3) windowed greedy variant of Brown et al. (1992).

The class bigram model scores a clustering by its average mutual information (AMI)
between adjacent classes. With ``n[i, j]`` the number of times class ``i`` is followed by
class ``j``, row sums ``r``, column sums ``c``, total ``N`` and ``f(x) = x ln x``::

    N · AMI = Σ_ij f(n[i, j]) - Σ_i f(r[i]) - Σ_j f(c[j]) + f(N)        (nats)

Merging classes ``a`` and ``b`` loses ``L[a, b]``; with ``g(x, y) = f(x) + f(y) - f(x + y)``::

    N · L[a, b] = Σ_{k≠a,b} g(n[a, k], n[b, k]) + Σ_{k≠a,b} g(n[k, a], n[k, b])
                + f(n_aa) + f(n_ab) + f(n_ba) + f(n_bb) - f(n_aa + n_ab + n_ba + n_bb)
                - g(r[a], r[b]) - g(c[a], c[b])

Because ``g(x, 0) = 0`` every sum runs over the non-zero entries only. After ``a`` and
``b`` merge into ``m``, for every other pair ``(i, j)`` only the terms at column (row)
``a``, ``b`` change (Brown et al. 1992, §3), which is the O(C²) update of
:meth:`features.brown_merge.Clusterer._update_pairs`; when ``b`` has few non-zero bigram cells (a rare word
joining a cluster, the usual case) it touches only rows and columns of those cells. When the
new word ``s`` itself is cheapest to merge into a cluster ``a`` (all but about 0.1% of the
steps on newswire), :meth:`features.brown_merge.Clusterer.fold_new_word` adds and merges it in one go, and
updates ``L[a ∪ s, ·]`` from ``L[a, ·]`` on the cells of ``s`` only.

Liang's window (wcluster): the ``C`` most frequent words start as singleton clusters; each
further word, by falling count (ties alphabetically), enters as cluster ``C + 1``, and the
pair losing the least merges. Bigram cells count only words already clustered, but the
marginal terms use each class's totals in the *whole* corpus's table, ``y_r``, ``y_c`` (its
words' counts as left and right member of a bigram), as wcluster uses unigram counts::

    N · objective = Σ_ij f(n[i, j]) - Σ_i r[i] ln y_r[i] - Σ_j c[j] ln y_c[j]

so ``-g(r[a], r[b]) - g(c[a], c[b])`` in ``L`` becomes the same difference of ``x ln y``
terms. A word whose neighbours are mostly rarer (not yet in the window) thereby joins the
class it will fit once they arrive, not the one that suits its few counted bigrams; with the
partial table's own sums the clusters lost 0.05 bits of AMI on Reuters-21578 at c = 100.
Once every word is in, ``y = r, c`` and the objective is AMI (up to ``f(N)``). After the
last word the ``C`` clusters merge down to one, by exact AMI loss; each word's bit-string is
its cluster's path in that last tree (0 = the older cluster), as wcluster writes it.

Bigrams join adjacent tokens of one sentence and never bridge sentences (wcluster treats
its whole input as one stream). Words below ``min_count`` are dropped together with their
bigrams (never bridged over), as in wcluster.
"""
from __future__ import annotations

import hashlib
import logging
import os
import time
import zipfile
from typing import TYPE_CHECKING, Any

import numpy as np

from features.atomic import atomic_open
from features.base import FeatureError
from features.brown_merge import Clusterer, ami_from_table

if TYPE_CHECKING:
    from features.brown import BigramCounts

__all__ = ["ami_from_table", "induce"]

logger = logging.getLogger(__name__)

CHECKPOINT_SECONDS = 600.0  # how often, at most, the merge state is written to the checkpoint file


def induce(data: BigramCounts, num_clusters: int, *, progress: bool = False,
           checkpoint: str | os.PathLike[str] | None = None,
           every: float = CHECKPOINT_SECONDS) -> tuple[dict[str, str], float]:
    """Run both stages; returns ``(word → bit-string, AMI in bits at num_clusters clusters)``.

    With ``checkpoint``, the whole merge state is written there atomically at most every
    ``every`` seconds, and a run with the same counts and ``num_clusters`` that finds the file
    goes on from it; the clusters are the same as those of a run never stopped.
    """
    v, c = len(data.words), num_clusters
    bar = _bar(progress, v - 1)
    key = _fingerprint(data, c) if checkpoint is not None else ""
    saved = _load(checkpoint, key) if checkpoint is not None and os.path.exists(checkpoint) else None
    state = Clusterer(data, c, state=saved)
    free, start, final_ami = c, c, 0.0
    children: dict[int, tuple[int, int]] = {}
    leaf_ids = np.full(state.size, -1, dtype=np.int64)  # slot → its leaf's id, once the window is done
    if saved is not None:
        free, start, final_ami = int(saved["free"]), int(saved["next_word"]), float(saved["final_ami"])
        children = {int(p): (int(x), int(y)) for p, x, y in saved["children"]}
        leaf_ids = saved["leaf_ids"]
    pending = start - c + len(children)
    last = time.monotonic()

    def save(next_word: int) -> None:
        nonlocal last
        if checkpoint is not None and time.monotonic() - last >= every:
            _save(checkpoint, key, state, next_word, free, final_ami, children, leaf_ids)
            last = time.monotonic()
            logger.info("checkpoint %s: %s; %.0f s CPU in this process", checkpoint,
                        f"window, word {next_word:,} of {v:,}" if next_word < v else
                        f"hierarchy, merge {len(children):,} of {c - 1:,}", time.process_time())

    for w in range(start, v):
        if not state.fold_new_word(w, free):
            state.add_word(w, free)
            _, free = state.merge(*state.best_pair())
        pending += 1
        if bar is not None and pending >= 512:
            bar.update(pending)
            pending = 0
        save(w + 1)
    if not (leaf_ids >= 0).any():  # the window is done (not so in a checkpoint taken during the hierarchy)
        final_ami = state.ami_bits()
        leaf_ids = np.where(state.active, state.born, -1)
        state.track_members = False  # the leaves' members stay as they are
    leaves = {int(leaf_ids[s]): state.members[s] for s in np.flatnonzero(leaf_ids >= 0)}
    for _ in range(c - 1 - len(children)):
        a, b = state.best_pair()
        ids = sorted((int(state.born[a]), int(state.born[b])))
        kept, _ = state.merge(a, b)
        children[int(state.born[kept])] = (ids[0], ids[1])
        pending += 1
        save(v)
    if bar is not None:
        bar.update(pending)
        bar.close()
    root = int(state.born[np.flatnonzero(state.active)[0]])
    return _paths(root, children, leaves, data.words), final_ami


def _fingerprint(data: BigramCounts, num_clusters: int) -> str:
    """Names the counts and cluster number a checkpoint belongs to."""
    h = hashlib.sha256(f"{num_clusters} {len(data.words)}".encode())
    h.update("\n".join(data.words).encode("utf-8"))
    for a in (data.fwd_ptr, data.fwd_idx, data.fwd_cnt):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _save(path: str | os.PathLike[str], key: str, state: Clusterer, next_word: int, free: int, final_ami: float,
          children: dict[int, tuple[int, int]], leaf_ids: np.ndarray) -> None:
    rows = np.array([(p, x, y) for p, (x, y) in children.items()], dtype=np.int64).reshape(-1, 3)
    with atomic_open(path, "wb", encoding=None) as f:
        np.savez(f, key=np.array(key), next_word=np.array(next_word), free=np.array(free),
                 final_ami=np.array(final_ami), children=rows, leaf_ids=leaf_ids, **state.state())


def _load(path: str | os.PathLike[str], key: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as f:
            saved = {name: f[name] for name in f.files}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise FeatureError(f"{path}: not a Brown clustering checkpoint ({e})") from e
    if str(saved.get("key")) != key:
        raise FeatureError(f"{path}: a checkpoint of other counts or another number of clusters; "
                               "remove it or give another --checkpoint file")
    return saved


def _paths(root: int, children: dict[int, tuple[int, int]], leaves: dict[int, list[int]],
           words: list[str]) -> dict[str, str]:
    paths: dict[str, str] = {}
    stack = [(root, "")]
    while stack:
        node, path = stack.pop()
        if node in children:
            left, right = children[node]
            stack.append((right, path + "1"))
            stack.append((left, path + "0"))
        else:
            for w in leaves[node]:
                paths[words[w]] = path
    return paths


def _bar(show: bool, total: int) -> Any:
    if not show:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=" merges", desc="brown", disable=None)
