"""Brown clustering's hot loops compiled (numba), one cell at a time.

Once the class bigram table is dense (late in the merge window, and all through the hierarchy), every
merge of :class:`features.brown_merge.Clusterer` updates the loss of every pair of live clusters
(:func:`add_change`), computes the merged cluster's loss against every other (:func:`neighbour_sums`),
copies the changed rows down their columns (:func:`mirror_rows`) and
brings each row's least loss up to date (:func:`rows_least`, :func:`rows_changed`); :func:`x_ln_y` is
``x ln y`` of the larger arrays. Each word that folds into a cluster (:meth:`features.brown_merge.Clusterer.fold_new_word`;
most words, once the window is past its first ones) changes the loss of the pairs in the rows of its cells: their grown marginals
(:func:`pair_margins`), whether a pair would lose less than the fold (:func:`least_after`), and the cells at the
cluster's column and row (:func:`fold_change`). In numpy each pass built its ``f`` values for a block of rows and then summed
them; here each cell's terms are computed and added where they are used, in the order the numpy expressions
added them, so the losses are the same doubles, except that the sums over rows (:func:`neighbour_sums`,
:func:`folded_sums`) add their rows in one fixed order, which numpy's reductions grouped otherwise for some shapes
(``tests/features/test_brown_kernels.py`` checks them cell by cell and through whole runs). ``benchmarks/brown_blocks.py`` and ``benchmarks/brown_hierarchy.py`` measure them.

``f(x) = x ln x`` (``0 ln 0 = 0``) reads ``ln k`` from ``ln`` for whole ``x < ln.size``: the table
:class:`features.brown_merge._Logs` fills with ``xlogy``, which is ``log``; an empty table means ``log``
throughout (counts that are not whole numbers).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(inline="always", cache=True)
def _pm(x: float, y: float, ln: np.ndarray) -> float:
    """``x ln y`` (0 where ``x`` is 0), ``ln y`` read from ``ln`` for whole ``y < ln.size``: :func:`x_ln_y` of one cell."""
    if x == 0.0:
        return 0.0
    if y < ln.size:
        return x * ln[int(y)]
    return x * math.log(y)


@njit(inline="always", cache=True)
def _f(x: float, ln: np.ndarray) -> float:
    """``f(x) = x ln x`` of one cell."""
    return _pm(x, x, ln)


@njit(cache=True, nogil=True)
def add_change(L: np.ndarray, v: np.ndarray, phi: np.ndarray, rows: np.ndarray, cols: np.ndarray,
               ln: np.ndarray) -> None:  # pragma: no cover - compiled
    """``L[r, c] += Σ_d [f(x + x') + f(y + y') - f(s + s')] + phi[r] + phi[c]`` for ``r`` in ``rows``, ``c`` in
    ``cols``, where ``v[0] = s = x + y``, ``v[1] = x``, ``v[2] = y`` (shape (3, 2, S); ``d``: columns, rows)
    at ``r`` and (primed) at ``c``."""
    for ri in range(rows.size):
        r = rows[ri]
        s0, x0, y0 = v[0, 0, r], v[1, 0, r], v[2, 0, r]
        s1, x1, y1 = v[0, 1, r], v[1, 1, r], v[2, 1, r]
        pr = phi[r]
        for ci in range(cols.size):
            c = cols[ci]
            d0 = _f(x0 + v[1, 0, c], ln) + _f(y0 + v[2, 0, c], ln) - _f(s0 + v[0, 0, c], ln)
            d1 = _f(x1 + v[1, 1, c], ln) + _f(y1 + v[2, 1, c], ln) - _f(s1 + v[0, 1, c], ln)
            change = d0 + d1
            change += pr
            change += phi[c]
            L[r, c] += change


@njit(cache=True, nogil=True)
def mirror_rows(L: np.ndarray, rows: np.ndarray) -> None:  # pragma: no cover - compiled
    """``L[j, r] = L[r, j]`` for every ``j`` and each ``r`` in ``rows``: the columns of rows that changed, in
    blocks of 64 columns so that each block of the rows stays in cache while it is written down the columns
    (about 25% faster than numpy's ``L[:, rows] = L[rows].T`` at 10,000 slots). In the block rows × rows the two
    cells of a pair end equal, to one of the two, where numpy would swap them."""
    size = L.shape[0]
    for j0 in range(0, size, 64):
        j1 = min(j0 + 64, size)
        for ri in range(rows.size):
            r = rows[ri]
            for j in range(j0, j1):
                L[j, r] = L[r, j]


@njit(cache=True, nogil=True)
def neighbour_sums(FT: np.ndarray, T: np.ndarray, vec: np.ndarray, k: np.ndarray, cols: np.ndarray,
                   ln: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``Σ_{d, j ∈ k} FT[1 - d, j, i] - f(T[1 - d, j, i] + vec[d, j])`` for every slot ``i`` in ``cols`` (0 for
    the others), shape (S,): the ``(d, j)`` rows added one after another, ``d`` then ``j`` in the order of ``k``."""
    total = np.zeros(T.shape[2])
    for d in range(2):
        for ji in range(k.size):
            j = k[ji]
            add = vec[d, j]
            for ci in range(cols.size):
                i = cols[ci]
                total[i] += FT[1 - d, j, i] - _f(T[1 - d, j, i] + add, ln)
    return total


@njit(inline="always", cache=True)
def _least(L: np.ndarray, i: int, cols: np.ndarray) -> tuple[float, int]:
    """Row ``i``'s least entry and its first column, given that every column outside ``cols`` is ``inf``:
    ``argmin`` of the whole row (a row of ``inf`` gives column 0, as ``argmin`` does)."""
    best, at = np.inf, 0
    for ci in range(cols.size):
        x = L[i, cols[ci]]
        if x < best:
            best, at = x, cols[ci]
    return best, at


@njit(cache=True, nogil=True)
def rows_least(L: np.ndarray, cols: np.ndarray, low: np.ndarray, arg: np.ndarray) -> None:  # pragma: no cover
    """Every row's least entry ``low`` and its first column ``arg`` (``argmin``), where ``cols`` are the live
    slots: the rows and columns of the others are ``inf`` (``low`` ``inf`` and ``arg`` 0 there)."""
    low[:] = np.inf
    arg[:] = 0
    for ri in range(cols.size):
        i = cols[ri]
        low[i], arg[i] = _least(L, i, cols)


@njit(cache=True, nogil=True)
def rows_changed(L: np.ndarray, idx: np.ndarray, cols: np.ndarray, low: np.ndarray,
                 arg: np.ndarray) -> None:  # pragma: no cover - compiled
    """:func:`rows_least` after rows ``idx`` (sorted, no repeats) of ``L`` changed and were mirrored into their
    columns (``L[i, r] == L[r, i]`` for ``r`` in ``idx`` and every other ``i``, as every caller leaves them): a
    changed row, or one whose old least entry was in a changed column, is scanned whole; any other compares
    its old least entry with its entries in columns ``idx``, the first column winning ties. Those entries are
    read from rows ``idx``, in memory order, not down the columns. The rows of slots that are not live (not in
    ``cols``) are all ``inf`` and stay so."""
    size = L.shape[0]
    hit = np.zeros(size, dtype=np.bool_)
    for j in range(idx.size):
        hit[idx[j]] = True
        low[idx[j]], arg[idx[j]] = np.inf, 0  # a slot that is no longer live keeps these
    best = np.empty(size)
    at = np.full(size, -1, dtype=np.intp)
    for j in range(idx.size):  # each row's least entry among columns idx, the first one on ties
        r = idx[j]
        for ci in range(cols.size):
            i = cols[ci]
            x = L[r, i]  # == L[i, r] for a row i that is not in idx (the others are scanned whole below)
            if at[i] < 0 or x < best[i]:
                best[i], at[i] = x, r
    for ci in range(cols.size):
        i = cols[ci]
        if hit[i] or hit[arg[i]]:
            low[i], arg[i] = _least(L, i, cols)
        elif best[i] < low[i] or (best[i] == low[i] and at[i] < arg[i]):
            low[i], arg[i] = best[i], at[i]


@njit(cache=True, nogil=True)
def x_ln_y(x: np.ndarray, y: np.ndarray, ln: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out = x ln y`` (0 where ``x`` is 0) of flat arrays, ``ln y`` read from ``ln`` for whole ``y < ln.size``:
    ``xlogy``'s doubles."""
    for i in range(x.size):
        out[i] = _pm(x[i], y[i], ln)


@njit(cache=True, nogil=True)
def pair_margins(new: np.ndarray, old: np.ndarray, mp: np.ndarray, m: np.ndarray, yu: np.ndarray, y: np.ndarray,
                 e: np.ndarray, u: np.ndarray, ln: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[i, j] = Σ_d pm(new[d, i] + mp[d, j], yy) - pm(old[d, i] + m[d, j], yy) + e[i]`` (``yy = yu[d, i] +
    y[d, j]``), then ``+ e[k]`` in column ``u[k]``: how the marginal terms of pair (``u[i]``, ``j``) change when
    the marginals of slots ``u`` grow from ``old`` to ``new`` (``mp``: ``m`` with them grown); shape (|u|, S)."""
    for i in range(u.size):
        n0, n1, o0, o1, y0, y1, ei = new[0, i], new[1, i], old[0, i], old[1, i], yu[0, i], yu[1, i], e[i]
        for j in range(m.shape[1]):
            yy0 = y0 + y[0, j]
            yy1 = y1 + y[1, j]
            t = (_pm(n0 + mp[0, j], yy0, ln) - _pm(o0 + m[0, j], yy0, ln)) \
                + (_pm(n1 + mp[1, j], yy1, ln) - _pm(o1 + m[1, j], yy1, ln))
            t += ei
            out[i, j] = t
        for k in range(u.size):
            out[i, u[k]] += e[k]


@njit(cache=True, nogil=True)
def least_after(L: np.ndarray, marg: np.ndarray, block: np.ndarray, u: np.ndarray) -> float:  # pragma: no cover
    """``min(L[u] + marg)`` with ``block[i, k]`` added in column ``u[k]``: the least loss of the pairs in rows ``u``
    once a new slot's cells are in the table, without the (|u|, S) temporary."""
    best = np.inf
    is_u = np.zeros(L.shape[1], dtype=np.bool_)
    for k in range(u.size):
        is_u[u[k]] = True
    for i in range(u.size):
        r = u[i]
        for j in range(L.shape[1]):
            if not is_u[j]:
                x = L[r, j] + marg[i, j]
                if x < best:
                    best = x
        for k in range(u.size):
            x = L[r, u[k]] + marg[i, u[k]]
            x += block[i, k]
            if x < best:
                best = x
    return best


@njit(cache=True, nogil=True)
def fold_change(L: np.ndarray, marg: np.ndarray, v: np.ndarray, phi: np.ndarray, u: np.ndarray,
                ln: np.ndarray) -> None:  # pragma: no cover - compiled
    """``L[u] += marg + Σ_d [f(x_i + x_j) - f(s_i + s_j)] + phi[u_i] + phi[j]`` with ``v[0] = s``, ``v[1] = x``
    (shape (2, 2, S); ``d``: columns, rows): a new word's cells ``y`` fold into a cluster whose cells are
    ``x`` (``s = x + y``), in the order of the numpy expression (``marg`` is changed too)."""
    for i in range(u.size):
        r = u[i]
        s0, x0, s1, x1, pr = v[0, 0, r], v[1, 0, r], v[0, 1, r], v[1, 1, r], phi[r]
        for j in range(L.shape[1]):
            t = (_f(x0 + v[1, 0, j], ln) - _f(s0 + v[0, 0, j], ln)) + (_f(x1 + v[1, 1, j], ln) - _f(s1 + v[0, 1, j], ln))
            x = marg[i, j] + t
            x += pr
            x += phi[j]
            marg[i, j] = x
            L[r, j] += x


@njit(cache=True, nogil=True)
def folded_sums(T: np.ndarray, uvk: np.ndarray, uk: np.ndarray, k: np.ndarray, gain: float, cols: np.ndarray,
                ln: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[i] += (gain - Σ_{d, j} f(T[1 - d, k[j], i] + uvk[d, j])) + Σ_{d, j} f(T[1 - d, k[j], i] + uk[d, j])``
    for every slot ``i`` in ``cols``: a cluster's cells ``uk`` growing to ``uvk`` in the slots ``k``, against every
    other slot's cells there (each sum adds its ``(d, j)`` rows one after another, ``d`` then ``j``)."""
    size = T.shape[2]
    grown = np.zeros(size)
    kept = np.zeros(size)
    for d in range(2):
        for ji in range(k.size):
            j = k[ji]
            g, h = uvk[d, ji], uk[d, ji]
            for ci in range(cols.size):
                i = cols[ci]
                w = T[1 - d, j, i]
                grown[i] += _f(w + g, ln)
                kept[i] += _f(w + h, ln)
    for ci in range(cols.size):
        i = cols[ci]
        out[i] += (gain - grown[i]) + kept[i]
