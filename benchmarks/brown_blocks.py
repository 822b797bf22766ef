"""Brown clustering's two dense loss passes, in one pass against in blocks of rows, at S slots; prints JSON.

    python benchmarks/brown_blocks.py --slots 3201 10001

(one pass of ``update`` at 10,001 slots needs about 19 GB of memory.)

A merge of two clusters (:meth:`features.brown_merge.Clusterer.merge`) updates the merge loss of every pair
of live clusters, ``g(x + y) - g(x) - g(y)`` summed over the two directions (``update``), and computes the
merged cluster's loss against every other from its neighbours (``neighbour_sums``). Near the end of the
window stage and in the hierarchy stage, the class bigram table is dense and both passes cover the whole
S x S table. Each is timed on a dense random table of whole counts (0-49, the ln lookup of the real run),
both ways, each in a fresh process so that its peak RSS is its own:

* ``one_pass``: the numpy expression the code used before, all S rows at once;
* ``blocks``: ``Clusterer._add_change`` / ``Clusterer._neighbour_sums`` as the clusterer calls them
  (``_BLOCK_CELLS`` f values at a time).

CPU seconds (``time.process_time``) and peak RSS above the process's state before the pass (the tables
themselves are allocated before). ``update`` gives the same doubles both ways (``same``); ``neighbour_sums``
differs in the last bits (``max_abs_difference``), as numpy's one-pass reduction groups its terms otherwise.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(pass_name: str, way: str, slots: int, out: str) -> dict:
    """One pass, one way, in this process; saves its result to ``out`` (.npy)."""
    from features import brown_merge

    rng = np.random.default_rng(0)
    logs = brown_merge._Logs(1 << 22)
    state = type("State", (), {})()  # the attributes the two methods read
    state.size, state._f = slots, logs.f
    if pass_name == "update":
        v = rng.integers(0, 50, size=(3, 2, slots)).astype(np.float64)
        phi = rng.random(slots)
        state.L = np.ones((slots, slots))
    else:
        state.T = rng.integers(0, 50, size=(2, slots, slots)).astype(np.float64)
        state.FT = logs.f(state.T)
        vec = state.T[:, 7].copy()
        k = np.arange(slots)
    before = _peak_mb()
    start = time.process_time()
    if pass_name == "update" and way == "one_pass":
        fw = logs.f(v[:, :, :, None] + v[:, :, None, :])
        change = (fw[1] + fw[2] - fw[0]).sum(axis=0)
        change += phi[:, None]
        change += phi
        state.L += change
        result = state.L
    elif pass_name == "update":
        brown_merge.Clusterer._add_change(state, v, phi, np.arange(slots), None)
        result = state.L
    elif way == "one_pass":
        result = (state.FT[::-1][:, k] - logs.f(state.T[::-1][:, k] + vec[:, k, None])).sum(axis=(0, 1))
    else:
        result = brown_merge.Clusterer._neighbour_sums(state, vec, k)
    seconds = time.process_time() - start
    np.save(out, result)
    return {"cpu_seconds": round(seconds, 2), "peak_mb_above_start": round(_peak_mb() - before)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--slots", type=int, nargs="+", default=[3201, 10001], help="S = clusters + 1")
    p.add_argument("--passes", nargs="+", choices=("update", "neighbour_sums"), default=["update", "neighbour_sums"])
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
                row: dict = {"slots": slots, "pass": pass_name}
                for way in ("one_pass", "blocks"):
                    out = str(Path(scratch) / f"{way}.npy")
                    done = subprocess.run([sys.executable, __file__, "--one", pass_name, way, str(slots), out],
                                          env=env, capture_output=True, text=True, check=True)
                    row[way] = json.loads(done.stdout)
                a, b = np.load(Path(scratch) / "one_pass.npy"), np.load(Path(scratch) / "blocks.npy")
                row["same"] = bool(np.array_equal(a, b))
                row["max_abs_difference"] = float(np.abs(a - b).max())
                row["speedup"] = round(row["one_pass"]["cpu_seconds"] / max(row["blocks"]["cpu_seconds"], 1e-9), 2)
                report.append(row)
    print(json.dumps({"benchmark": "brown_dense_loss_passes", "threads": 1, "load_before": os.getloadavg()[0],
                      "results": report}, indent=2))


if __name__ == "__main__":
    main()
