"""Data-parallel training throughput: 1 vs N processes (one torch thread each) at the same per-process batch.

    OMP_NUM_THREADS=1 python -m benchmarks.ddp_speed --config configs/conll03_glove.yaml \\
        --limit 2000 --epochs 2 --nproc 1 2

Each run is a whole ``seqlab train CONFIG --nproc N`` (torchrun for N > 1) on the first ``--limit``
sentences of each file (``data.limit``), ``train.threads=1``, ``--epochs`` epochs, in a scratch run
directory. Throughput is read from the run's ``metrics.json``: the trainer times each epoch's training
steps alone (dev scoring, loading and start-up excluded) on rank 0; ranks step in lockstep (gradients are
all-reduced every step), so the job's sentences/s is rank 0's times N. The last epoch is reported (the
first warms up), and ``speedup`` is each N's sentences/s over the first N's. Target: 2 processes at least
1.6× one on 2 cores.

``--independent K`` adds the machine's ceiling for this workload: K single-process trainings at once, with
nothing shared between them; their summed sentences/s over one alone is what K cores give when no step ever
waits for another process (``independent_speedup``). ``--rounds R`` repeats every mode R times, alternating
(1, 2, independent, 1, 2, ...); each mode's median round is reported with every round's sentences/s, and the
speed-ups are of medians. With N > 1, ``row_average_ms_per_step`` is rank 0's mean time per step in
averaging the large embedding tables' touched rows (:class:`seqlab.core.distributed.TouchedRows`: the wait
for the row marks' all-reduce, then the rows' own), over the last epoch.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def train(config: str, nproc: int, limit: int, epochs: int, batch_size: int | None, out: Path) -> dict:
    """One whole training run; its last epoch's figures."""
    overrides = [f"data.limit={limit}", f"train.epochs={epochs}", f"train.patience={epochs}", "train.threads=1",
                 "train.device=cpu"] + ([f"train.batch_size={batch_size}"] if batch_size else [])
    command = [sys.executable, "-m", "seqlab", "train", config, "--nproc", str(nproc), "--output", str(out),
               "--quiet", *[x for item in overrides for x in ("--set", item)]]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"ddp_speed: {' '.join(command)} failed:\n{done.stderr[-3000:]}")
    history = json.loads((out / "metrics.json").read_text())["history"]
    last = history[-1]
    return {"nproc": nproc, "epochs": len(history),
            "rank0_sentences_per_epoch": round(last["sentences_per_second"] * last["train_seconds"]),
            "train_seconds_last_epoch": round(last["train_seconds"], 2),
            "sentences_per_second": round(last["sentences_per_second"] * nproc, 1),
            "tokens_per_second": round(last["tokens_per_second"] * nproc),
            "every_epoch_sentences_per_second": [round(h["sentences_per_second"] * nproc, 1) for h in history],
            "dev_f1_last_epoch": round(last["dev_score"], 2), "whole_run_seconds": round(wall, 1),
            **({"row_average_ms_per_step": round(last["row_average_ms"], 2)} if "row_average_ms" in last else {})}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="configs/conll03_glove.yaml")
    p.add_argument("--limit", type=int, default=2000, help="data.limit: sentences of each file")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, help="train.batch_size, per process (default the config's)")
    p.add_argument("--nproc", type=int, nargs="+", default=[1, 2])
    p.add_argument("--independent", type=int, default=0, metavar="K",
                   help="also run K single-process trainings at once (the ceiling without communication)")
    p.add_argument("--rounds", type=int, default=1, help="repeat every mode, alternating; medians reported")
    args = p.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    rounds: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for r in range(args.rounds):
            for n in args.nproc:
                rounds.setdefault(str(n), []).append(
                    train(args.config, n, args.limit, args.epochs, args.batch_size, Path(scratch) / f"n{n}_{r}"))
            if args.independent:
                with ThreadPoolExecutor(args.independent) as pool:  # each thread waits on its own training process
                    alone = list(pool.map(lambda k: train(args.config, 1, args.limit, args.epochs, args.batch_size,
                                                          Path(scratch) / f"independent{k}_{r}"),
                                          range(args.independent)))
                rounds.setdefault("independent", []).append(
                    {"processes": args.independent,
                     "sentences_per_second_each": [a["sentences_per_second"] for a in alone],
                     "sentences_per_second": round(sum(a["sentences_per_second"] for a in alone), 1)})

    def median(runs: list[dict]) -> dict:
        chosen = sorted(runs, key=lambda run: run["sentences_per_second"])[(len(runs) - 1) // 2]
        return {**chosen, "rounds_sentences_per_second": [run["sentences_per_second"] for run in runs]}

    runs = [median(rounds[str(n)]) for n in args.nproc]
    independent = median(rounds["independent"]) if args.independent else None
    base = runs[0]["sentences_per_second"]
    for run in runs:
        run["speedup"] = round(run["sentences_per_second"] / base, 2)
    if independent is not None:
        independent["independent_speedup"] = round(independent["sentences_per_second"] / base, 2)
    print(json.dumps({"config": args.config, "limit": args.limit, "per_process_batch": args.batch_size or "config",
                      "threads_per_process": 1, "cpus": os.cpu_count(), "load_before": load_before,
                      "load_after": [round(x, 2) for x in os.getloadavg()], "runs": runs,
                      "independent": independent}, indent=2))


if __name__ == "__main__":
    main()
