"""Decoding beside the core's fp32 peak: achieved GFLOP/s of ``predict()`` and where its time goes, as JSON.

    python -m benchmarks.decode_peak [--model en-ner-conll03] [--rounds 5]
        [--compare-tree OLD_CHECKOUT --lines 20000]

One thread throughout, CPU seconds (``time.process_time``), fastest of several repeats for the peak:

* ``peak``: one-thread fp32 matrix products, N x N by N x N, through MKL (``torch.mm``; on AMD Zen MKL takes its
  AVX2 path) and through oneDNN (``torch.ops.mkldnn._linear_pointwise`` with a pre-packed weight, the kernel family
  of the CPU LSTM); ``peak_gflops`` is the best of them.
* ``predict``: ``Predictor(model, ...)(data, batch_size=100)`` on the CoNLL-2003 test set, a fresh predictor per
  round (so each round computes every word type's spelling vector once, as ``predict()`` does), with the useful
  FLOPs of the model (word BiLSTM per token, character BiLSTM per character of each distinct word, output layer
  per token; padding is not counted) over its CPU time, and a breakdown: char BiLSTM, word BiLSTM, output layer,
  CRF Viterbi, label conversion (spans and label strings) and the rest (batching, embedding look-ups).
  ``--confidences`` adds the CRF's marginals, as ``seqlab tag --format jsonl`` asks for.
* ``whole_process`` (with ``--compare-tree``): ``python -m seqlab.cli tag MODEL FILE --format jsonl --threads 1``
  on the first ``--lines`` lines of ``wikipedia_en_2014/enwiki2014_part_AA.txt.gz``, this checkout against another
  one (``PYTHONPATH``), alternating rounds; tokens per CPU-second of each and whether the outputs are byte-identical.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import torch

from benchmarks.sidebyside import command_line, load_average, machine, one_thread_env, run_process, summarise
from seqlab.core.paths import data_root

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("char_bilstm", "word_bilstm", "output_layer", "viterbi", "marginals", "labels", "other")


def best_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """Fastest CPU time of ``repeats`` calls of ``fn`` after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def peak(sizes: tuple[int, ...] = (1024, 2048), repeats: int = 5) -> dict[str, Any]:
    """One-thread fp32 GFLOP/s of N x N matrix products through MKL and through oneDNN."""
    paths: dict[str, float] = {}
    for n in sizes:
        a, w = torch.randn(n, n), torch.randn(n, n)
        flops = 2 * n**3
        paths[f"mkl_mm_{n}"] = flops / best_seconds(lambda: torch.mm(a, w), repeats) / 1e9
        if torch.backends.mkldnn.is_available():
            packed = torch.ops.mkldnn._reorder_linear_weight(w, n)  # oneDNN's blocked layout of the weight
            run = lambda: torch.ops.mkldnn._linear_pointwise(a, packed, None, "none", [], "")  # noqa: E731
            paths[f"onednn_linear_{n}"] = flops / best_seconds(run, repeats) / 1e9
    best = max(paths, key=paths.get)
    return {"gflops": {k: round(v, 1) for k, v in paths.items()}, "best_path": best,
            "peak_gflops": round(paths[best], 1)}


def model_flops(model: torch.nn.Module) -> dict[str, float]:
    """Useful FLOPs of a BiLSTM-CRF tagger: per token (word BiLSTM, output layer) and per character of a type."""
    def bilstm(lstm: Any) -> float:  # multiply-adds of both directions of every layer, per time step
        return sum(2 * 2 * 4 * f.hidden_size * (f.input_size + f.hidden_size) for f in lstm.forward_layers)

    chars = model.embedder.chars
    linear = model.projection
    return {"word_per_token": bilstm(model.encoder.lstm), "output_per_token": 2 * linear.in_features * linear.out_features,
            "char_per_character": bilstm(chars.lstm) if chars is not None else 0.0}


class Timers:
    """CPU seconds spent inside wrapped callables, by part name."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PARTS, 0.0)

    def wrap(self, part: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[part] += time.process_time() - start
        return timed


def predict_round(tagger: Any, data: Any, batch_size: int, confidences: bool) -> dict[str, float]:
    """One timed decoding of ``data`` by a fresh predictor, with the seconds of each part."""
    from seqlab.tagging.predict import Predictor

    model, timers = tagger.model, Timers()
    predictor = Predictor(model, tagger.vocabs["tags"], tagger.labelling)
    patched = [(model.embedder.chars, "encode_types", "char_bilstm"), (model.encoder, "forward", "word_bilstm"),
               (model.projection, "forward", "output_layer"), (model.decoder, "decode", "viterbi"),
               (model.decoder, "marginals", "marginals"), (predictor, "_decode", "labels")]
    for owner, name, part in patched:
        setattr(owner, name, timers.wrap(part, getattr(owner, name)))
    try:
        start = time.process_time()
        predictor(data, batch_size=batch_size, confidences=confidences)
        total = time.process_time() - start
    finally:
        for owner, name, _ in patched:
            delattr(owner, name)  # the instance attribute goes; the class's method shows again
    seconds = dict(timers.seconds)
    seconds["labels"] -= seconds["viterbi"] + seconds["marginals"]  # _decode calls both
    seconds["other"] = total - sum(seconds.values())
    return {"total": total, **seconds}


def predict_figures(model_name: str, rounds: int, batch_size: int, confidences: bool) -> dict[str, Any]:
    import seqlab
    from seqlab.data.batching import encode
    from seqlab.data.dataset import read_split
    from seqlab.tagging.features import encode_options

    tagger = seqlab.load(model_name, "cpu")
    path = data_root() / "conll2003" / "test.txt"
    split = read_split(tagger.config.data, "test", path=path)
    data = encode(split.tokens, tagger.vocabs, **encode_options(tagger.features))
    tokens = int(data.lengths.sum())
    flops = model_flops(tagger.model)
    characters = int(data.type_char_lengths[1:].sum())  # every distinct word's characters, once
    useful = tokens * (flops["word_per_token"] + flops["output_per_token"]) + characters * flops["char_per_character"]
    with torch.inference_mode():
        predict_round(tagger, data, batch_size, confidences)  # warm-up
        timed = [predict_round(tagger, data, batch_size, confidences) for _ in range(rounds)]
    totals = sorted(r["total"] for r in timed)
    median = statistics.median(totals)
    breakdown = {part: round(statistics.median(r[part] for r in timed), 4) for part in PARTS}
    return {
        "file": "$SEQLAB_DATA/conll2003/test.txt", "sentences": len(data), "tokens": tokens,
        "types": len(data.type_strings) - 1, "batch_size": batch_size, "confidences": confidences,
        "mflop_per_token": {"word_bilstm": round(flops["word_per_token"] / 1e6, 4),
                            "char_bilstm": round(characters * flops["char_per_character"] / tokens / 1e6, 4),
                            "output_layer": round(flops["output_per_token"] / 1e6, 4),
                            "total": round(useful / tokens / 1e6, 4)},
        "cpu_seconds": {"min": round(totals[0], 4), "median": round(median, 4), "max": round(totals[-1], 4)},
        "tokens_per_cpu_second": {"min": round(tokens / totals[-1]), "median": round(tokens / median),
                                  "max": round(tokens / totals[0])},
        "gflops": {"min": round(useful / totals[-1] / 1e9, 1), "median": round(useful / median / 1e9, 1),
                   "max": round(useful / totals[0] / 1e9, 1)},
        "breakdown_seconds": breakdown,
        "breakdown_share": {part: round(breakdown[part] / median, 3) for part in PARTS},
        "part_gflops": {"char_bilstm": round(characters * flops["char_per_character"] / breakdown["char_bilstm"] / 1e9, 1)
                        if breakdown["char_bilstm"] else None,
                        "word_bilstm": round(tokens * flops["word_per_token"] / breakdown["word_bilstm"] / 1e9, 1)},
    }


def wikipedia_lines(count: int, out: Path) -> int:
    """Write the first ``count`` lines of the Wikipedia part AA to ``out``; returns the lines written."""
    source = data_root() / "unlabeled" / "wikipedia_en_2014" / "enwiki2014_part_AA.txt.gz"
    written = 0
    with gzip.open(source, "rt", encoding="utf-8") as f, out.open("w", encoding="utf-8") as g:
        for line in f:
            if written == count:
                break
            g.write(line)
            written += 1
    return written


def whole_process(old_tree: Path, model: str, lines: int, rounds: int) -> dict[str, Any]:
    """``seqlab tag`` of this checkout against ``old_tree``, alternating, with the outputs compared byte for byte."""
    env = one_thread_env(1)
    sides = {"new": str(ROOT), "old": str(old_tree.resolve())}
    with tempfile.TemporaryDirectory() as scratch:
        text = Path(scratch) / "lines.txt"
        wikipedia_lines(lines, text)
        results: list[dict[str, float]] = []
        outputs = {side: Path(scratch) / f"{side}.jsonl" for side in sides}
        for i in range(rounds):
            row: dict[str, float] = {}
            for side in (("new", "old") if i % 2 == 0 else ("old", "new")):
                cmd = [sys.executable, "-m", "seqlab.cli", "tag", model, str(text), "--format", "jsonl", "--threads", "1"]
                row[side] = run_process(cmd, cwd=scratch, env={**env, "PYTHONPATH": sides[side]},
                                        stdout_path=str(outputs[side]))["cpu_seconds"]
            results.append(row)
        tokens = sum(len(json.loads(line)["tokens"]) for line in outputs["new"].open(encoding="utf-8"))  # a sentence a line
        same = outputs["new"].read_bytes() == outputs["old"].read_bytes()
        differences = compare_outputs(outputs["new"], outputs["old"])
    summary = summarise(results, "old", "new")  # CPU seconds: old over new is the speed-up
    speedups = sorted(summary["ratio_old_over_new_per_round"])
    return {"lines": lines, "tokens": tokens, "cpu_seconds": summary["rounds"],
            "tokens_per_cpu_second": {side: round(tokens / summary["median"][side]) for side in sides},
            "speedup_cpu": {"min": speedups[0], "median": round(statistics.median(speedups), 3), "max": speedups[-1]},
            "outputs_identical": same, "differences": differences}


def compare_outputs(new: Path, old: Path) -> dict[str, Any]:
    """How two ``--format jsonl`` outputs differ: sentences, whether any labels or spans (text, label, offsets)
    differ, and how many span confidences differ and by how much (they are written to 4 decimals)."""
    lines = other = confidences = 0
    largest = 0.0
    with new.open(encoding="utf-8") as f, old.open(encoding="utf-8") as g:
        for a, b in zip(f, g):
            lines += 1
            if a == b:
                continue
            x, y = json.loads(a), json.loads(b)
            stripped = [[{k: v for k, v in span.items() if k != "confidence"} for span in z["spans"]] for z in (x, y)]
            if {k: v for k, v in x.items() if k != "spans"} != {k: v for k, v in y.items() if k != "spans"} or \
                    stripped[0] != stripped[1]:
                other += 1
                continue
            for p, q in zip(x["spans"], y["spans"]):
                if p["confidence"] != q["confidence"]:
                    confidences += 1
                    largest = max(largest, abs(p["confidence"] - q["confidence"]))
    return {"sentences": lines, "sentences_with_other_differences": other, "span_confidences_differing": confidences,
            "largest_confidence_difference": round(largest, 6)}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="en-ner-conll03", help="an installed model's name, a .seqlab file or a run")
    p.add_argument("--rounds", type=int, default=5, help="timed predict() rounds (and whole-process rounds per side)")
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--confidences", action="store_true", help="also compute the CRF marginals (span confidences)")
    p.add_argument("--compare-tree", type=Path, help="another checkout to run `seqlab tag` from, side by side")
    p.add_argument("--lines", type=int, default=20000, help="Wikipedia lines for the whole-process comparison")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    result: dict[str, Any] = {"command": command_line(), "machine": machine(), "torch": torch.__version__,
                              "load_average_before": load_average(), "peak": peak()}
    result["predict"] = predict_figures(args.model, args.rounds, args.batch_size, args.confidences)
    result["predict"]["share_of_peak"] = round(result["predict"]["gflops"]["median"] / result["peak"]["peak_gflops"], 3)
    result["peak_after"] = peak()  # the core's speed drifts with the other jobs on a shared machine
    if args.compare_tree is not None:
        result["whole_process"] = whole_process(args.compare_tree, args.model, args.lines, args.rounds)
    result["load_average_after"] = load_average()
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
