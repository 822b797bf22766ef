"""Tagger speed: training and decoding throughput on CoNLL-2003, printed as JSON.

    python -m benchmarks.tagger_speed --run runs/conll03_glove_s1 [--threads 2] [--train-sentences 14041]

Training is timed over ``--train-sentences`` sentences of the training set at the
run's batch size (one full epoch by default), with the run's optimizer, clipping
and dropout. Decoding is timed over the whole test set at batch sizes 1, 32 and
100 under ``torch.inference_mode()``, from encoded tensors to label strings.
Peak RSS is the process's maximum resident set size.
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
from seqlab.data.dataset import read_split
from seqlab.tagging.api import SequenceTagger
from seqlab.tagging.build import parameter_groups
from seqlab.tagging.features import encode_options
from seqlab.tagging.predict import predict


def time_training(model, config, data, sentences: int) -> dict[str, float]:
    model = copy.deepcopy(model).train()
    optimizer, _ = build_optimizer(parameter_groups(model, config.train), config.train)
    params = [p for p in model.parameters() if p.requires_grad]
    generator = torch.Generator().manual_seed(0)
    seen = tokens = 0
    start = time.perf_counter()
    for batch in iterate(data, config.train.batch_size, shuffle=True, generator=generator):
        loss = model.loss(batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, config.train.clip)
        optimizer.step()
        seen += int(batch.indices.shape[0])
        tokens += int(batch.mask.sum())
        if seen >= sentences:
            break
    elapsed = time.perf_counter() - start
    return {"sentences": seen, "seconds": round(elapsed, 3), "sentences_per_second": round(seen / elapsed, 1),
            "tokens_per_second": round(tokens / elapsed, 1)}


def time_decoding(model, data, labels, batch_size: int, repeats: int) -> dict[str, float]:
    predict(model, data, labels, batch_size=batch_size)  # warm-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        predict(model, data, labels, batch_size=batch_size)
        best = min(best, time.perf_counter() - start)
    tokens = int(data.lengths.sum())
    return {"batch_size": batch_size, "seconds": round(best, 3), "sentences_per_second": round(len(data) / best, 1),
            "tokens_per_second": round(tokens / best, 1)}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", required=True, help="a trained run directory (its config, vocabularies and weights)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--train-sentences", type=int, default=14041, help="sentences to time training on (default: one epoch)")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 32, 100])
    p.add_argument("--repeats", type=int, default=3, help="decoding repeats; the fastest is reported")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)

    tagger = SequenceTagger.load(args.run, "cpu")
    config, vocabs, model, features = tagger.config, tagger.vocabs, tagger.model, tagger.features
    train = read_split(config.data, "train")
    test = read_split(config.data, "test")
    train_data = encode(train.tokens, vocabs, tags=train.tags, **encode_options(features))
    test_data = encode(test.tokens, vocabs, **encode_options(features))

    result = {
        "run": args.run,
        "threads": args.threads,
        "torch": torch.__version__,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "cpu_count": os.cpu_count(),
        "train": time_training(model, config, train_data, args.train_sentences),
        "decode": [time_decoding(model, test_data, vocabs["tags"], b, args.repeats) for b in args.batch_sizes],
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
