"""Decoding speed of the torch and onnxruntime backends of one tagger, side by side, printed as JSON.

    python -m benchmarks.onnx_speed [--model en-ner-conll03] [--file conll2003/test.txt] [--rounds 5]
        [--text unlabeled/wikipedia_en_2014/enwiki2014_part_AA.txt.gz --lines 20000] [--int8] [--export DIR]

The model (a run directory, a ``.seqlab`` file or an installed name; by default the English NER model
installed with seqlab) is exported with ``seqlab export --format onnx`` into a scratch folder or ``--export`` (and
with ``--quantize int8`` too, given ``--int8``), then loaded by each backend on one thread: torch
(``torch.set_num_threads(1)``) and onnxruntime (``intra_op_num_threads=1``).

* In process: the sentences of ``--file`` (a CoNLL file, read as the model's training files; relative to
  ``$SEQLAB_DATA``) are encoded once; in each round every side decodes all of them (emissions, Viterbi, label
  strings; no confidences, as ``seqlab tag --format conll``) at each ``--batch-sizes``, starting from an empty
  spelling cache (so the character BiLSTM runs once per word type of the file, on both sides); batch 1 times
  only the first ``--batch1-sentences``. The sides run one after the other in each round, the first side
  changing from round to round.
* Whole process: ``seqlab tag --threads 1 [--backend onnx] DIR TEXT`` on the first ``--lines`` lines of
  ``--text`` (raw text, plain or gzip; by default the sentences of ``--file``, one a line), start-up, model load,
  tokenization and writing included, alternating the same way; the outputs must be identical to torch's (int8's
  are compared and counted, not required to be).
Figures are CPU seconds (``time.process_time``; children's for whole processes) and wall seconds; a ratio is
a side's tokens per CPU-second over torch's (above 1: faster than torch), given per round and as min / median
/ max over rounds. Labels on ``--file`` must agree with torch's (the count of differing labels is printed),
and the F1 of each side on it is printed.
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

from benchmarks.sidebyside import (command_line, load_average, machine, one_thread_env, package_version,
                                   run_process)

ROOT = Path(__file__).resolve().parents[1]


def _order(sides: list[str], round_: int) -> list[str]:
    """The sides in round ``round_``'s order: each round starts with the next side."""
    shift = round_ % len(sides)
    return sides[shift:] + sides[:shift]


def summarise(rounds: list[dict[str, dict[str, float]]], tokens: int) -> dict[str, Any]:
    """Each side's median CPU and wall seconds and tokens per CPU-second, and every side's ratio to torch
    (tokens per CPU-second, and per wall second) per round and as min / median / max."""
    sides = list(rounds[0])
    out: dict[str, Any] = {}
    for side in sides:
        cpu = statistics.median(r[side]["cpu"] for r in rounds)
        wall = statistics.median(r[side]["wall"] for r in rounds)
        out[side] = {"cpu_seconds": round(cpu, 4), "seconds": round(wall, 4),
                     "tokens_per_cpu_second": round(tokens / cpu, 1), "tokens_per_second": round(tokens / wall, 1)}
    for side in sides[1:]:
        for figure in ("cpu", "wall"):
            per_round = [round(r["torch"][figure] / r[side][figure], 3) for r in rounds]
            out[f"ratio_{side}_over_torch_{figure}"] = {
                "min": min(per_round), "median": round(statistics.median(per_round), 3), "max": max(per_round),
                "per_round": per_round}
    return out


def _timed(run: Callable[[], object]) -> dict[str, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}


def in_process(taggers: dict, data, batch_sizes: list[int], rounds: int, batch1: int) -> dict[str, Any]:
    """Alternating timed decodes of ``data`` by each side, each from an empty spelling cache."""
    from seqlab.data.batching import Encoded
    from seqlab.tagging.predict import SpellingCache

    def subset(count: int) -> Encoded:
        keep = data.lengths[:count]
        return Encoded(data.words[:count], data.caps[:count], data.types[:count], keep, data.type_chars,
                       data.type_char_lengths, data.type_features, None, data.type_feature_ids, data.type_strings)

    out = {}
    for size in batch_sizes:
        part = subset(batch1) if size == 1 else data
        times = []
        for round_ in range(rounds):
            seconds = {}
            for side in _order(list(taggers), round_):
                predictor = taggers[side].predictor
                predictor.backend.spelling = SpellingCache()  # each round spells the file's word types anew
                seconds[side] = _timed(lambda: predictor(part, batch_size=size))
            times.append({side: seconds[side] for side in taggers})
        out[f"batch_{size}"] = {"sentences": len(part), "tokens": int(part.lengths.sum()),
                                **summarise(times, int(part.lengths.sum()))}
    return out


def first_lines(source: Path, count: int, out: Path) -> int:
    """Write the first ``count`` lines of ``source`` (plain or gzip) to ``out``; returns their whitespace tokens."""
    opener = gzip.open if source.suffix == ".gz" else open
    tokens = 0
    with opener(source, "rt", encoding="utf-8") as handle, open(out, "w", encoding="utf-8") as dst:
        for number, line in enumerate(handle):
            if number == count:
                break
            dst.write(line)
            tokens += len(line.split())
    return tokens


def whole_process(folders: dict[str, Path], text: Path, tokens: int, scratch: Path, rounds: int) -> dict[str, Any]:
    """``seqlab tag`` as a whole process with each side, alternating; outputs compared with torch's."""
    env = dict(one_thread_env(1), PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    times, outputs = [], {}
    for round_ in range(rounds):
        seconds = {}
        for side in _order(list(folders), round_):
            outputs[side] = scratch / f"tagged.{side}.txt"
            backend = "torch" if side == "torch" else "onnx"
            command = [sys.executable, "-m", "seqlab", "tag", "--threads", "1", "--backend", backend,
                       str(folders[side]), str(text)]
            figures = run_process(command, cwd=str(ROOT), env=env, stdout_path=str(outputs[side]))
            seconds[side] = {"cpu": figures["cpu_seconds"], "wall": figures["wall_seconds"]}
        times.append({side: seconds[side] for side in folders})
    reference = outputs["torch"].read_text(encoding="utf-8").splitlines()
    differing = {side: sum(a != b for a, b in zip(reference, outputs[side].read_text(encoding="utf-8").splitlines()))
                 for side in folders if side != "torch"}
    return {"lines": sum(1 for _ in open(text, encoding="utf-8")), "tokens": tokens, **summarise(times, tokens),
            "identical_output": outputs["onnx"].read_bytes() == outputs["torch"].read_bytes(),
            "differing_output_lines": differing,
            "command": "python -m seqlab tag --threads 1 --backend {torch,onnx} DIR TEXT"}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="en-ner-conll03", help="a run directory, .seqlab file or installed name")
    p.add_argument("--file", default="conll2003/test.txt", help="a CoNLL file (relative to SEQLAB_DATA)")
    p.add_argument("--export", help="the fp32 export folder to write and use (default: a scratch folder)")
    p.add_argument("--text", help="whole process: raw text, one document a line, plain or gzip (relative to "
                                  "SEQLAB_DATA; e.g. unlabeled/wikipedia_en_2014/enwiki2014_part_AA.txt.gz); "
                                  "default: the sentences of --file")
    p.add_argument("--lines", type=int, default=20000, help="whole process: the first LINES lines of --text")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[100, 1])
    p.add_argument("--batch1-sentences", type=int, default=500, help="batch 1 times the first N sentences")
    p.add_argument("--rounds", type=int, default=5, help="alternating rounds in process")
    p.add_argument("--process-rounds", type=int, default=3, help="alternating whole-process rounds (0: none)")
    p.add_argument("--int8", action="store_true", help="also an export with --quantize int8, as a third side")
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    import seqlab
    from seqlab.apps.onnx_export import export_onnx
    from seqlab.core.paths import resolve_data_path
    from seqlab.data.batching import encode
    from seqlab.data.dataset import file_layout, read_split
    from seqlab.tagging.features import encode_options

    with tempfile.TemporaryDirectory(prefix="onnx_speed_") as tmp:
        scratch = Path(tmp)
        exports, export_seconds = {}, {}
        for side, quantize in [("onnx", None)] + ([("onnx_int8", "int8")] if args.int8 else []):
            exports[side] = Path(args.export) if args.export and side == "onnx" else scratch / side
            start = time.perf_counter()
            export_onnx(args.model, exports[side], quantize=quantize)
            export_seconds[side] = round(time.perf_counter() - start, 2)
        folders = {"torch": exports["onnx"], **exports}  # torch loads the export folder's model file
        taggers = {side: seqlab.load(folders[side], "cpu") if side == "torch" else
                   seqlab.load(folders[side], backend="onnx") for side in folders}
        config, vocabs = taggers["torch"].config, taggers["torch"].vocabs
        path = resolve_data_path(args.file, key="--file")
        split = read_split(file_layout(config.data, path), "eval", path=path)
        data = encode(split.tokens, vocabs, **encode_options(taggers["torch"].features))
        labels = {side: [p.labels for p in t.predictor(data, batch_size=100)] for side, t in taggers.items()}
        differing = {side: sum(x != y for a, b in zip(labels["torch"], labels[side]) for x, y in zip(a, b))
                     for side in taggers if side != "torch"}  # labels of the test file unlike torch's
        f1 = {side: round(t.evaluate(path).f1, 2) for side, t in taggers.items()}
        load = load_average()
        decode = in_process(taggers, data, args.batch_sizes, args.rounds, args.batch1_sentences)
        process = None
        if args.process_rounds:
            text = scratch / "text.txt"
            if args.text:
                tokens = first_lines(resolve_data_path(args.text, key="--text"), args.lines, text)
            else:
                text.write_text("".join(" ".join(s) + "\n" for s in split.tokens), encoding="utf-8")
                tokens = int(data.lengths.sum())
            process = whole_process(folders, text, tokens, scratch, args.process_rounds)
    result = {
        "command": command_line(), "model": args.model, "file": args.file, "sentences": len(data),
        "tokens": int(data.lengths.sum()), "threads": 1, "export_seconds": export_seconds,
        "differing_labels": differing["onnx"], "differing_labels_by_side": differing, "f1": f1, "in_process": decode, "whole_process": process,
        "versions": {"torch": torch.__version__, "onnxruntime": package_version("onnxruntime"),
                     "onnx": package_version("onnx")},
        "machine": machine(), "load_average_before": load, "load_average_after": load_average(),
    }
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
