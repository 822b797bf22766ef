"""Decoding speed of the torch and onnxruntime backends of one tagger, side by side, printed as JSON.

    python -m benchmarks.onnx_speed [--model en-ner-conll03] [--file conll2003/test.txt] [--rounds 3]

The model (a run directory, a ``.seqlab`` file or an installed name; by default the English NER model
installed with seqlab) is exported with ``seqlab export --format onnx`` into a scratch folder (or ``--export``),
then loaded twice: torch (``torch.set_num_threads(1)``) and onnxruntime (``intra_op_num_threads=1``).

* In process: the sentences of ``--file`` (a CoNLL file, read as the model's training files; relative to
  ``$SEQLAB_DATA``) are encoded once, then each backend decodes all of them (emissions, Viterbi, label strings;
  no confidences, as ``seqlab tag --format conll``) at each ``--batch-sizes``, the backends alternating in the
  same process for ``--rounds`` rounds; sentences/s and tokens/s come from the median round.
* Whole process: ``seqlab tag --threads 1 [--backend onnx] DIR TEXT --format conll`` on the file's sentences
  as raw text, one per line (start-up, model load, tokenization and writing included), alternating; the two
  outputs must be identical.
Labels must agree between the backends (a count of differing labels is reported). Ratios are ONNX over torch
throughput (above 1: onnxruntime is faster), per round and of the medians (benchmarks/sidebyside.py).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.sidebyside import load_average, machine, one_thread_env, package_version, run_process

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("torch", "onnx")


def _throughput(seconds: float, sentences: int, tokens: int) -> dict[str, float]:
    return {"seconds": round(seconds, 4), "sentences_per_second": round(sentences / seconds, 1),
            "tokens_per_second": round(tokens / seconds, 1)}


def _side_by_side(rounds: list[dict[str, float]], sentences: int, tokens: int) -> dict[str, object]:
    """Median throughput of each backend, and ONNX over torch throughput per round and of the medians."""
    median = {b: statistics.median(r[b] for r in rounds) for b in BACKENDS}
    return {**{b: _throughput(median[b], sentences, tokens) for b in BACKENDS},
            "ratio_onnx_over_torch": round(median["torch"] / median["onnx"], 3),
            "ratio_onnx_over_torch_per_round": [round(r["torch"] / r["onnx"], 3) for r in rounds],
            "rounds_seconds": [{b: round(r[b], 4) for b in BACKENDS} for r in rounds]}


def in_process(taggers: dict, data, batch_sizes: list[int], rounds: int) -> tuple[dict[str, object], int]:
    """Alternating timed decodes of ``data`` by each backend; returns the figures and the differing labels."""
    sentences, tokens = len(data), int(data.lengths.sum())
    labels = {b: [p.labels for p in taggers[b].predictor(data, batch_size=100)] for b in BACKENDS}  # warm-up too
    differing = sum(x != y for a, b in zip(labels["torch"], labels["onnx"]) for x, y in zip(a, b))
    out = {}
    for size in batch_sizes:
        times = []
        for _ in range(rounds):
            seconds = {}
            for backend in BACKENDS:
                start = time.perf_counter()
                taggers[backend].predictor(data, batch_size=size)
                seconds[backend] = time.perf_counter() - start
            times.append(seconds)
        out[f"batch_{size}"] = _side_by_side(times, sentences, tokens)
    return out, differing


def whole_process(folder: Path, text: Path, scratch: Path, rounds: int) -> dict[str, object]:
    """``seqlab tag`` as a whole process with each backend, alternating; outputs compared."""
    env = dict(one_thread_env(1), PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    times, outputs = [], {}
    for _ in range(rounds):
        seconds = {}
        for backend in BACKENDS:
            outputs[backend] = scratch / f"tagged.{backend}.txt"
            command = [sys.executable, "-m", "seqlab", "tag", "--threads", "1", "--backend", backend, str(folder),
                       str(text), "--format", "conll"]
            seconds[backend] = run_process(command, cwd=str(ROOT), env=env, stdout_path=str(outputs[backend]))[
                "wall_seconds"]
        times.append(seconds)
    lines = text.read_text(encoding="utf-8").splitlines()
    tokens = sum(len(line.split()) for line in lines)
    same = outputs["torch"].read_bytes() == outputs["onnx"].read_bytes()
    return {**_side_by_side(times, len(lines), tokens), "identical_output": same,
            "command": "python -m seqlab tag --threads 1 --backend {torch,onnx} DIR TEXT --format conll"}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="en-ner-conll03", help="a run directory, .seqlab file or installed name")
    p.add_argument("--export", help="the export folder to write and use (default: a scratch folder)")
    p.add_argument("--file", default="conll2003/test.txt", help="a CoNLL file (relative to SEQLAB_DATA)")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 100])
    p.add_argument("--rounds", type=int, default=3, help="alternating repeats in process")
    p.add_argument("--process-rounds", type=int, default=3, help="alternating whole-process runs (0: none)")
    p.add_argument("--limit", type=int, default=0, help="time only the first N sentences (0: all)")
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    import seqlab
    from seqlab.core.paths import resolve_data_path
    from seqlab.data.batching import encode
    from seqlab.data.dataset import file_layout, read_split
    from seqlab.tagging.features import encode_options
    from seqlab.apps.onnx_export import export_onnx

    with tempfile.TemporaryDirectory(prefix="onnx_speed_") as tmp:
        scratch = Path(tmp)
        folder = Path(args.export) if args.export else scratch / "exported"
        start = time.perf_counter()
        export_onnx(args.model, folder)
        export_seconds = time.perf_counter() - start
        taggers = {"torch": seqlab.load(folder, "cpu"), "onnx": seqlab.load(folder, backend="onnx")}
        config = taggers["torch"].config
        path = resolve_data_path(args.file, key="--file")
        split = read_split(file_layout(config.data, path), "eval", path=path)
        tokens = split.tokens[: args.limit] if args.limit else split.tokens
        data = encode(tokens, taggers["torch"].vocabs, **encode_options(taggers["torch"].features))
        load = load_average()
        decode, differing = in_process(taggers, data, args.batch_sizes, args.rounds)
        text = scratch / "sentences.txt"
        text.write_text("".join(" ".join(s) + "\n" for s in tokens), encoding="utf-8")
        process = whole_process(folder, text, scratch, args.process_rounds) if args.process_rounds else None
    result = {
        "model": args.model, "file": args.file, "sentences": len(data), "tokens": int(data.lengths.sum()),
        "threads": 1, "export_seconds": round(export_seconds, 2), "differing_labels": differing,
        "in_process": decode, "whole_process": process,
        "versions": {"torch": torch.__version__, "onnxruntime": package_version("onnxruntime"),
                     "onnx": package_version("onnx")},
        "machine": machine(), "load_average_before": load, "load_average_after": load_average(),
    }
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
