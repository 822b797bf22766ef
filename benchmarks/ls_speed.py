"""What fixed LS vectors (Ghaddar & Langlais 2018 §3-4) cost a BiLSTM-CRF in training, printed as JSON.

    python -m benchmarks.ls_speed --runs runs/ls/sanity_conll03_ls runs/ls/sanity_conll03_glove

For each trained run: the CPU time (``time.process_time``, so other jobs on the machine matter less than
for wall time) of encoding the training set (where LS vectors are computed, once per word type), of one
epoch of batching alone (where each batch gathers its rows of the per-type table), and of training
steps on ``--sentences`` sentences, repeated ``--reps`` times with the runs interleaved. Comparing a
run with LS features and one without separates the cost of the look-up from that of the wider model.
"""
from __future__ import annotations

import argparse
import copy
import json
import time

import torch

from benchmarks.tagger_speed import time_training
from seqlab.data.batching import encode, iterate
from seqlab.data.dataset import read_split
from seqlab.tagging.api import SequenceTagger
from seqlab.tagging.features import encode_options


def batching_cpu(data, batch_size: int) -> float:
    """CPU seconds to cut one shuffled epoch into batches (features gathered per batch)."""
    start = time.process_time()
    for _ in iterate(data, batch_size, shuffle=True, generator=torch.Generator().manual_seed(0)):
        pass
    return round(time.process_time() - start, 3)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", nargs="+", required=True, help="trained run directories")
    p.add_argument("--sentences", type=int, default=2000, help="training sentences timed per repetition")
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    torch.set_num_threads(1)
    loaded, result = {}, {}
    for run in args.runs:
        tagger = SequenceTagger.load(run, "cpu")
        config, vocabs, model, features = tagger.config, tagger.vocabs, tagger.model, tagger.features
        train = read_split(config.data, "train")
        start = time.process_time()
        data = encode(train.tokens, vocabs, tags=train.tags, **encode_options(features))
        bare = copy.copy(data)
        bare.type_features = None
        loaded[run] = (model, config, data)
        result[run] = {"feature_dim": features.dense_dim if features else 0, "types": len(data.type_strings) - 1,
                       "encode_cpu_s": round(time.process_time() - start, 2),
                       "batching_cpu_s": batching_cpu(data, config.train.batch_size),
                       "batching_without_features_cpu_s": batching_cpu(bare, config.train.batch_size),
                       "train_cpu_sentences_per_s": []}
    for _ in range(args.reps):
        for run, (model, config, data) in loaded.items():
            start = time.process_time()
            seen = time_training(model, config, data, args.sentences)["sentences"]
            result[run]["train_cpu_sentences_per_s"].append(round(seen / (time.process_time() - start), 1))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
