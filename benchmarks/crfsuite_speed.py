"""Tagging speed of the CRFsuite linear-CRF chunker (``examples/crfsuite_chunker.py``), printed as JSON.

    python -m benchmarks.crfsuite_speed --model runs/crfsuite_chunker_baseline/model.crfsuite \
        [--test conll2000/test.txt] [--repeats 3]

The baseline for the window taggers (``benchmarks/window_speed.py``): the
same test file, from token and POS lists to label strings, *feature extraction included*
(the Sha & Pereira / Turian et al. 2010 templates of :class:`ChunkFeatures`, one dict per
token, then CRFsuite's Viterbi in C++). CRFsuite runs on one core. Timing both on the same
machine minutes apart is what makes the comparison fair: on a shared virtual machine the
speed of a core drifts by a quarter. Best of ``--repeats`` runs after a first one, which is
also reported. The model was trained with the command in RESULTS.md; loading it is timed apart.
"""
from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from pathlib import Path

from examples.baselines import import_pycrfsuite
from examples.crfsuite_chunker import ChunkFeatures, read_sentences
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="a CRFsuite model written by examples/crfsuite_chunker.py")
    p.add_argument("--test", default="conll2000/test.txt", help="CoNLL-2000 file (relative to SEQLAB_DATA)")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    if args.repeats < 1:
        p.error(f"--repeats must be at least 1 (runs timed after the first), not {args.repeats}")
    if not Path(args.model).is_file():
        p.error(f"--model {args.model}: no such file (train one with the command in RESULTS.md)")
    try:
        test = read_sentences(resolve_data_path(args.test, key="test"))
        import_pycrfsuite()
    except SeqlabError as err:
        p.error(str(err))
    tokens = sum(len(words) for words, _, _ in test)
    featurize = ChunkFeatures()
    start = time.perf_counter()
    tagger = import_pycrfsuite().Tagger()
    tagger.open(str(args.model))
    load = time.perf_counter() - start
    runs = []
    try:
        for _ in range(args.repeats + 1):
            start, cpu = time.perf_counter(), time.process_time()
            labels = [tagger.tag(featurize(words, pos)) for words, pos, _ in test]
            runs.append((time.perf_counter() - start, time.process_time() - cpu))
            if len(labels) != len(test):
                raise RuntimeError(f"tagged {len(labels)} sentences of {len(test)}")
    finally:
        tagger.close()
    (first, _), rest = runs[0], runs[1:]
    seconds, cpu = min(r[0] for r in rest), min(r[1] for r in rest)
    print(json.dumps({
        "model": str(args.model), "test": args.test, "tokens": tokens, "sentences": len(test),
        "python": sys.version.split()[0], "machine": platform.machine(),
        "load_model_seconds": round(load, 3), "first_run_seconds": round(first, 3),
        "seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3),
        "tokens_per_second": round(tokens / seconds, 1), "tokens_per_cpu_second": round(tokens / cpu, 1),
        "sentences_per_second": round(len(test) / seconds, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
