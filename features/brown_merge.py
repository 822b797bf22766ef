"""The state of Liang's windowed greedy Brown clustering: class bigram table, merge losses, merges.

:class:`Clusterer` holds the ``S = C + 1`` slots, the class bigram cells, their marginals and
the loss ``L[a, b]`` of merging every pair, and keeps them exact as words enter and classes
merge; the formulas and the algorithm are in :mod:`features.brown_induce`, which drives it.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import xlogy

from features import brown_kernels

if TYPE_CHECKING:
    from features.brown import BigramCounts

LOG2 = math.log(2.0)
_LOG_TABLE = 1 << 22  # entries of the ln lookup table (32 MiB)
_LOOKUP_FROM = 2048  # smaller arrays call xlogy (the lookup's fixed costs are the larger there)
_SCAN_BELOW = 1 << 18  # a loss table with fewer cells is scanned whole for its row minima


def _f(x: Any) -> Any:
    """``x ln x`` with ``0 ln 0 = 0``."""
    return xlogy(x, x)


def _fs(x: float) -> float:
    """``x ln x`` of one number."""
    return x * math.log(x) if x > 0 else 0.0


def _pm(x: Any, y: Any) -> Any:
    """A marginal's term ``x ln y``: ``x`` the marginal in the window's table, ``y`` its corpus total (``0 ln 0 = 0``)."""
    return xlogy(x, y)


class _Logs:
    """``x ln x`` and ``x ln y`` of whole-number arrays by looking ``ln`` up in a table.

    Every count in the class bigram table, its marginals and their sums is a whole number
    ``<= N``; a table of ``ln k`` for ``k < size`` (made by the same ``xlogy`` as :func:`_f`,
    so the same doubles) replaces the ~4x dearer ``log`` call. Larger ones fall back to ``xlogy``.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.ln = xlogy(1.0, np.arange(size, dtype=np.float64))
        self.ln[0] = 0.0  # 0 ln 0 = 0 and 0 ln y = 0 as xlogy has them; x > 0 never meets y = 0

    def f(self, x: Any) -> Any:
        return self.pm(x, x)

    def pm(self, x: Any, y: Any) -> Any:
        if np.size(y) < _LOOKUP_FROM:
            return xlogy(x, y)
        if (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.shape == y.shape
                and x.strides == y.strides and x.dtype == y.dtype == np.float64):
            # one compiled pass over x and y in their memory order, into a result laid out as xlogy's would be
            # (numpy keeps the inputs' axis order), so that sums over it add up in the same order
            order = np.argsort(x.strides, kind="stable")[::-1]
            out = np.empty_like(x)
            flat = out.transpose(order)
            if flat.flags.c_contiguous:
                brown_kernels.x_ln_y(np.ascontiguousarray(x.transpose(order)).reshape(-1),
                                     np.ascontiguousarray(y.transpose(order)).reshape(-1), self.ln, flat.reshape(-1))
                return out
        k = np.asarray(y).astype(np.intp)
        if k.size == 0 or k.max() >= self.size:
            return xlogy(x, y)
        # ln(y) laid out in memory as y is (astype keeps that order), so that the product is laid
        # out as xlogy's and sums over it add up in the same order: looked up in memory order
        order = np.argsort(k.strides, kind="stable")[::-1]
        ln = np.take(self.ln, k.transpose(order), mode="clip").transpose(np.argsort(order))
        return np.multiply(x, ln)


def ami_from_table(cells: np.ndarray, left: np.ndarray, right: np.ndarray) -> float:
    """AMI in bits of a class bigram table given its cells (any shape) and its row and column sums."""
    total = float(cells.sum())
    if total <= 0:
        return 0.0
    nats = _f(cells).sum() - _f(left).sum() - _f(right).sum() + _f(total)
    return float(nats / total / LOG2)


class Clusterer:
    """The windowed greedy merge over ``S = C + 1`` slots (Liang 2005, §3).

    Both directions of the class bigram table sit in one array, ``T[0] = n`` and
    ``T[1] = n.T``, so that every row-side and column-side term is one numpy operation;
    ``FT = f(T)``; ``m[0] = r`` and ``m[1] = c`` are the marginals of the window's table,
    ``y[0]``, ``y[1]`` the same slots' marginals in the whole corpus's table (``y >= m``),
    and ``fm = m ln y``. ``L[i, j]`` is ``N ×`` the loss of merging slots ``i`` and ``j``
    (``inf`` on the diagonal and for empty slots; ``N`` is common to every pair and left out).
    """

    def __init__(self, data: BigramCounts, num_clusters: int, *, state: dict[str, np.ndarray] | None = None) -> None:
        s = self.size = num_clusters + 1
        v = len(data.words)
        total = float(data.fwd_cnt.sum())
        if np.array_equal(data.fwd_cnt, np.floor(data.fwd_cnt)) and total < 2.0 ** 52:  # whole counts
            logs = _Logs(int(min(total + 1, _LOG_TABLE)))
            self._f, self._pm, self._ln = logs.f, logs.pm, logs.ln
        else:
            self._f, self._pm, self._ln = _f, _pm, np.zeros(0)  # the compiled passes call log throughout
        self.L = np.full((s, s), np.inf)
        self.active = np.zeros(s, dtype=bool)
        # Neighbours of word w: right ones as their word id, left ones as V + word id, so
        # that one bincount over ``slot_of`` gives the new slot's row and column at once.
        rows = np.repeat(np.arange(v), np.diff(data.fwd_ptr))
        order = np.argsort(np.concatenate([rows, data.fwd_idx]), kind="stable")
        self.nb_idx = np.concatenate([data.fwd_idx, rows + v]).astype(np.int32)[order]
        self.nb_cnt = np.concatenate([data.fwd_cnt, data.fwd_cnt]).astype(np.int32)[order]  # int32: half the memory
        self.nb_ptr = data.fwd_ptr + np.concatenate([[0], np.cumsum(np.bincount(data.fwd_idx, minlength=v))])
        # each word's corpus marginals: shape (2, V), [0] = bigrams it starts, [1] = bigrams it ends
        self.word_y = np.stack([np.bincount(rows, weights=data.fwd_cnt, minlength=v),
                                np.bincount(data.fwd_idx, weights=data.fwd_cnt, minlength=v)])
        self.y = np.zeros((2, s))
        self._ys = np.zeros(2)  # the corpus marginals of the word being added
        self.slot_of = np.concatenate([np.full(v, s), np.full(v, 2 * s + 1)])  # s, 2s+1: not clustered yet
        self.words = v
        self.members: list[list[int]] = [[] for _ in range(s)]
        self.born = np.full(s, -1, dtype=np.int64)  # cluster id: word rank, then V + merge number
        self.next_id = v
        self.track_members = True
        # scratch rows for fused f calls, and the signs with which their f values add up
        self._z = np.zeros((7, s))
        self._signs = np.array([1.0, 1.0, 1.0, 1.0, -1.0, 1.0, 1.0])
        self._zm = np.zeros((8, s))
        self._fold_signs = np.array([1.0, 1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
        self._v = np.zeros((3, 2, s))
        self._kept: tuple | None = None  # (w, s, vec, u, _added's result, w's losses) of a fold that did not go ahead
        if state is None:
            self._start(num_clusters)
        else:
            self._restore(state)

    def _start(self, c: int) -> None:
        """Singleton clusters for the ``c`` most frequent words in slots ``0..c-1``; ``L`` from scratch."""
        s = self.size
        for w in range(c):
            self._assign(w, w)
            self.members[w] = [w]
        self.active[:c] = True
        self.born[:c] = np.arange(c)
        lo, hi = self.nb_ptr[0], self.nb_ptr[c]
        rows = np.repeat(np.arange(c), np.diff(self.nb_ptr[: c + 1]))
        cols = self.nb_idx[lo:hi]
        ok = cols < c  # right neighbours among the first c words
        n = np.bincount(rows[ok] * s + cols[ok], weights=self.nb_cnt[lo:hi][ok], minlength=s * s)
        n = n.astype(np.float64, copy=False).reshape(s, s)
        self.T = np.stack([n, n.T.copy()])
        self.FT = self._f(self.T)
        self.m = np.stack([n.sum(axis=1), n.sum(axis=0)])
        self.y[:, :c] = self.word_y[:, :c]
        self.fm = self._pm(self.m, self.y)
        for i in range(c):
            self.L[i] = self._losses_against(i)
        self.L = 0.5 * (self.L + self.L.T)
        self._all_rows_changed()
        self._views()

    def _views(self) -> None:
        self._d = np.diagonal(self.T[0])  # views: n[i, i] and f(n[i, i])
        self._fd = np.diagonal(self.FT[0])

    def state(self) -> dict[str, np.ndarray]:
        """What :meth:`_restore` needs to go on exactly where this state is (``f(T)`` and ``m ln y`` are redone)."""
        sizes = np.array([len(g) for g in self.members], dtype=np.int64)
        words = np.concatenate([np.asarray(g, dtype=np.int64) for g in self.members]) if sizes.sum() else sizes[:0]
        return {"n": self.T[0], "L": self.L, "m": self.m, "y": self.y, "active": self.active, "born": self.born,
                "slot_of": self.slot_of, "member_sizes": sizes, "member_words": words,
                "next_id": np.array(self.next_id), "track_members": np.array(self.track_members)}

    def _restore(self, state: dict[str, np.ndarray]) -> None:
        n = np.array(state["n"], dtype=np.float64)
        if n.shape != (self.size, self.size):
            raise ValueError(f"a state of {n.shape[0] - 1} clusters, not {self.size - 1}")
        self.T = np.stack([n, n.T.copy()])
        self.FT = self._f(self.T)  # elementwise: the same doubles as kept up to date
        self.L = np.array(state["L"], dtype=np.float64)
        self.m, self.y = np.array(state["m"], dtype=np.float64), np.array(state["y"], dtype=np.float64)
        self.fm = self._pm(self.m, self.y)
        self.active = np.array(state["active"], dtype=bool)
        self.born = np.array(state["born"], dtype=np.int64)
        self.slot_of = np.array(state["slot_of"])
        ends = np.cumsum(state["member_sizes"])
        self.members = [g.tolist() for g in np.split(np.asarray(state["member_words"]), ends[:-1])]
        self.next_id = int(state["next_id"])
        self.track_members = bool(state["track_members"])
        self._views()
        self._all_rows_changed()

    def _assign(self, w: int, slot: int) -> None:
        self.slot_of[w] = slot
        self.slot_of[self.words + w] = self.size + 1 + slot

    def ami_bits(self) -> float:
        """AMI of the current clusters' bigram table, in bits."""
        return ami_from_table(self.T[0], self.m[0], self.m[1])

    def best_pair(self) -> tuple[int, int]:
        """The first pair, in row-major order, with the least loss (``divmod(argmin(L), S)``), in O(S)."""
        i = int(np.argmin(self.row_min))
        return i, int(self.row_arg[i])

    def _live(self) -> np.ndarray:
        """The live slots; the others' rows and columns of ``L`` are ``inf``."""
        return np.arange(self.size) if self.active.all() else np.flatnonzero(self.active)

    def _all_rows_changed(self) -> None:
        """Each row's first least entry, ``L.argmin(axis=1)``, over the live slots only."""
        self.row_arg = np.zeros(self.size, dtype=np.intp)  # shape: (S,)
        self.row_min = np.empty(self.size)
        brown_kernels.rows_least(self.L, self._live(), self.row_min, self.row_arg)

    def _rows_changed(self, idx: np.ndarray) -> None:
        """Bring ``row_min``, ``row_arg`` up to date after rows and columns ``idx`` of ``L`` changed (nothing else),
        in O(S × |idx|) instead of O(S²) (:func:`features.brown_kernels.rows_changed`)."""
        if self.size * self.size < _SCAN_BELOW:
            self._all_rows_changed()
            return
        brown_kernels.rows_changed(self.L, np.unique(idx), self._live(), self.row_min, self.row_arg)

    def _cells(self, w: int, s: int) -> tuple[np.ndarray, np.ndarray]:
        """Word ``w``'s cells as slot ``s``: ``(vec, u)``, ``vec[0] = n[s, ·]``, ``vec[1] = n[·, s]``,
        ``u`` the other slots it has cells with. O(number of w's neighbour types)."""
        size = self.size
        self._assign(w, s)
        self._ys = self.word_y[:, w]
        lo, hi = self.nb_ptr[w], self.nb_ptr[w + 1]
        cells = np.bincount(self.slot_of[self.nb_idx[lo:hi]], weights=self.nb_cnt[lo:hi], minlength=2 * size + 2)
        vec = cells.astype(np.float64, copy=False).reshape(2, size + 1)[:, :size]  # shape: (2, S); int when empty
        u = np.flatnonzero(vec[0] + vec[1])
        return vec, u[u != s]

    def _added(self, vec: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """What a new slot with cells ``vec`` changes for the old pairs (i ∈ u, j): ``(marg, block, mp, fnew)``.

        The row sums r_i grow by n[i, s] and the column sums c_i by n[s, i] (``mp``, ``fnew`` =
        f of the grown ones), which changes ``-g(r_i, r_j) - g(c_i, c_j)`` by ``marg``; ``block``
        is the new terms ``g(n[i, s], n[j, s]) + g(n[s, i], n[s, j])`` (j ∈ u).
        """
        m, fm, y = self.m, self.fm, self.y
        x = vec[:, u]  # shape: (2, |u|)
        fx = self._f(x)
        block = (fx[:, :, None] + fx[:, None, :] - self._f(x[:, :, None] + x[:, None, :])).sum(axis=0)
        old = m[:, u]
        new = old + x[::-1]
        yu = y[:, u]
        fnew = self._pm(new, yu)
        e = (fm[:, u] - fnew).sum(axis=0)
        mp = m.copy()
        mp[:, u] = new
        return self._pair_margins(new, old, mp, yu, e, u), block, mp, fnew

    def _pair_margins(self, new: np.ndarray, old: np.ndarray, mp: np.ndarray, yu: np.ndarray, e: np.ndarray,
                      u: np.ndarray) -> np.ndarray:
        """``marg`` of :meth:`_added`, shape (|u|, S), in one compiled pass (:func:`features.brown_kernels.pair_margins`)."""
        marg = np.empty((u.size, self.size))
        brown_kernels.pair_margins(new, old, mp, self.m, yu, self.y, e, u, self._ln, marg)
        return marg

    def add_word(self, w: int, s: int) -> None:
        """Put word ``w`` (the next by frequency) into the empty slot ``s``."""
        vec, u, (marg, block, mp, fnew), row = self._prepared(w, s)
        if u.size:
            marg[:, u] += block
            self.L[u] += marg
            brown_kernels.mirror_rows(self.L, u)
            self.m[:, u], self.fm[:, u] = mp[:, u], fnew
        fv = self._f(vec)
        self.T[:, s, :], self.T[:, :, s] = vec, vec[::-1]
        self.FT[:, s, :], self.FT[:, :, s] = fv, fv[::-1]
        self.m[:, s] = vec.sum(axis=1)
        self.y[:, s] = self._ys
        self.fm[:, s] = self._pm(self.m[:, s], self.y[:, s])
        self.active[s] = True
        self.members[s] = [w]
        self.born[s] = w
        if row is None:
            row = self._losses_against(s)
        self.L[s], self.L[:, s] = row, row
        self._rows_changed(np.append(u, s))

    def fold_new_word(self, w: int, s: int) -> bool:
        """Add word ``w`` and, when its cheapest merge is into a cluster ``a`` (the usual case),
        fold it into ``a`` without filling slot ``s``. Returns ``False``, having changed
        nothing but scratch, when some other pair is cheaper: then :meth:`add_word` and :meth:`merge`."""
        L = self.L
        vec, u, (marg, block, mp, fnew), _ = self._prepared(w, s)
        row = self._new_word_losses(vec, s, u, mp, fnew)
        a = int(np.argmin(row))
        best = row[a]
        if self.row_min.min() < best or (u.size and self._least_after(marg, block, u) < best):
            self._kept = (w, s, vec, u, (marg, block, mp, fnew), row)  # for add_word, which comes next
            return False
        out = self._folded_losses(a, s, vec, u, mp, fnew)
        if u.size:
            self._fold_pairs(a, s, vec, u, marg)
        self._fold_tables(a, s, vec, u, mp, fnew)
        out[a] = np.inf
        out[~self.active] = np.inf
        L[a], L[:, a] = out, out
        self._rows_changed(np.append(u, a))
        self._assign(w, a)
        if self.track_members:
            self.members[a].append(w)
        self.born[a] = self.next_id
        self.next_id += 1
        return True

    def _prepared(self, w: int, s: int) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...], np.ndarray | None]:
        """Word ``w``'s cells as slot ``s`` and what they change (:meth:`_cells`, :meth:`_added`), and its losses
        against every slot (``None`` when not computed yet): what a fold of the same word that did not go ahead kept
        of them (the tables have not changed since), or afresh."""
        kept, self._kept = self._kept, None
        if kept is not None and kept[0] == w and kept[1] == s:
            return kept[2], kept[3], kept[4], kept[5]
        vec, u = self._cells(w, s)
        return vec, u, self._added(vec, u), None

    def _new_word_losses(self, vec: np.ndarray, s: int, u: np.ndarray, mp: np.ndarray,
                         fnew: np.ndarray) -> np.ndarray:
        """``N × L[s, i]`` as :meth:`_losses_against` gives it, for a new word whose cells ``vec`` are not in the tables."""
        d, fd, z, ys = self._d, self._fd, self._z[:3], self._ys
        x, nss, ms = vec[:, u], float(vec[0, s]), vec.sum(axis=1)
        fx = self._f(x)
        fmp = self.fm.copy()
        fmp[:, u] = fnew
        # Σ_k g(n[s, k], n[i, k]) + Σ_k g(n[k, s], n[k, i]) over the old slots k ≠ i ...
        row = self._neighbour_sums(vec, u) + fx.sum()
        row[u] -= (fx + fd[u] - self._f(x + d[u])).sum(axis=0)
        # ... the 2×2 block {s, i} and the marginals
        np.add(vec[0], vec[1], out=z[0])
        z[0] += d
        z[0] += nss
        np.add(ms[:, None], mp, out=z[1:3])
        pz = self._pm(z[1:3], ys[:, None] + self.y)
        row += pz[0] + pz[1] - self._f(z[0]) + self._f(vec).sum(axis=0) + fd - fmp.sum(axis=0)
        row += _fs(nss) - self._pm(ms, ys).sum()
        row[~self.active] = np.inf
        return row

    def _folded_losses(self, a: int, s: int, vec: np.ndarray, u: np.ndarray, mp: np.ndarray,
                       fnew: np.ndarray) -> np.ndarray:
        """``N × L[a ∪ s, i]`` from ``L[a, i]``, for a new word with cells ``vec``, in O(S × |u|)."""
        T, FT, m, z, d, y = self.T, self.FT, self.m, self._zm, self._d, self.y
        naa = T[0, a, a]
        nmm = float(naa + vec[1, a] + vec[0, a] + vec[0, s])
        mpa = mp[:, a] + vec.sum(axis=1)
        ypa = y[:, a] + self._ys
        # swap the 2×2-block and marginal terms of a for those of a ∪ s, in one f call
        np.add(T[0, a], T[1, a], out=z[0])
        z[0] += d
        z[0] += naa
        np.add(T[:, a], vec, out=z[1:3])
        np.add(z[1], z[2], out=z[3])
        z[3] += d
        z[3] += nmm
        np.add(mpa[:, None], mp, out=z[4:6])
        np.add(m[:, a, None], m, out=z[6:8])
        fz = np.empty_like(z)
        fz[:4] = self._f(z[:4])
        fz[4:6] = self._pm(z[4:6], ypa[:, None] + y)
        fz[6:8] = self._pm(z[6:8], y[:, a, None] + y)
        out = self._fold_signs @ fz
        out += self.L[a]
        out -= FT[:, a].sum(axis=0)
        out += _fs(nmm) - FT[0, a, a] - self._pm(mpa, ypa).sum() + self.fm[0, a] + self.fm[1, a]
        out[u] += (self.fm[:, u] - fnew).sum(axis=0)
        k = u[u != a]
        if k.size:  # the sums over k: g(u_k + v_k, w_ik) - g(u_k, w_ik), u = a's cells, v = s's
            uk = T[:, a, k]
            uvk = uk + vec[:, k]
            gain = self._f(uvk) - FT[:, a, k]
            self._folded_sums(uvk, uk, k, gain.sum(), out)
            wkk = d[k]
            out[k] -= (gain - self._f(uvk + wkk) + self._f(uk + wkk)).sum(axis=0)  # the sums leave out k = i
        return out

    def _folded_sums(self, uvk: np.ndarray, uk: np.ndarray, k: np.ndarray, gain: float, out: np.ndarray) -> None:
        """``out += gain - Σ_{d, k} f(w + uvk) + Σ_{d, k} f(w + uk)``, ``w[d, k, i] = T[1 - d, k, i]`` (n[i, k], n[k, i]),
        over the live slots, in one compiled pass (:func:`features.brown_kernels.folded_sums`)."""
        brown_kernels.folded_sums(self.T, uvk, uk, k, gain, self._live(), self._ln, out)

    def _fold_pairs(self, a: int, s: int, vec: np.ndarray, u: np.ndarray, marg: np.ndarray) -> None:
        """Old pairs (i ∈ u, j) when s folds into a: ``marg``, and g(x + y) replaces g(x) at column (row) a."""
        v = self._v[:2]  # v[0] = x + y, v[1] = x: a's columns and rows, plus s's
        v[1] = self.T[:, :, a]
        v[1, :, a] = 0.0
        np.add(v[1], vec[::-1], out=v[0])
        v[0, :, [a, s]] = 0.0
        fv = self._f(v)
        phi = (fv[0] - fv[1]).sum(axis=0)
        self._fold_change(marg, v, phi, u)
        brown_kernels.mirror_rows(self.L, u)

    def _least_after(self, marg: np.ndarray, block: np.ndarray, u: np.ndarray) -> float:
        """The least loss in rows ``u`` once a new slot's cells are in (:func:`features.brown_kernels.least_after`)."""
        return brown_kernels.least_after(self.L, marg, block, u)

    def _fold_change(self, marg: np.ndarray, v: np.ndarray, phi: np.ndarray, u: np.ndarray) -> None:
        """``L[u] += marg`` and the changes at column (row) a, in one compiled pass (:func:`features.brown_kernels.fold_change`)."""
        brown_kernels.fold_change(self.L, marg, v, phi, u, self._ln)

    def _fold_tables(self, a: int, s: int, vec: np.ndarray, u: np.ndarray, mp: np.ndarray, fnew: np.ndarray) -> None:
        T, FT, m, fm = self.T, self.FT, self.m, self.fm
        y = vec.copy()
        y[:, s] = 0.0
        T[:, a] += y
        T[:, :, a] += y[::-1]
        T[:, a, a] += vec[0, s]
        fa = self._f(T[:, a])
        FT[:, a], FT[:, :, a] = fa, fa[::-1]
        m[:, u], fm[:, u] = mp[:, u], fnew
        m[:, a] += vec.sum(axis=1)
        self.y[:, a] += self._ys
        fm[:, a] = self._pm(m[:, a], self.y[:, a])

    def _losses_against(self, s: int) -> np.ndarray:
        """``N × L[s, i]`` for every slot ``i``, afresh, in O(S × non-zero cells of slot s)."""
        T, FT, m, z = self.T, self.FT, self.m, self._z
        vec = T[:, s]  # shape: (2, S): n[s, ·] and n[·, s]
        k = np.flatnonzero(vec[0] + vec[1])
        d, nss = np.diagonal(T[0]), T[0, s, s]
        # Σ_k g(n[s, k], n[i, k]) + Σ_k g(n[k, s], n[k, i]) over all k, for every i ...
        sums = self._neighbour_sums(vec, k) + FT[:, s].sum()
        # ... less the terms k = i and k = s (the 2×2 block {s, i} counts them), and the marginals:
        # f(n_si + n_ii) + f(n_is + n_ii) + f(n_ss + n_si) + f(n_ss + n_is) - f(n_ss + n_si + n_is + n_ii)
        # + f(r_s + r_i) + f(c_s + c_i), in one call
        np.add(vec, d, out=z[0:2])
        np.add(vec, nss, out=z[2:4])
        np.add(z[0], z[3], out=z[4])
        np.add(m[:, s, None], m, out=z[5:7])
        fz = np.empty_like(z)
        fz[:5] = self._f(z[:5])
        fz[5:7] = self._pm(z[5:7], self.y[:, s, None] + self.y)
        losses = self._signs @ fz
        losses += sums
        losses -= FT[:, s].sum(axis=0) + np.diagonal(FT[0]) + self.fm.sum(axis=0)
        losses -= FT[0, s, s] + self.fm[0, s] + self.fm[1, s]
        losses[s] = np.inf
        losses[~self.active] = np.inf
        return losses

    def _neighbour_sums(self, vec: np.ndarray, k: np.ndarray) -> np.ndarray:
        """``Σ_{d, k} FT[1 - d, k, i] - f(T[1 - d, k, i] + vec[d, k])`` for every live slot ``i`` (0 for the
        others, whose losses are inf), shape (S,), in one compiled pass (:func:`features.brown_kernels.neighbour_sums`):
        no temporaries, the (d, k) rows added one after another."""
        return brown_kernels.neighbour_sums(self.FT, self.T, vec, k, self._live(), self._ln)

    def merge(self, a: int, b: int) -> tuple[int, int]:
        """Merge slots ``a`` and ``b``; returns ``(kept slot, freed slot)``."""
        self._kept = None  # what a fold attempt kept no longer holds once the tables change
        T = self.T
        if np.count_nonzero(T[:, a]) < np.count_nonzero(T[:, b]):
            a, b = b, a  # fold the sparser slot b into a
        changed = self._update_pairs(a, b)
        T[:, a] += T[:, b]
        T[:, :, a] += T[:, :, b]
        T[:, b], T[:, :, b] = 0.0, 0.0
        fa = self._f(T[:, a])
        self.FT[:, a], self.FT[:, :, a] = fa, fa[::-1]
        self.FT[:, b], self.FT[:, :, b] = 0.0, 0.0
        self.m[:, a] += self.m[:, b]
        self.m[:, b] = 0.0
        self.y[:, a] += self.y[:, b]
        self.y[:, b] = 0.0
        self.fm[:, a], self.fm[:, b] = self._pm(self.m[:, a], self.y[:, a]), 0.0
        self.active[b] = False
        self.L[b], self.L[:, b] = np.inf, np.inf
        row = self._losses_against(a)
        row[a] = np.inf
        row[~self.active] = np.inf
        self.L[a], self.L[:, a] = row, row
        if changed is None:
            self._all_rows_changed()
        else:
            self._rows_changed(np.append(changed, [a, b]))
        if self.track_members:
            moved = np.array(self.members[b], dtype=np.int64)
            self.slot_of[moved] = a
            self.slot_of[moved + self.words] = self.size + 1 + a
            self.members[a].extend(self.members[b])
            self.members[b] = []
        self.born[a], self.born[b] = self.next_id, -1
        self.next_id += 1
        return a, b

    def _update_pairs(self, a: int, b: int) -> np.ndarray | None:
        """For pairs i, j ∉ {a, b}: the cells at column (row) a and b fold into one.

        ``L[i, j]`` gains ``g(x_i + y_i, x_j + y_j) - g(x_i, x_j) - g(y_i, y_j)`` with ``x``, ``y``
        the columns (rows) a and b, which vanishes unless ``y_i > 0`` or ``y_j > 0``.
        Returns the slots whose rows and columns changed, ``None`` for all of them.
        """
        v = self._v  # v[0] = x + y, v[1] = x, v[2] = y; each shape (2, S): columns, rows
        v[1], v[2] = self.T[:, :, a], self.T[:, :, b]
        v[1:, :, a] = v[1:, :, b] = 0.0
        np.add(v[1], v[2], out=v[0])
        idx = np.flatnonzero(v[2, 0] + v[2, 1])
        if idx.size == 0:
            return idx
        fv = self._f(v)
        phi = (fv[0] - fv[1] - fv[2]).sum(axis=0)
        act = np.flatnonzero(self.active)
        if act.size < self.size:  # merging down to the hierarchy: pairs of live slots only (the rest are inf)
            rows = act if idx.size > act.size // 2 else idx
            self._add_change(v, phi, rows, act)
            if rows is act:
                return None
            brown_kernels.mirror_rows(self.L, idx)
            return idx
        if idx.size > self.size // 2:
            self._add_change(v, phi, np.arange(self.size), None)
            return None
        self._add_change(v, phi, idx, None)
        brown_kernels.mirror_rows(self.L, idx)
        return idx

    def _add_change(self, v: np.ndarray, phi: np.ndarray, rows: np.ndarray, cols: np.ndarray | None) -> None:
        """``L[rows, cols] += g(x + y) - g(x) - g(y)`` terms (``cols`` None: every slot), in one compiled pass
        (:func:`features.brown_kernels.add_change`) that makes no temporaries, whatever the number of clusters."""
        cols = np.arange(self.size) if cols is None else cols
        brown_kernels.add_change(self.L, v, phi, rows, cols, self._ln)
