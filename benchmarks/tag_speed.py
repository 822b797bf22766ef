"""Whole-process ``seqlab tag`` beside in-process decoding of the same sentences, printed as JSON.

    python -m benchmarks.tag_speed [--model en-ner-conll03] [--sentences 100000] [--threads 1]

The input is the first Wikipedia lines (``$SEQLAB_DATA/unlabeled/wikipedia_en_2014``) holding
``--sentences`` sentences, one paragraph per line, written to a scratch folder. Three timings:

* ``whole_process``: a fresh ``python -m seqlab tag MODEL FILE --format conll --threads T`` with its output
  going to a file: wall time, CPU time (user + system, from ``os.wait4``) and peak RSS, start-up included;
* ``tag_many``: in this process, the model loaded beforehand, ``SequenceTagger.tag_many`` over the lines as
  ``seqlab tag`` calls it (tokenizing and label conversion included, no output written);
* ``decoding``: in this process, ``predict()`` on the sentences encoded beforehand (tokenized and turned
  into id tensors outside the timing), at batch 100: the in-process decoding figure of
  ``benchmarks/tagger_speed.py``, on this input.

``ratio`` is decoding's sentences/s over the whole process's, by wall time and by CPU time (the steadier
one on a shared machine).

``--pool-rounds N`` adds ``tag_many_pool``: ``tag_many(lines)`` with its defaults (32 batches of 100 pooled,
confidences) against the same call with ``pool=1`` (each batch decoded as it fills, the default before), N
alternating rounds in this process: CPU seconds of each and the ratio pool=1 / default, min / median / max.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from features.tokenize import split_sentences
from seqlab.core.paths import data_root

ROOT = Path(__file__).resolve().parents[1]


def wikipedia_sentences(count: int, out: Path) -> int:
    """Write the first Wikipedia lines holding ``count`` sentences (or more, by the last line's) to ``out``."""
    root = data_root()
    folder = root / "unlabeled" / "wikipedia_en_2014" if root else None
    if folder is None or not folder.is_dir():
        sys.exit(f"tag_speed: no Wikipedia text under {root}; set SEQLAB_DATA")
    sentences = 0
    with gzip.open(sorted(folder.glob("enwiki2014_part_*.txt.gz"))[0], "rt", encoding="utf-8") as handle, \
            open(out, "w", encoding="utf-8") as sink:
        for line in handle:
            if line.strip() and sentences < count:
                sink.write(line.strip() + "\n")
                sentences += len(split_sentences(line.strip()))
    return sentences


def whole_process(model: str, path: Path, threads: int) -> dict[str, float]:
    command = [sys.executable, "-m", "seqlab", "tag", model, str(path), "--format", "conll", "--threads",
               str(threads)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    with open(path.with_suffix(".tagged"), "w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"tag_speed: {' '.join(command)} failed (exit {code}):\n{process.stderr.read().decode()[-2000:]}")
    return {"seconds": round(wall, 2), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def pool_rounds(tagger: Any, lines: list[str], rounds: int) -> dict[str, Any]:
    """CPU seconds of ``tag_many(lines)`` at its defaults and at ``pool=1``, alternating; the ratio per round."""
    cpu: dict[str, list[float]] = {"default": [], "pool_1": []}
    options = {"default": {}, "pool_1": {"pool": 1}}
    for number in range(rounds):
        for side in (("default", "pool_1") if number % 2 == 0 else ("pool_1", "default")):
            start = time.process_time()
            for _ in tagger.tag_many(lines, **options[side]):
                pass
            cpu[side].append(round(time.process_time() - start, 2))
    ratios = [b / a for a, b in zip(cpu["default"], cpu["pool_1"])]
    return {"cpu_seconds": cpu, "ratio_pool_1_over_default": {
        "min": round(min(ratios), 3), "median": round(statistics.median(ratios), 3), "max": round(max(ratios), 3)}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="en-ner-conll03", help="a run directory, .seqlab file or installed name")
    p.add_argument("--sentences", type=int, default=100_000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--pool-rounds", type=int, default=0, help="rounds of tag_many's default against pool=1")
    p.add_argument("--skip-whole-process", action="store_true", help="only the in-process timings")
    args = p.parse_args()
    import torch

    import seqlab
    from seqlab.data.batching import encode
    from seqlab.tagging.features import encode_options
    from seqlab.tagging.predict import predict

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "wikipedia.txt"
        count = wikipedia_sentences(args.sentences, path)
        whole = None if args.skip_whole_process else whole_process(args.model, path, args.threads)
        lines = path.read_text(encoding="utf-8").splitlines()
    tagger = seqlab.load(args.model, device="cpu")
    start, cpu = time.perf_counter(), time.process_time()
    from seqlab.tagging.config import POOL_BATCHES

    for _ in tagger.tag_many(lines, confidences=False, pool=POOL_BATCHES):  # as seqlab tag FILE calls it
        pass
    many = {"seconds": round(time.perf_counter() - start, 2), "cpu_seconds": round(time.process_time() - cpu, 2)}
    sentences = [[t.text for t in s] for line in lines for s in split_sentences(line)]
    data = encode(sentences, tagger.vocabs, **encode_options(tagger.features))
    start, cpu = time.perf_counter(), time.process_time()
    predict(tagger.model, data, tagger.vocabs["tags"], batch_size=100)
    decoding = {"seconds": round(time.perf_counter() - start, 2), "cpu_seconds": round(time.process_time() - cpu, 2)}
    for timing in (whole, many, decoding):
        if timing is not None:
            timing["sentences_per_second"] = round(count / timing["seconds"])
            timing["sentences_per_cpu_second"] = round(count / timing["cpu_seconds"])
    result = {"model": args.model, "threads": args.threads, "sentences": count, "tokens": int(data.lengths.sum()),
              "load_average": os.getloadavg()[0], "whole_process": whole, "tag_many": many, "decoding": decoding}
    if whole is not None:
        result["ratio_wall"] = round(decoding["sentences_per_second"] / whole["sentences_per_second"], 2)
        result["ratio_cpu"] = round(decoding["sentences_per_cpu_second"] / whole["sentences_per_cpu_second"], 2)
    if args.pool_rounds:
        result["tag_many_pool"] = pool_rounds(tagger, lines, args.pool_rounds)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
