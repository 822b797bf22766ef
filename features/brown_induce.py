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

from typing import TYPE_CHECKING, Any

import numpy as np

from features.brown_merge import Clusterer, ami_from_table

if TYPE_CHECKING:
    from features.brown import BigramCounts

__all__ = ["ami_from_table", "induce"]


def induce(data: BigramCounts, num_clusters: int, *, progress: bool = False) -> tuple[dict[str, str], float]:
    """Run both stages; returns ``(word → bit-string, AMI in bits at num_clusters clusters)``."""
    v, c = len(data.words), num_clusters
    bar = _bar(progress, v - 1)
    state = Clusterer(data, c)
    free, pending = c, 0
    for w in range(c, v):
        if not state.fold_new_word(w, free):
            state.add_word(w, free)
            _, free = state.merge(*state.best_pair())
        pending += 1
        if bar is not None and pending >= 512:
            bar.update(pending)
            pending = 0
    final_ami = state.ami_bits()
    leaves = {int(state.born[s]): state.members[s] for s in np.flatnonzero(state.active)}
    state.track_members = False
    children: dict[int, tuple[int, int]] = {}
    for _ in range(c - 1):
        a, b = state.best_pair()
        ids = sorted((int(state.born[a]), int(state.born[b])))
        kept, _ = state.merge(a, b)
        children[int(state.born[kept])] = (ids[0], ids[1])
        pending += 1
    if bar is not None:
        bar.update(pending)
        bar.close()
    root = int(state.born[np.flatnonzero(state.active)[0]])
    return _paths(root, children, leaves, data.words), final_ami


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
