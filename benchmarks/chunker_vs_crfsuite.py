"""Windowed chunker against python-crfsuite, side by side: tagging speed on CoNLL-2000 test; prints one JSON object.

    OMP_NUM_THREADS=1 python -m benchmarks.chunker_vs_crfsuite --run RUN \
        --crfsuite-model MODEL.crfsuite --rounds 5 --threads 1 --batch-size 100

In-process, both sides in this one process at the same thread count (CRFsuite is single-
threaded; torch is set to ``--threads``). In each of ``--rounds`` rounds, seqlab tags the
whole test file, then CRFsuite does; each side's first run (start-up costs: fresh memory,
caches) runs before the rounds and is reported apart. Both go from token and POS lists
to label strings, *feature extraction included*:

* seqlab: :func:`seqlab.data.batching.encode` (every feature of each distinct (word, POS)
  type) and one :class:`seqlab.tagging.predict.Predictor` at ``--batch-size`` with the per-type
  tables of :mod:`seqlab.modules.window_fast` and its :class:`~seqlab.modules.window_fast.Workspace`
  kept across runs (as ``benchmarks/window_speed.py``);
* CRFsuite: ``examples/crfsuite_chunker.py``'s :class:`ChunkFeatures` (Sha & Pereira /
  Turian et al. 2010 templates, one dict per token) then ``Tagger.tag`` (Viterbi in C++).

Figures: tokens/s wall (the ratio's figure) and tokens per CPU second, per round, with
medians; the ratio is seqlab's tokens/s over CRFsuite's of the same round (above 1: seqlab
faster). Models are loaded once beforehand; loading times are reported apart.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import torch

from benchmarks.sidebyside import command_line, load_average, machine, package_version, portable_path, summarise


def seqlab_surface():
    """Every seqlab import of this benchmark, in one place (module paths may move)."""
    from seqlab.data.batching import encode
    from seqlab.data.dataset import read_split
    from seqlab.tagging.api import SequenceTagger
    from seqlab.tagging.features import encode_options
    from seqlab.tagging.predict import Predictor

    return SequenceTagger, encode, read_split, Predictor, encode_options


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", required=True, help="a trained seqlab windowed-chunker run directory")
    p.add_argument("--crfsuite-model", required=True, help="a model written by examples/crfsuite_chunker.py")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=100)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    SequenceTagger, encode, read_split, Predictor, encode_options = seqlab_surface()
    from examples.baselines import import_pycrfsuite
    from examples.crfsuite_chunker import ChunkFeatures, read_sentences

    load_before = load_average()
    start = time.perf_counter()
    seqlab_tagger = SequenceTagger.load(args.run, "cpu")
    config, vocabs, model, features = (seqlab_tagger.config, seqlab_tagger.vocabs, seqlab_tagger.model,
                                       seqlab_tagger.features)
    seqlab_load = time.perf_counter() - start
    test = read_split(config.data, "test")
    tokens = test.num_tokens
    predictor = Predictor(model, vocabs["tags"], tables=True)  # keeps one workspace across runs

    def run_seqlab() -> list[list[str]]:
        data = encode(test.tokens, vocabs, **encode_options(features, test.columns))
        results = predictor(data, batch_size=args.batch_size)
        return [r.labels for r in results]

    test_file = config.data.test
    from seqlab.core.paths import resolve_data_path  # the same file seqlab reads

    sentences = read_sentences(resolve_data_path(test_file, key="test"))
    if sum(len(s[0]) for s in sentences) != tokens or len(sentences) != len(test.tokens):
        raise RuntimeError("seqlab and crfsuite_chunker read different test sentences")
    featurize = ChunkFeatures()
    start = time.perf_counter()
    tagger = import_pycrfsuite().Tagger()
    tagger.open(str(args.crfsuite_model))
    crfsuite_load = time.perf_counter() - start

    def run_crfsuite() -> list[list[str]]:
        return [tagger.tag(featurize(words, pos)) for words, pos, _ in sentences]

    def timed(fn) -> tuple[float, float, list[list[str]]]:
        time.sleep(0.5)
        start, cpu = time.perf_counter(), time.process_time()
        labels = fn()
        return time.perf_counter() - start, time.process_time() - cpu, labels

    first = {}
    first["seqlab"], _, ours = timed(run_seqlab)
    first["crfsuite"], _, theirs = timed(run_crfsuite)
    gold = [[t for t in s[2]] for s in sentences]
    agree = {name: round(sum(x == y for a, b in zip(labels, gold) for x, y in zip(a, b)) / tokens, 4)
             for name, labels in (("seqlab", ours), ("crfsuite", theirs))}
    rounds, cpu_rounds, seconds = [], [], []
    for _ in range(args.rounds):
        row, cpu_row, sec_row = {}, {}, {}
        for name, fn in (("seqlab", run_seqlab), ("crfsuite", run_crfsuite)):
            wall, cpu, labels = timed(fn)
            if len(labels) != len(sentences):
                raise RuntimeError(f"{name} tagged {len(labels)} sentences of {len(sentences)}")
            row[name], cpu_row[name] = round(tokens / wall, 1), round(tokens / cpu, 1)
            sec_row[name] = {"wall": round(wall, 3), "cpu": round(cpu, 3)}
        rounds.append(row)
        cpu_rounds.append(cpu_row)
        seconds.append(sec_row)
    tagger.close()
    print(json.dumps({
        "benchmark": "windowed_chunker_vs_crfsuite", "scope": "in-process, models loaded, feature extraction included",
        "sides": {"seqlab": f"{portable_path(args.run)} ({config.model.window.architecture if config.model.window else config.model.encoder}"
                            f", decoder {config.model.decoder})",
                  "crfsuite": portable_path(args.crfsuite_model)},
        "test": portable_path(test_file), "sentences": len(sentences), "tokens": tokens,
        "threads": args.threads, "torch_threads": torch.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "batch_size": args.batch_size,
        "rounds_count": args.rounds, "order": "per round: seqlab, crfsuite",
        "load_seconds": {"seqlab": round(seqlab_load, 3), "crfsuite": round(crfsuite_load, 3)},
        "first_run_seconds": {k: round(v, 3) for k, v in first.items()},
        "token_accuracy_vs_gold": agree,
        "tokens_per_second": summarise(rounds, "seqlab", "crfsuite", lower_is_better=False),
        "tokens_per_cpu_second": summarise(cpu_rounds, "seqlab", "crfsuite", lower_is_better=False),
        "seconds_per_round": seconds,
        "load_average_before": load_before, "load_average_after": load_average(),
        "machine": machine(),
        "versions": {"torch": torch.__version__, "python-crfsuite": package_version("python-crfsuite"),
                     "seqlab": package_version("seqlab")},
        "command": command_line(),
    }, indent=2))


if __name__ == "__main__":
    main()
