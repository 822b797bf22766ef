"""Speed of a trained relation classifier: reading, encoding, classification and training steps; prints JSON.

CPU time (``time.process_time``) is reported beside wall time, so the figures mean something on a
machine shared with other jobs.

    python -m benchmarks.relation_speed --run runs/semeval10_ea_s1 \
        --file ../shared/data/semeval2010_task8/TEST_FILE_FULL.TXT --threads 1
"""
from __future__ import annotations

import argparse
import json
import time

import torch


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True)
    parser.add_argument("--file", required=True, help="a SemEval-format file")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=200)
    parser.add_argument("--train-sentences", type=int, default=1000)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    from seqlab.data.semeval import read_semeval
    from seqlab.core.optim import build_optimizer
    from seqlab.relation.api import RelationModel
    from seqlab.relation.build import batches, encode, model_inputs
    from seqlab.relation.predict import predict_probabilities

    run = RelationModel.load(args.run, "cpu")
    examples, read_wall, read_cpu = timed(lambda: model_inputs(read_semeval(args.file), run.config.model))
    data, enc_wall, enc_cpu = timed(lambda: encode(examples, run.vocabs))
    _, pred_wall, pred_cpu = timed(lambda: predict_probabilities(run.model, data, batch_size=args.batch_size))
    n = len(examples)

    model = run.model.train()
    optimizer = build_optimizer([p for p in model.parameters() if p.requires_grad], run.config.train)[0]
    subset = encode(examples[: args.train_sentences], run.vocabs)
    gen = torch.Generator().manual_seed(1)

    def train_pass() -> int:
        seen = 0
        for _, batch in batches(subset, run.config.train.batch_size, shuffle=True, generator=gen):
            loss = model.loss(batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            seen += int(batch.words.shape[0])
        return seen

    seen, train_wall, train_cpu = timed(train_pass)
    print(json.dumps({
        "run": args.run, "file": args.file, "sentences": n, "threads": args.threads, "batch_size": args.batch_size,
        "read_and_tokenize_sentences_per_second": {"wall": n / read_wall, "cpu": n / read_cpu},
        "encode_sentences_per_second": {"wall": n / enc_wall, "cpu": n / enc_cpu},
        "classify_sentences_per_second": {"wall": n / pred_wall, "cpu": n / pred_cpu},
        "train_sentences_per_second": {"wall": seen / train_wall, "cpu": seen / train_cpu},
        "train_epoch_seconds_7200_sentences": {"wall": 7200 * train_wall / seen, "cpu": 7200 * train_cpu / seen},
    }, indent=2))


if __name__ == "__main__":
    main()
