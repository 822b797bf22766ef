"""Whole-process relation extraction beside tagging alone, and how its cost grows with the entities of a
sentence, printed as JSON.

    python -m benchmarks.extraction_speed RUN [--lines 5000] [--rounds 3] [--threads 1]

``RUN`` is an extraction run (``seqlab train configs/conll04_pipeline.yaml``); its tagger half is ``RUN/ner``.
Each round runs, alternating, ``python -m seqlab tag RUN FILE --format jsonl`` (spans and every ordered span
pair of a sentence classified) and the same on ``RUN/ner`` (spans only) over the first ``--lines`` non-blank
lines of the 2014 English Wikipedia dump, each a fresh process (OMP_NUM_THREADS=T) whose output goes to a file:
wall time (start-up included) and CPU time (user + system). From the extraction output: sentences, spans and
the pairs classified (n·(n-1) for a sentence of n spans), and the pairs' share of the sentences by span count,
so the cost per line can be read against the pairs it had to classify.

In process (no start-up), ``--growth`` times :meth:`ExtractionModel.tag_tokens` on sentences of growing span
counts built from the output, to show the cost per sentence against n·(n-1).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.sidebyside import command_line, machine, one_thread_env, run_process, summarise
from benchmarks.tag_memory import data_root, wikipedia_lines


def pair_counts(output: Path) -> dict[str, object]:
    """Sentences, spans, pairs classified and relations found in a ``seqlab tag --format jsonl`` output of an
    extraction model, and how many sentences had each span count."""
    sentences = spans = pairs = relations = 0
    by_spans: Counter[int] = Counter()
    with open(output, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            n = len(record["spans"])
            sentences, spans, pairs = sentences + 1, spans + n, pairs + n * (n - 1)
            relations += len(record.get("relations", ()))
            by_spans[min(n, 10)] += 1
    return {"sentences": sentences, "spans": spans, "pairs": pairs, "relations": relations,
            "sentences_by_spans": {("10+" if k == 10 else str(k)): v for k, v in sorted(by_spans.items())}}


def growth(run: Path, output: Path, threads: int) -> list[dict[str, float]]:
    """In-process seconds per sentence of :meth:`tag_tokens`, by span count, on the output's sentences (at most
    200 of each count), with the pairs each needs."""
    import time

    import torch

    import seqlab

    torch.set_num_threads(threads)
    model = seqlab.load(run, "cpu")
    groups: dict[int, list[list[str]]] = {}
    with open(output, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            groups.setdefault(min(len(record["spans"]), 8), []).append(record["tokens"])
    rows = []
    for n, sentences in sorted(groups.items()):
        sentences = sentences[:200]
        start = time.process_time()
        model.tag_tokens(sentences)
        seconds = (time.process_time() - start) / len(sentences)
        rows.append({"spans": n, "pairs": n * (n - 1), "sentences": len(sentences),
                     "cpu_ms_per_sentence": round(1000 * seconds, 3)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--growth", action="store_true", help="also time tag_tokens in process by span count")
    args = parser.parse_args()
    if not (args.run / "ner").is_dir():
        sys.exit(f"extraction_speed: {args.run} is not an extraction run (no ner/ folder)")
    env = one_thread_env(args.threads)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        text = wikipedia_lines(data_root(), args.lines, folder / "wikipedia.txt")
        sides = {"extraction": args.run, "tagging": args.run / "ner"}
        rounds: list[dict[str, dict[str, float]]] = []
        for k in range(args.rounds):
            order = list(sides) if k % 2 == 0 else list(reversed(sides))
            rounds.append({side: run_process([sys.executable, "-m", "seqlab", "tag", str(sides[side]), str(text),
                                              "--format", "jsonl", "--threads", str(args.threads)],
                                             env=env, stdout_path=str(folder / f"{side}.jsonl"))
                           for side in order})
        counts = pair_counts(folder / "extraction.jsonl")
        result = {
            "benchmark": "extraction_speed", "command": command_line(), "machine": machine(),
            "lines": args.lines, "threads": args.threads, "counts": counts,
            "cpu_seconds": summarise([{s: r[s]["cpu_seconds"] for s in sides} for r in rounds],
                                     "extraction", "tagging"),
            "wall_seconds": summarise([{s: r[s]["wall_seconds"] for s in sides} for r in rounds],
                                      "extraction", "tagging"),
        }
        extra = (statistics.median(r["extraction"]["cpu_seconds"] for r in rounds)
                 - statistics.median(r["tagging"]["cpu_seconds"] for r in rounds))
        result["extra_cpu_ms_per_pair"] = round(1000 * extra / max(1, counts["pairs"]), 4)  # type: ignore[arg-type]
        if args.growth:
            result["growth"] = growth(args.run, folder / "extraction.jsonl", args.threads)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
