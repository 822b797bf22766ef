"""Brown clustering's two dense loss passes three ways (numpy in one pass, numpy in blocks of rows, compiled) at S slots; prints JSON.

    python -m benchmarks.brown_blocks --slots 3201 10001
    python -m benchmarks.brown_blocks --slots 10001 --ways blocks compiled

(one pass of ``update`` at 10,001 slots needs about 19 GB of memory.)

A merge of two clusters (:meth:`features.brown_merge.Clusterer.merge`) updates the merge loss of every pair
of live clusters, ``g(x + y) - g(x) - g(y)`` summed over the two directions (``update``), and computes the
merged cluster's loss against every other from its neighbours (``neighbour_sums``). Near the end of the
window stage and in the hierarchy stage, the class bigram table is dense and both passes cover the whole
S x S table. Each is timed on a dense random table of whole counts (0-49, the ln lookup of the real run),
each way in a fresh process so that its peak RSS is its own:

* ``one_pass``: the first numpy expression, all S rows at once;
* ``blocks``: the numpy expression a block of rows at a time (2M f values), as the clusterer had it before
  the compiled loops (:func:`_blocks_update`, :func:`_blocks_sums` below);
* ``compiled``: ``Clusterer._add_change`` / ``Clusterer._neighbour_sums`` as the clusterer calls them
  (:mod:`features.brown_kernels`; the first call's compilation is done before the clock starts).

CPU seconds (``time.process_time``) and peak RSS above the process's state before the pass (the tables
themselves are allocated before). Each row compares a way with ``one_pass``: ``update`` gives the same
doubles every way (``same``); ``neighbour_sums`` in blocks or compiled adds the rows one after another,
which numpy's one-pass reduction groups otherwise (``max_abs_difference``: the last bits).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


BLOCK_CELLS = 1 << 21
WAYS = ("one_pass", "blocks", "compiled")


def _blocks_update(L: np.ndarray, f, v: np.ndarray, phi: np.ndarray) -> None:
    """``L += change`` over every slot, a block of rows at a time."""
    size = L.shape[0]
    step = max(1, BLOCK_CELLS // (6 * size))
    for lo in range(0, size, step):
        r = np.arange(lo, min(lo + step, size))
        fw = f(v[:, :, r, None] + v[:, :, None, :])
        change = (fw[1] + fw[2] - fw[0]).sum(axis=0)
        change += phi[r, None]
        change += phi
        L[r] += change


def _blocks_sums(FT: np.ndarray, T: np.ndarray, f, vec: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The neighbour sums, a block of (d, k) rows at a time, each added on to the running sum."""
    size = T.shape[2]
    step = max(1, BLOCK_CELLS // (4 * size))
    total = None
    for d in (0, 1):
        for lo in range(0, k.size, step):
            kb = k[lo:lo + step]
            part = FT[1 - d][kb] - f(T[1 - d][kb] + vec[d][kb, None])
            total = np.add.reduce(part if total is None else np.concatenate([total[None], part]), axis=0)
    return total


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(pass_name: str, way: str, slots: int, out: str) -> dict:
    """One pass, one way, in this process; saves its result to ``out`` (.npy)."""
    from features import brown_merge

    rng = np.random.default_rng(0)
    logs = brown_merge._Logs(1 << 22)
    state = type("State", (), {})()  # the attributes the two methods read
    state.size, state._f, state._ln = slots, logs.f, logs.ln
    state.active = np.ones(slots, dtype=bool)
    state._live = lambda: np.arange(slots)
    if pass_name == "update":
        v = rng.integers(0, 50, size=(3, 2, slots)).astype(np.float64)
        phi = rng.random(slots)
        state.L = np.ones((slots, slots))
    else:
        state.T = rng.integers(0, 50, size=(2, slots, slots)).astype(np.float64)
        state.FT = logs.f(state.T)
        vec = state.T[:, 7].copy()
        k = np.arange(slots)
    if way == "compiled":  # compile (or load the cached machine code) before the clock starts
        from features import brown_kernels

        brown_kernels.add_change(np.zeros((1, 1)), np.zeros((3, 2, 1)), np.zeros(1), np.zeros(1, np.intp),
                                 np.zeros(1, np.intp), logs.ln)
        brown_kernels.neighbour_sums(np.zeros((2, 1, 1)), np.zeros((2, 1, 1)), np.zeros((2, 1)),
                                     np.zeros(1, np.intp), np.zeros(1, np.intp), logs.ln)
    before = _peak_mb()
    start = time.process_time()
    if pass_name == "update" and way == "one_pass":
        fw = logs.f(v[:, :, :, None] + v[:, :, None, :])
        change = (fw[1] + fw[2] - fw[0]).sum(axis=0)
        change += phi[:, None]
        change += phi
        state.L += change
        result = state.L
    elif pass_name == "update" and way == "blocks":
        _blocks_update(state.L, logs.f, v, phi)
        result = state.L
    elif pass_name == "update":
        brown_merge.Clusterer._add_change(state, v, phi, np.arange(slots), None)
        result = state.L
    elif way == "one_pass":
        result = (state.FT[::-1][:, k] - logs.f(state.T[::-1][:, k] + vec[:, k, None])).sum(axis=(0, 1))
    elif way == "blocks":
        result = _blocks_sums(state.FT, state.T, logs.f, vec, k)
    else:
        result = brown_merge.Clusterer._neighbour_sums(state, vec, k)
    seconds = time.process_time() - start
    np.save(out, result)
    return {"cpu_seconds": round(seconds, 2), "peak_mb_above_start": round(_peak_mb() - before)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--slots", type=int, nargs="+", default=[3201, 10001], help="S = clusters + 1")
    p.add_argument("--passes", nargs="+", choices=("update", "neighbour_sums"), default=["update", "neighbour_sums"])
    p.add_argument("--ways", nargs="+", choices=WAYS, default=list(WAYS),
                   help="the first is the reference the others are compared with (one_pass at 10,001 slots "
                        "needs about 19 GB)")
    p.add_argument("--one", nargs=4, metavar=("PASS", "WAY", "SLOTS", "OUT"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1], int(args.one[2]), args.one[3])))
        return
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    report = []
    with tempfile.TemporaryDirectory() as scratch:
        for slots in args.slots:
            for pass_name in args.passes:
                row: dict = {"slots": slots, "pass": pass_name, "reference": args.ways[0]}
                for way in args.ways:
                    out = str(Path(scratch) / f"{way}.npy")
                    done = subprocess.run([sys.executable, __file__, "--one", pass_name, way, str(slots), out],
                                          env=env, capture_output=True, text=True, check=True)
                    row[way] = json.loads(done.stdout)
                ref = np.load(Path(scratch) / f"{args.ways[0]}.npy")
                for way in args.ways[1:]:
                    got = np.load(Path(scratch) / f"{way}.npy")
                    row[way]["same"] = bool(np.array_equal(ref, got))
                    row[way]["max_abs_difference"] = float(np.abs(ref - got).max())
                    t = row[way]["cpu_seconds"]  # None: too fast for the clock's 10 ms resolution
                    row[way]["speedup"] = round(row[args.ways[0]]["cpu_seconds"] / t, 2) if t >= 0.01 else None
                report.append(row)
    print(json.dumps({"benchmark": "brown_dense_loss_passes", "threads": 1, "load_before": os.getloadavg()[0],
                      "results": report}, indent=2))


if __name__ == "__main__":
    main()
