"""CPU milliseconds per minibatch update of the C&W and HLBL trainers at a real vocabulary size; prints JSON.

    OMP_NUM_THREADS=1 python -m benchmarks.embedding_step --vocab 212948 --dims 50 200 --updates 300

The models of :mod:`features.cw` and :mod:`features.hlbl` (random balanced tree), built as their trainers
build them, take ``--updates`` SGD steps (after 20 not timed) on batches of 100 windows whose words are
drawn from a Zipf distribution over ``--vocab`` ids (the frequency ranking of a real corpus: a few rows
recur in every batch, most appear once). CPU seconds (``time.process_time``, one torch thread) per
update. 212,948 words is the Wikipedia vocabulary of RESULTS.md's inductions (min count 3).

To compare two versions of ``features/``, run the script with each on ``PYTHONPATH`` (e.g. a ``git
worktree`` of the older commit), alternating.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch


def batches(vocab: int, window: int, count: int, seed: int) -> list[torch.Tensor]:
    """``count`` batches of 100 windows of ids drawn from a Zipf (1/rank) distribution."""
    g = torch.Generator().manual_seed(seed)
    weights = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float64)
    return [torch.multinomial(weights, 100 * window, replacement=True, generator=g).view(100, window)
            for _ in range(count)]


def ms_per_update(model, data: list[torch.Tensor], warm: int) -> float:
    g = torch.Generator().manual_seed(1)
    for batch in data[:warm]:
        model.step(batch, g)
    start = time.process_time()
    for batch in data[warm:]:
        model.step(batch, g)
    return 1000 * (time.process_time() - start) / max(len(data) - warm, 1)


def main() -> None:
    from features.cw import CWModel
    from features.hlbl import HLBLModel, random_tree

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vocab", type=int, default=212_948)
    p.add_argument("--dims", type=int, nargs="+", default=[50, 200])
    p.add_argument("--updates", type=int, default=300)
    args = p.parse_args()
    torch.set_num_threads(1)
    cpu, warm = torch.device("cpu"), 20
    tree = random_tree(args.vocab, seed=1)
    results = []
    for dim in args.dims:
        cw = CWModel(args.vocab, dim=dim, window=5, hidden=100, activation="tanh", lr_embeddings=0.1,
                     lr_network=0.01, seed=1, device=cpu)
        results.append({"model": "cw", "dim": dim,
                        "ms_per_update": round(ms_per_update(cw, batches(args.vocab, 5, args.updates + warm, 0), warm), 3)})
        hlbl = HLBLModel(args.vocab, tree, dim=dim, context=4, lr=0.05, seed=1, device=cpu)
        results.append({"model": "hlbl", "dim": dim,
                        "ms_per_update": round(ms_per_update(hlbl, batches(args.vocab, 5, args.updates + warm, 0), warm), 3)})
        del cw, hlbl
    print(json.dumps({"benchmark": "embedding_trainer_update", "vocab": args.vocab, "batch": 100, "threads": 1,
                      "updates": args.updates, "features": str(Path(sys.modules["features"].__file__).parent),
                      "load_before": os.getloadavg()[0], "results": results}, indent=2))


if __name__ == "__main__":
    main()
