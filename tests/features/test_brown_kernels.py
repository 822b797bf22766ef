"""The compiled loss passes give the numpy expressions' doubles: cell by cell, and through a whole run."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import xlogy

from features import brown_kernels
from features.brown import count_bigrams
from features.brown_merge import Clusterer, _Logs
from tests.features.test_brown import _run_window, _zipf_corpus


def _f(x: np.ndarray) -> np.ndarray:
    return xlogy(x, x)


def _add_change_numpy(L: np.ndarray, v: np.ndarray, phi: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:
    fw = _f(v[:, :, rows, None] + v[:, :, None, cols])
    change = (fw[1] + fw[2] - fw[0]).sum(axis=0)
    change += phi[rows, None]
    change += phi[cols]
    L[rows[:, None], cols] += change


def _neighbour_sums_numpy(FT: np.ndarray, T: np.ndarray, vec: np.ndarray, k: np.ndarray) -> np.ndarray:
    parts = (FT[::-1][:, k] - _f(T[::-1][:, k] + vec[:, k, None])).reshape(-1, T.shape[2])
    total = np.zeros(T.shape[2])
    for part in parts:  # one row after another, as the compiled loop adds them
        total = total + part
    return total


def _pair_margins_numpy(new, old, mp, m, yu, y, e, u) -> np.ndarray:
    yy = yu[:, :, None] + y[:, None, :]
    marg = (xlogy(new[:, :, None] + mp[:, None, :], yy) - xlogy(old[:, :, None] + m[:, None, :], yy)).sum(axis=0)
    marg += e[:, None]
    marg[:, u] += e
    return marg


def _least_after_numpy(L, marg, block, u) -> float:
    after = L[u] + marg
    after[:, u] += block
    return after.min()


def _fold_change_numpy(L, marg, v, phi, u) -> None:
    fw = _f(v[:, :, u, None] + v[:, :, None, :])
    marg += (fw[1] - fw[0]).sum(axis=0)
    marg += phi[u, None]
    marg += phi
    L[u] += marg


def _folded_sums_numpy(T, uvk, uk, k, gain, out) -> None:
    w = T[::-1][:, k]  # w[0, k, i] = n[i, k], w[1, k, i] = n[k, i]
    grown, kept = np.zeros(T.shape[2]), np.zeros(T.shape[2])
    for part, other in zip(_f(w + uvk[:, :, None]).reshape(-1, T.shape[2]), _f(w + uk[:, :, None]).reshape(-1, T.shape[2])):
        grown, kept = grown + part, kept + other  # one row after another, as the compiled loop adds them
    out += gain - grown + kept


def _whole_table(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    t = rng.integers(0, 40, size=shape).astype(np.float64)
    t[rng.random(shape) < 0.4] = 0.0  # zeros: 0 ln 0 = 0
    return t


@pytest.mark.parametrize("table", [0, 16, 1 << 10])  # none (log throughout); counts past its end; all inside
def test_add_change_is_the_numpy_expression_cell_for_cell(table: int) -> None:
    rng = np.random.default_rng(table)
    size = 23
    v = _whole_table(rng, (3, 2, size))
    v[0] = v[1] + v[2]
    phi = rng.normal(size=size)
    rows, cols = np.array([0, 4, 5, 19]), np.flatnonzero(rng.random(size) < 0.7)
    expected = rng.normal(size=(size, size))
    got = expected.copy()
    _add_change_numpy(expected, v, phi, rows, cols)
    brown_kernels.add_change(got, v, phi, rows, cols, _Logs(table).ln if table else np.zeros(0))
    np.testing.assert_array_equal(got, expected)  # the cells outside rows x cols too


@pytest.mark.parametrize("table", [0, 16, 1 << 10])
def test_neighbour_sums_add_the_rows_in_order(table: int) -> None:
    rng = np.random.default_rng(100 + table)
    size = 31
    T = _whole_table(rng, (2, size, size))
    FT = _f(T)
    vec = T[:, 3].copy()
    k = np.flatnonzero(vec[0] + vec[1])
    live = np.flatnonzero(rng.random(size) < 0.8)
    got = brown_kernels.neighbour_sums(FT, T, vec, k, live, _Logs(table).ln if table else np.zeros(0))
    expected = np.zeros(size)
    expected[live] = _neighbour_sums_numpy(FT, T, vec, k)[live]
    np.testing.assert_array_equal(got, expected)


def _fold_inputs(rng: np.random.Generator, size: int) -> dict[str, np.ndarray]:
    """A new word's cells in slots ``u`` of a table of ``size`` slots: the marginals before and after, whole counts."""
    u = np.sort(rng.choice(size, size=5, replace=False))
    m = _whole_table(rng, (2, size))
    old = m[:, u]
    new = old + _whole_table(rng, (2, u.size))
    mp = m.copy()
    mp[:, u] = new
    y = mp + _whole_table(rng, (2, size))  # the corpus totals are at least the window's, the new word's cells too
    yu = y[:, u]
    return {"new": new, "old": old, "mp": mp, "m": m, "yu": yu, "y": y, "e": rng.normal(size=u.size), "u": u}


@pytest.mark.parametrize("table", [0, 16, 1 << 10])
def test_pair_margins_are_the_numpy_expression_cell_for_cell(table: int) -> None:
    rng = np.random.default_rng(200 + table)
    a = _fold_inputs(rng, 29)
    got = np.full((a["u"].size, 29), np.nan)
    brown_kernels.pair_margins(a["new"], a["old"], a["mp"], a["m"], a["yu"], a["y"], a["e"], a["u"],
                               _Logs(table).ln if table else np.zeros(0), got)
    np.testing.assert_array_equal(got, _pair_margins_numpy(**a))


@pytest.mark.parametrize("seed", range(4))
def test_least_after_is_the_least_cell_of_the_numpy_table(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    size, u = 26, np.sort(rng.choice(26, size=4, replace=False))
    L = rng.normal(size=(size, size))
    L[:, rng.choice(size, size=3)] = np.inf  # slots that are not live
    marg, block = rng.normal(size=(u.size, size)), rng.normal(size=(u.size, u.size))
    if seed == 0:
        block[1, 2] = -50.0  # the least cell is one where the block is added
    assert brown_kernels.least_after(L, marg, block, u) == _least_after_numpy(L, marg, block, u)


@pytest.mark.parametrize("table", [0, 16, 1 << 10])
def test_fold_change_is_the_numpy_expression_cell_for_cell(table: int) -> None:
    rng = np.random.default_rng(400 + table)
    size, u = 27, np.array([1, 6, 7, 20])
    v = _whole_table(rng, (2, 2, size))
    v[0] += v[1]  # s = x + y
    phi, marg = rng.normal(size=size), rng.normal(size=(u.size, size))
    L, expected_marg = rng.normal(size=(size, size)), marg.copy()
    expected = L.copy()
    _fold_change_numpy(expected, expected_marg, v, phi, u)
    brown_kernels.fold_change(L, marg, v, phi, u, _Logs(table).ln if table else np.zeros(0))
    np.testing.assert_array_equal(L, expected)  # the rows outside u too
    np.testing.assert_array_equal(marg, expected_marg)


@pytest.mark.parametrize("table", [0, 16, 1 << 10])
def test_folded_sums_are_the_numpy_expression_on_the_live_slots(table: int) -> None:
    rng = np.random.default_rng(500 + table)
    size, k = 33, np.array([2, 3, 11, 30])
    T = _whole_table(rng, (2, size, size))
    uk = _whole_table(rng, (2, k.size))
    uvk = uk + _whole_table(rng, (2, k.size))
    live = np.flatnonzero(rng.random(size) < 0.8)
    out = rng.normal(size=size)
    expected = out.copy()
    _folded_sums_numpy(T, uvk, uk, k, 1.25, expected)
    before = out.copy()
    brown_kernels.folded_sums(T, uvk, uk, k, 1.25, live, _Logs(table).ln if table else np.zeros(0), out)
    np.testing.assert_array_equal(out[live], expected[live])
    dead = np.setdiff1d(np.arange(size), live)
    np.testing.assert_array_equal(out[dead], before[dead])  # the clusterer sets them to inf


def _losses(rng: np.random.Generator, size: int, live: np.ndarray) -> np.ndarray:
    """A loss table as the clusterer keeps it: symmetric, ``inf`` on the diagonal and in the rows and columns of
    slots that are not live; few distinct values, so that rows have ties."""
    L = np.triu(rng.integers(0, 6, size=(size, size)).astype(np.float64))
    L += np.triu(L, 1).T  # symmetric, as merges keep it: changed rows are mirrored into their columns
    dead = np.ones(size, dtype=bool)
    dead[live] = False
    L[dead], L[:, dead] = np.inf, np.inf
    np.fill_diagonal(L, np.inf)
    return L


@pytest.mark.parametrize("size", [5, 64, 150])  # less than, exactly and more than one block of columns
def test_mirrored_rows_are_numpy_s_transpose_and_symmetric_among_themselves(size: int) -> None:
    rng = np.random.default_rng(size)
    L = rng.random((size, size))
    rows = np.unique(rng.choice(size, size=max(2, size // 4)))
    before = L.copy()
    expected = L.copy()
    expected[:, rows] = expected[rows].T
    brown_kernels.mirror_rows(L, rows)
    others = np.setdiff1d(np.arange(size), rows)
    np.testing.assert_array_equal(L[others], expected[others])  # the columns: the rows' cells, exactly
    np.testing.assert_array_equal(L[np.ix_(rows, others)], before[np.ix_(rows, others)])  # the rows themselves kept
    block = L[np.ix_(rows, rows)]
    np.testing.assert_array_equal(block, block.T)  # each pair ends equal, to one of its two cells
    pairs = before[np.ix_(rows, rows)]
    assert ((block == pairs) | (block == pairs.T)).all()


@pytest.mark.parametrize("seed", range(6))
def test_row_minima_are_argmin_of_the_whole_rows_before_and_after_a_change(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = 40
    live = np.flatnonzero(rng.random(size) < 0.7)
    if seed == 0:
        live = live[:1]  # one live slot: every row is inf, argmin gives column 0
    L = _losses(rng, size, live)
    low, arg = np.empty(size), np.zeros(size, dtype=np.intp)
    brown_kernels.rows_least(L, live, low, arg)
    np.testing.assert_array_equal(arg, L.argmin(axis=1))
    np.testing.assert_array_equal(low, L.min(axis=1))
    # a merge: slot b leaves, rows and columns idx change (L stays symmetric, as the clusterer keeps it)
    b, idx = live[-1], np.unique(np.append(rng.choice(live, size=min(3, live.size)), live[-1]))
    live = live[live != b]
    changed = _losses(rng, size, live)
    L[idx], L[:, idx] = changed[idx], changed[:, idx]
    L[b], L[:, b] = np.inf, np.inf
    brown_kernels.rows_changed(L, idx, live, low, arg)
    np.testing.assert_array_equal(arg, L.argmin(axis=1))
    np.testing.assert_array_equal(low, L.min(axis=1))


def test_a_run_with_the_compiled_passes_is_the_numpy_run(monkeypatch) -> None:
    """The window and then the hierarchy, with both passes compiled and with both in numpy: the same loss
    table after every merge, hence the same merges."""
    import features.brown_merge as brown_merge

    data = count_bigrams(_zipf_corpus(5, vocab=90, sentences=250))
    monkeypatch.setattr(brown_merge, "_SCAN_BELOW", 0)
    compiled = _run_window(data, 8)

    def add_change(self: Clusterer, v, phi, rows, cols) -> None:
        _add_change_numpy(self.L, v, phi, rows, np.arange(self.size) if cols is None else cols)

    def neighbour_sums(self: Clusterer, vec, k):
        return _neighbour_sums_numpy(self.FT, self.T, vec, k)

    with monkeypatch.context() as patch:
        patch.setattr(Clusterer, "_add_change", add_change)
        patch.setattr(Clusterer, "_neighbour_sums", neighbour_sums)
        reference = _run_window(data, 8)
    np.testing.assert_array_equal(compiled.L, reference.L)
    for _ in range(7):  # the hierarchy: merges among live slots only
        pair = reference.best_pair()
        assert compiled.best_pair() == pair
        compiled.merge(*pair)
        with monkeypatch.context() as patch:
            patch.setattr(Clusterer, "_add_change", add_change)
            patch.setattr(Clusterer, "_neighbour_sums", neighbour_sums)
            reference.merge(*pair)
        np.testing.assert_array_equal(compiled.L, reference.L)


def test_a_run_with_compiled_logs_is_the_xlogy_run(monkeypatch) -> None:
    """``x ln y`` through the compiled lookup and through scipy's ``xlogy`` everywhere: the same loss table
    after every word and merge (the results laid out alike, so that later sums add in the same order)."""
    import features.brown_merge as brown_merge

    data = count_bigrams(_zipf_corpus(7, vocab=150, sentences=300))
    monkeypatch.setattr(brown_merge, "_SCAN_BELOW", 0)
    compiled = _run_window(data, 10)
    with monkeypatch.context() as patch:
        patch.setattr(_Logs, "pm", lambda self, x, y: xlogy(x, y))
        reference = _run_window(data, 10)
    np.testing.assert_array_equal(compiled.L, reference.L)
    for _ in range(9):
        pair = reference.best_pair()
        assert compiled.best_pair() == pair
        compiled.merge(*pair)
        with monkeypatch.context() as patch:
            patch.setattr(_Logs, "pm", lambda self, x, y: xlogy(x, y))
            reference.merge(*pair)
        np.testing.assert_array_equal(compiled.L, reference.L)


def test_a_window_with_the_compiled_fold_is_the_numpy_one(monkeypatch) -> None:
    """Words folding into clusters with the fold's passes compiled and in numpy: the same loss table, the same
    clusters."""
    import features.brown_merge as brown_merge

    data = count_bigrams(_zipf_corpus(11, vocab=160, sentences=300))
    monkeypatch.setattr(brown_merge, "_LOOKUP_FROM", 0)  # the looked-up logs the compiled passes use
    compiled = _run_window(data, 9)

    def pair_margins(self: Clusterer, new, old, mp, yu, e, u) -> np.ndarray:
        yy = yu[:, :, None] + self.y[:, None, :]
        marg = (self._pm(new[:, :, None] + mp[:, None, :], yy) - self._pm(old[:, :, None] + self.m[:, None, :], yy)).sum(axis=0)
        marg += e[:, None]
        marg[:, u] += e
        return marg

    folds = []

    def fold_change(self: Clusterer, marg, v, phi, u) -> None:
        folds.append(u.size)
        _fold_change_numpy(self.L, marg, v, phi, u)

    def neighbour_sums(self: Clusterer, vec, k):
        return _neighbour_sums_numpy(self.FT, self.T, vec, k)

    with monkeypatch.context() as patch:
        patch.setattr(Clusterer, "_neighbour_sums", neighbour_sums)
        patch.setattr(Clusterer, "_folded_sums", lambda self, uvk, uk, k, gain, out: _folded_sums_numpy(self.T, uvk, uk, k, gain, out))
        patch.setattr(Clusterer, "_pair_margins", pair_margins)
        patch.setattr(Clusterer, "_least_after", lambda self, marg, block, u: _least_after_numpy(self.L, marg, block, u))
        patch.setattr(Clusterer, "_fold_change", fold_change)
        reference = _run_window(data, 9)
    assert len(folds) > 100  # most words folded, through the numpy passes
    np.testing.assert_array_equal(compiled.L, reference.L)
    assert compiled.members == reference.members
