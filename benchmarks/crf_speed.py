"""Speed of seqlab's CRF against pytorch-crf, side by side: NLL forward+backward and Viterbi.

Usage::

    OMP_NUM_THREADS=1 python -m benchmarks.crf_speed --batch 32 --length 40 --tags 17 --repeats 100 --rounds 5 --threads 1

Prints one JSON object. Both libraries get the same inputs and parameters and run in the
same process at the same thread count. The blocks alternate: in each of ``--rounds``
rounds, seqlab's NLL block, pytorch-crf's NLL block, seqlab's Viterbi block, pytorch-crf's
Viterbi block; a block is the median of ``--repeats`` single calls (milliseconds) after
warm-up calls and a short pause. The JSON gives every round's block medians, the median
over rounds of each side, and the ratio seqlab / pytorch-crf (below 1: seqlab faster), per
round and of the medians, with the load average before and after. ``random_lengths``
repeats the whole measurement with sentence lengths drawn uniformly from 1 to ``--length``.
Needs ``pip install pytorch-crf`` (module ``torchcrf``).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable
from types import ModuleType

import torch

from seqlab.modules.crf import CRF

from benchmarks.sidebyside import command_line, load_average, machine, package_version, summarise

logger = logging.getLogger("crf_speed")


def _load_pytorch_crf() -> ModuleType | None:
    try:
        import torchcrf
    except ImportError:
        logger.warning("pytorch-crf is not installed; to compare, run: pip install pytorch-crf")
        return None
    return torchcrf


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``fn`` in milliseconds, after a pause and warm-up calls."""
    time.sleep(0.2)
    for _ in range(max(5, repeats // 10)):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000.0)
    return round(statistics.median(times), 3)


def _tasks(
    crf: torch.nn.Module, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor, ours: bool
) -> tuple[Callable[[], None], Callable[[], object]]:
    """(nll forward+backward, viterbi) closures for one library."""
    params = [emissions, *crf.parameters()]

    def nll() -> None:
        for p in params:
            p.grad = None
        loss = crf.loss(emissions, tags, mask) if ours else -crf(emissions, tags, mask, reduction="mean")
        loss.backward()

    def viterbi() -> object:
        with torch.no_grad():
            return crf.decode(emissions, mask)

    return nll, viterbi


def _measure(
    batch: int, length: int, num_tags: int, repeats: int, rounds: int, random_lengths: bool, seed: int,
    torchcrf: ModuleType,
) -> dict:
    """Alternating block medians of both libraries on one random batch."""
    generator = torch.Generator().manual_seed(seed)
    emissions = torch.randn(batch, length, num_tags, generator=generator).requires_grad_()
    tags = torch.randint(0, num_tags, (batch, length), generator=generator)
    if random_lengths:
        lengths = torch.randint(1, length + 1, (batch,), generator=generator)
    else:
        lengths = torch.full((batch,), length)
    mask = torch.arange(length).unsqueeze(0) < lengths.unsqueeze(1)  # shape: (B, T)
    ours = CRF(num_tags)
    theirs = torchcrf.CRF(num_tags, batch_first=True)
    with torch.no_grad():
        theirs.transitions.copy_(ours.transitions)
        theirs.start_transitions.copy_(ours.start)
        theirs.end_transitions.copy_(ours.end)
    nll_ours, vit_ours = _tasks(ours, emissions, tags, mask, ours=True)
    nll_theirs, vit_theirs = _tasks(theirs, emissions, tags, mask, ours=False)
    same_paths = bool(torch.equal(vit_ours()[mask], torch.as_tensor(sum(vit_theirs(), []))))
    nll_rounds, vit_rounds = [], []
    for _ in range(rounds):
        nll_rounds.append({"seqlab": _median_ms(nll_ours, repeats), "pytorch_crf": _median_ms(nll_theirs, repeats)})
        vit_rounds.append({"seqlab": _median_ms(vit_ours, repeats), "pytorch_crf": _median_ms(vit_theirs, repeats)})
    return {
        "same_viterbi_paths": same_paths,
        "nll_fwd_bwd_ms": summarise(nll_rounds, "seqlab", "pytorch_crf"),
        "viterbi_ms": summarise(vit_rounds, "seqlab", "pytorch_crf"),
    }


def benchmark(batch: int, length: int, tags: int, repeats: int, rounds: int, threads: int, seed: int = 0) -> dict:
    """Time both libraries with equal and with random sentence lengths; return the JSON-ready result."""
    torch.set_num_threads(threads)
    torchcrf = _load_pytorch_crf()
    if torchcrf is None:
        raise SystemExit("pytorch-crf is not installed: pip install pytorch-crf")
    load_before = load_average()
    fixed = _measure(batch, length, tags, repeats, rounds, random_lengths=False, seed=seed, torchcrf=torchcrf)
    varied = _measure(batch, length, tags, repeats, rounds, random_lengths=True, seed=seed, torchcrf=torchcrf)
    return {
        "benchmark": "crf_layer", "scope": "in-process",
        "sides": {"seqlab": "seqlab.modules.crf.CRF", "pytorch_crf": "torchcrf.CRF(batch_first=True)"},
        "units": "milliseconds per call (median of --repeats calls per block)",
        "batch": batch, "length": length, "tags": tags, "threads": threads,
        "torch_threads": torch.get_num_threads(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "repeats": repeats, "rounds": rounds,
        "order": "per round: seqlab nll, pytorch_crf nll, seqlab viterbi, pytorch_crf viterbi",
        "load_average_before": load_before, "load_average_after": load_average(),
        "machine": machine(),
        "versions": {"torch": torch.__version__, "pytorch-crf": package_version("pytorch-crf")},
        "command": command_line(),
        "fixed_lengths": fixed, "random_lengths": varied,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=40)
    parser.add_argument("--tags", type=int, default=17)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("batch", "length", "tags", "repeats", "rounds", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    result = benchmark(args.batch, args.length, args.tags, args.repeats, args.rounds, args.threads, args.seed)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
