"""Speed of seqlab's CRF against pytorch-crf: NLL forward+backward and Viterbi decoding.

Usage::

    python benchmarks/crf_speed.py --batch 32 --length 40 --tags 17 --repeats 100 --threads 2

Prints one JSON object. Times are medians over ``--repeats`` single calls, in milliseconds,
after warm-up calls, on the same inputs and parameters for both libraries; ``load_average``
records how busy the machine was (other processes' load inflates medians). Each (library,
task) is timed in its own block after a short pause, not interleaved: pytorch-crf's
multithreaded ops leave OpenMP workers spinning, which slows whatever runs next on a
2-core machine. ``ratio`` is seqlab's time divided by pytorch-crf's. The comparison
needs the optional bench dependency ``pip install pytorch-crf`` (module ``torchcrf``);
without it ``pytorch_crf`` and ``ratio`` are null. ``random_lengths`` repeats the
measurement with sentence lengths drawn uniformly from 1 to ``--length``.
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
from typing import Any

import torch

from seqlab.modules.crf import CRF

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
    batch: int, length: int, num_tags: int, repeats: int, random_lengths: bool, seed: int, torchcrf: ModuleType | None
) -> dict:
    """Median times of both libraries on one random batch."""
    generator = torch.Generator().manual_seed(seed)
    emissions = torch.randn(batch, length, num_tags, generator=generator).requires_grad_()
    tags = torch.randint(0, num_tags, (batch, length), generator=generator)
    if random_lengths:
        lengths = torch.randint(1, length + 1, (batch,), generator=generator)
    else:
        lengths = torch.full((batch,), length)
    mask = torch.arange(length).unsqueeze(0) < lengths.unsqueeze(1)  # shape: (B, T)
    ours = CRF(num_tags)
    libraries = {"seqlab": _tasks(ours, emissions, tags, mask, ours=True)}
    if torchcrf is not None:
        theirs = torchcrf.CRF(num_tags, batch_first=True)
        with torch.no_grad():
            theirs.transitions.copy_(ours.transitions)
            theirs.start_transitions.copy_(ours.start)
            theirs.end_transitions.copy_(ours.end)
        libraries["pytorch_crf"] = _tasks(theirs, emissions, tags, mask, ours=False)
    result: dict[str, Any] = {
        name: {"nll_fwd_bwd_ms": _median_ms(nll, repeats), "viterbi_ms": _median_ms(viterbi, repeats)}
        for name, (nll, viterbi) in libraries.items()
    }
    result.setdefault("pytorch_crf", None)
    result["ratio"] = None
    if result["pytorch_crf"] is not None:
        result["ratio"] = {
            key: round(result["seqlab"][key] / result["pytorch_crf"][key], 3) for key in result["seqlab"]
        }
    return result


def benchmark(batch: int, length: int, tags: int, repeats: int, threads: int, seed: int = 0) -> dict:
    """Time both libraries with equal and with random sentence lengths; return the JSON-ready result."""
    torch.set_num_threads(threads)
    torchcrf = _load_pytorch_crf()
    fixed = _measure(batch, length, tags, repeats, random_lengths=False, seed=seed, torchcrf=torchcrf)
    varied = _measure(batch, length, tags, repeats, random_lengths=True, seed=seed, torchcrf=torchcrf)
    return {
        "batch": batch, "length": length, "tags": tags, "threads": threads, "repeats": repeats,
        "torch": torch.__version__, "load_average": [round(x, 2) for x in os.getloadavg()],
        **fixed, "random_lengths": varied,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=40)
    parser.add_argument("--tags", type=int, default=17)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("batch", "length", "tags", "repeats", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    result = benchmark(args.batch, args.length, args.tags, args.repeats, args.threads, args.seed)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
