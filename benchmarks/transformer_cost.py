"""Cost of a config's transformer embedder: the frozen-vector cache (time, memory) and fine-tuning steps; prints JSON.

Reads a config's splits as training does, computes every sentence's frozen vectors once (what a frozen run
does before its first epoch) and reports wall and CPU time (``time.process_time``, meaningful on a shared
machine), the cache's size and the process's resident memory before and after. With ``--fine-tune N``, it
also times forward + backward passes of the encoder alone over N training sentences in batches of
``train.batch_size``: what fine-tuning adds to each training step.

    python -m benchmarks.transformer_cost configs/semeval10_minilm.yaml --threads 1 --fine-tune 400
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch


def rss_mb() -> float:
    """The process's resident memory in MB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def sentences(config) -> dict[str, list[tuple[str, ...]]]:
    """Each split's sentences, as the model reads them."""
    if getattr(config, "task", "") == "relation":
        from seqlab.relation.task import read_splits

        return {name: [e.tokens for e in split] for name, split in read_splits(config).items()}
    from seqlab.data.dataset import read_splits

    return {name: [tuple(s) for s in split.tokens] for name, split in read_splits(config.data).items()}


def main(argv: list[str] | None = None) -> None:
    import seqlab
    from dataclasses import replace

    from seqlab.modules.transformer import TransformerEmbedder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--fine-tune", type=int, default=0, metavar="N", help="time fine-tuning steps over N sentences")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    config = seqlab.read_config(args.config)
    if config.model.transformer is None:
        raise SystemExit(f"{args.config}: model.transformer is not set")
    splits = sentences(config)
    before = rss_mb()
    embedder = TransformerEmbedder(replace(config.model.transformer, fine_tune=False))
    loaded = rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    stats = embedder.precompute(s for split in splits.values() for s in split)
    out = {"config": args.config, "threads": args.threads, "sentences": {k: len(v) for k, v in splits.items()},
           "tokens": sum(len(s) for split in splits.values() for s in split),
           "cache": {"sentences": stats["sentences"], "megabytes": round(stats["megabytes"], 1),
                     "wall_seconds": round(time.perf_counter() - wall, 1),
                     "cpu_seconds": round(time.process_time() - cpu, 1)},
           "rss_mb": {"before_encoder": round(before), "encoder_loaded": round(loaded), "cache_filled": round(rss_mb())}}
    if args.fine_tune:
        tuned = TransformerEmbedder(replace(config.model.transformer, fine_tune=True)).train()
        batch = config.train.batch_size
        train = splits["train"][: args.fine_tune]
        wall, cpu = time.perf_counter(), time.process_time()
        for at in range(0, len(train), batch):
            tuned(train[at: at + batch]).sum().backward()
        seconds, cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
        out["fine_tune"] = {"sentences": len(train), "batch_size": batch, "wall_seconds": round(seconds, 1),
                            "cpu_seconds": round(cpu_seconds, 1),
                            "sentences_per_cpu_second": round(len(train) / cpu_seconds, 1)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
