"""Windowed-tagger speed (Turian et al. 2009 on CoNLL-2000): training time per epoch and tagging tokens/s.

    python -m benchmarks.window_speed --run runs/conll00_turian2009/arch=I-T-W-W-O,filters=4 [--threads 1]

Training is timed over one epoch of the run's training split (``--train-sentences`` to cut
it short and extrapolate) with the run's optimizer and batch size. Tagging is timed on the
test file from token lists to label strings, *including feature extraction*: encoding
computes every feature (scaled embeddings, POS one-hot, label frequencies, orthographic)
once per distinct (word, POS) type of the input, then the model decodes sorted batches.
The model and its feature files are loaded once beforehand (a tagging service does so at
start-up), and that loading time is reported separately; like a service, the runs share one
:class:`~seqlab.modules.window_fast.Workspace` (the tables' memory, no values), so the first
run, also reported, pays for fresh pages. Best of ``--repeats`` runs after that first one. Both wall
and CPU seconds are given: on a machine shared with other jobs, CPU time (one thread) is the
figure that does not depend on the load. Tagging uses the per-type tables of
:mod:`seqlab.modules.window_fast`; ``--plain`` also times the plain forward pass and checks that
both give the same labels (``same_labels_everywhere`` in the JSON).
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import resource
import sys
import time

import torch

from seqlab.core.optim import build_optimizer
from seqlab.data.batching import encode, iterate
from seqlab.data.dataset import read_split, read_splits
from seqlab.tagging.api import SequenceTagger
from seqlab.tagging.build import parameter_groups
from seqlab.tagging.features import encode_options
from seqlab.tagging.predict import Predictor


def time_training(model, config, data, sentences: int) -> dict[str, float]:
    """One epoch (or ``sentences`` of it, extrapolated) with the run's optimizer and batch size."""
    model = copy.deepcopy(model).train()
    optimizer, _ = build_optimizer(parameter_groups(model, config.train), config.train)
    generator = torch.Generator().manual_seed(0)
    seen = tokens = 0
    start, cpu = time.perf_counter(), time.process_time()
    for batch in iterate(data, config.train.batch_size, shuffle=True, generator=generator):
        loss = model.loss(batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        seen += int(batch.indices.shape[0])
        tokens += int(batch.mask.sum())
        if seen >= sentences:
            break
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"sentences": seen, "seconds": round(elapsed, 2), "cpu_seconds": round(cpu, 2),
            "seconds_per_epoch": round(elapsed * len(data) / seen, 2),
            "cpu_seconds_per_epoch": round(cpu * len(data) / seen, 2), "tokens_per_second": round(tokens / elapsed, 1),
            "tokens_per_cpu_second": round(tokens / cpu, 1)}


def time_tagging(model, vocabs, features, split, batch_size: int, repeats: int,
                 tables: bool = True) -> tuple[dict[str, float], list[list[str]]]:
    """Tokens/s from token lists to labels, feature extraction (per type) included; and the labels.

    ``tables``: the per-type table fast path of :mod:`seqlab.modules.window_fast` (False: plain forward).
    """
    tokens = split.num_tokens
    best_total = best_features = best_cpu = best_feature_cpu = float("inf")
    predictor, first = Predictor(model, vocabs["tags"], tables=tables), None  # one workspace, reused by every run
    for _ in range(repeats + 1):  # the first run warms up
        start, cpu = time.perf_counter(), time.process_time()
        data = encode(split.tokens, vocabs, **encode_options(features, split.columns))
        encoded, encoded_cpu = time.perf_counter(), time.process_time()
        results = predictor(data, batch_size=batch_size)
        done = time.perf_counter()
        if len(results) != len(split.tokens):
            raise RuntimeError(f"tagged {len(results)} sentences of {len(split.tokens)}")
        if first is None:
            first = done - start
            continue
        best_total, best_features = min(best_total, done - start), min(best_features, encoded - start)
        best_feature_cpu = min(best_feature_cpu, encoded_cpu - cpu)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return {"batch_size": batch_size, "tables": tables, "tokens": tokens, "first_run_seconds": round(first, 3),
            "seconds": round(best_total, 3),
            "cpu_seconds": round(best_cpu, 3), "feature_seconds": round(best_features, 3),
            "feature_cpu_seconds": round(best_feature_cpu, 3),
            "tokens_per_second": round(tokens / best_total, 1), "tokens_per_cpu_second": round(tokens / best_cpu, 1)}, [r.labels for r in results]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", required=True, help="a trained windowed-tagger run directory")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--train-sentences", type=int, default=0, help="time this many sentences (0: a full epoch)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--plain", action="store_true",
                   help="also time the plain forward pass (no per-type tables) and check both give the same labels")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats must be at least 1 (runs timed after the first), not {args.repeats}")
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    tagger = SequenceTagger.load(args.run, "cpu")
    config, vocabs, model, features = tagger.config, tagger.vocabs, tagger.model, tagger.features
    load_seconds = time.perf_counter() - start
    splits = read_splits(config.data)
    train = splits["train"]
    train_data = encode(train.tokens, vocabs, tags=train.tags, **encode_options(features, train.columns))
    test = splits.get("test") or read_split(config.data, "test")
    report = {
        "run": args.run,
        "architecture": config.model.window.architecture if config.model.window else config.model.encoder,
        "filters": config.model.window.filters if config.model.window else config.model.output_filters,
        "threads": args.threads,
        "python": sys.version.split()[0], "torch": torch.__version__, "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_model_and_features_seconds": round(load_seconds, 2),
        "parameters": sum(q.numel() for q in model.parameters()),
        "train": time_training(model, config, train_data, args.train_sentences or len(train_data)),
    }
    report["tag"], labels = [], None
    for tables in (True, False) if args.plain else (True,):
        for b in args.batch_sizes:
            timing, found = time_tagging(model, vocabs, features, test, b, args.repeats, tables=tables)
            report["tag"].append(timing)
            if labels is not None and found != labels:
                differ = sum(x != y for got, want in zip(found, labels) for x, y in zip(got, want))
                report.setdefault("label_differences", []).append({"batch_size": b, "tables": tables, "tokens": differ})
            labels = labels or found
    report["same_labels_everywhere"] = "label_differences" not in report
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux: KiB
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
