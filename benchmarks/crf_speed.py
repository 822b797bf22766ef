"""Speed of seqlab's CRF against pytorch-crf: NLL forward+backward and Viterbi decoding.

Usage::

    python benchmarks/crf_speed.py --batch 32 --length 40 --tags 17 --repeats 200 --threads 2

Prints one JSON object. Times are medians over ``--repeats`` single calls, in milliseconds;
the two libraries are timed alternately on the same inputs so that load on the machine
affects both alike. ``ratio`` is seqlab's time divided by pytorch-crf's. The comparison
needs the optional bench dependency ``pip install pytorch-crf`` (module ``torchcrf``);
without it ``pytorch_crf`` and ``ratio`` are null. ``random_lengths`` repeats the
measurement with sentence lengths drawn uniformly from 1 to ``--length``.
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

from seqlab.modules.crf import CRF

logger = logging.getLogger("crf_speed")


def _load_pytorch_crf() -> Any | None:
    try:
        import torchcrf
    except ImportError:
        logger.warning("pytorch-crf is not installed; to compare, run: pip install pytorch-crf")
        return None
    return torchcrf


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def _tasks(crf: torch.nn.Module, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor, ours: bool):
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


def _measure(batch: int, length: int, num_tags: int, repeats: int, random_lengths: bool, seed: int) -> dict:
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
    torchcrf = _load_pytorch_crf()
    if torchcrf is not None:
        theirs = torchcrf.CRF(num_tags, batch_first=True)
        with torch.no_grad():
            theirs.transitions.copy_(ours.transitions)
            theirs.start_transitions.copy_(ours.start)
            theirs.end_transitions.copy_(ours.end)
        libraries["pytorch_crf"] = _tasks(theirs, emissions, tags, mask, ours=False)
    times: dict[str, dict[str, list[float]]] = {name: {"nll": [], "vit": []} for name in libraries}
    for step in range(max(10, repeats // 10) + repeats):  # the first steps are warm-up
        for name, (nll, viterbi) in libraries.items():
            nll_ms, vit_ms = _timed(nll), _timed(viterbi)
            if step >= max(10, repeats // 10):
                times[name]["nll"].append(nll_ms)
                times[name]["vit"].append(vit_ms)
    result: dict[str, Any] = {
        name: {
            "nll_fwd_bwd_ms": round(statistics.median(t["nll"]), 3),
            "viterbi_ms": round(statistics.median(t["vit"]), 3),
        }
        for name, t in times.items()
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
    fixed = _measure(batch, length, tags, repeats, random_lengths=False, seed=seed)
    varied = _measure(batch, length, tags, repeats, random_lengths=True, seed=seed)
    return {
        "batch": batch, "length": length, "tags": tags, "threads": threads, "repeats": repeats,
        "torch": torch.__version__, **fixed, "random_lengths": varied,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=40)
    parser.add_argument("--tags", type=int, default=17)
    parser.add_argument("--repeats", type=int, default=200)
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
