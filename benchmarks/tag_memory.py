"""Peak memory, wall and CPU time of whole-process ``seqlab tag``, printed as JSON.

    python -m benchmarks.tag_memory [--model en-ner-conll03] [--format jsonl] [--threads 1] [--lines 20000]
                                    [--rounds 3] [--cases one_line wikipedia] [--against ENV=VALUE ...]
                                    [--compare-tree OLD_CHECKOUT] [--versus OTHER_MODEL]

Inputs, built in a scratch folder from the shared data (``$SEQLAB_DATA`` or ../shared/data):

* ``one_line``: the first line of the 2014 English Wikipedia dump (start-up, loading and one paragraph);
* ``wikipedia``: its first ``--lines`` non-blank lines;
* ``single_line``: ``--bytes`` of Reuters text joined into ONE line (thousands of sentences on it);
* ``no_sentence_end``: the same line without ``.``, ``!`` and ``?`` (one "sentence" of ~180k tokens).

Each is tagged by a fresh ``python -m seqlab tag MODEL FILE --format F --threads T`` process (OMP_NUM_THREADS=T)
whose output goes to a file: its peak RSS is the process's own maximum resident set size and its CPU time user +
system (``os.wait4``); wall time includes start-up; an untimed run first fills the model cache. ``floor`` is a process that only runs ``import torch``: the
part of the peak that no change to seqlab can remove. Each round runs every case once; with ``--against``, each
case also runs with those environment variables set (``ONEDNN_PRIMITIVE_CACHE_CAPACITY=1024``: oneDNN's default
cache, which ``seqlab tag`` turns off), in alternating order, and ``ratio`` gives the min / median / max over
rounds of its peak RSS and CPU time over the plain run's. ``--compare-tree`` makes the other side the same
command run from another checkout (``git worktree add /tmp/old HEAD~1``: the code before a change), alternating
likewise; ``--versus`` makes it the same command with another model (a distilled student against the installed
model), alternating likewise, with the share of tokens whose labels agree. On a shared machine CPU time is the
steadier figure.
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.sidebyside import portable_path

ROOT = Path(__file__).resolve().parents[1]
CASES = ("one_line", "wikipedia", "single_line", "no_sentence_end")


def data_root() -> Path:
    root = Path(os.environ.get("SEQLAB_DATA", ROOT.parent / "shared" / "data"))
    if not (root / "unlabeled").is_dir():
        sys.exit(f"tag_memory: no unlabeled data under {root}; set SEQLAB_DATA")
    return root


def single_line(root: Path, size: int, out: Path) -> Path:
    """``size`` bytes (about) of Reuters text as one line."""
    pieces, total = [], 0
    with open(root / "unlabeled" / "reuters21578_text.txt", encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line:
                pieces.append(line)
                total += len(line.encode("utf-8")) + 1
                if total >= size:
                    break
    out.write_text(" ".join(pieces) + "\n", encoding="utf-8")
    return out


def without_sentence_ends(line_file: Path, out: Path) -> Path:
    """``line_file`` with its sentence-final marks removed: one over-long "sentence"."""
    text = line_file.read_text(encoding="utf-8")
    out.write_text(text.translate(str.maketrans("", "", ".!?")), encoding="utf-8")
    return out


def wikipedia_lines(root: Path, count: int, out: Path) -> Path:
    """The first ``count`` non-blank lines of the Wikipedia dump's first part."""
    source = sorted((root / "unlabeled" / "wikipedia_en_2014").glob("enwiki2014_part_*.txt.gz"))[0]
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        lines = itertools.islice((line for line in handle if line.strip()), count)
        out.write_text("".join(lines), encoding="utf-8")
    return out


def build_inputs(cases: list[str], folder: Path, lines: int, size: int) -> dict[str, Path]:
    """The input file of each case asked for."""
    root, made = data_root(), {}
    for case in cases:
        if case == "one_line":
            made[case] = wikipedia_lines(root, 1, folder / "one_line.txt")
        elif case == "wikipedia":
            made[case] = wikipedia_lines(root, lines, folder / "wikipedia.txt")
        else:
            line = made.get("single_line") or single_line(root, size, folder / "single_line.txt")
            made[case] = line if case == "single_line" else without_sentence_ends(line, folder / "no_end.txt")
    return made


def run(command: list[str], output: Path, env: dict[str, str], cwd: Path = ROOT) -> dict[str, float]:
    """Run ``command`` in ``cwd`` (``python -m seqlab`` imports the seqlab found there) with standard output to
    ``output``: its wall and CPU seconds and peak RSS (MB)."""
    start = time.perf_counter()
    with open(output, "w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, cwd=cwd, env=env)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"tag_memory: {' '.join(command)} failed:\n{process.stderr.read().decode()[-2000:]}")
    process.stderr.close()
    return {"wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}  # ru_maxrss is in KiB on Linux


def count_tokens(output: Path, fmt: str) -> int:
    """Tokens in a ``seqlab tag`` output file (conll: one per non-blank line; jsonl: each object's tokens)."""
    with open(output, encoding="utf-8") as handle:
        if fmt == "jsonl":
            return sum(len(json.loads(line)["tokens"]) for line in handle if line.strip())
        return sum(1 for line in handle if line.strip())


def same_labels(one: Path, other: Path, fmt: str) -> bool:
    """Whether two ``seqlab tag`` outputs agree on every token and label (jsonl: every field but the spans'
    confidences, which move in their last digits with how sentences are batched)."""
    if fmt != "jsonl":
        return one.read_bytes() == other.read_bytes()

    def stripped(path: Path) -> list[dict]:
        with open(path, encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
        for row in rows:
            for span in row.get("spans", []):
                span.pop("confidence", None)
        return rows
    return stripped(one) == stripped(other)


def spread(values: list[float]) -> dict[str, float]:
    """min / median / max of ``values``."""
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3), "max": round(max(values), 3)}


def summary(rounds: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each measure's min / median / max over ``rounds``."""
    return {key: spread([r[key] for r in rounds]) for key in ("peak_rss_mb", "wall_s", "cpu_s")}


def tag_command(args: argparse.Namespace, path: Path, model: str) -> list[str]:
    """The timed ``seqlab tag`` command line of ``model`` for the input ``path``."""
    return [sys.executable, "-m", "seqlab", "tag", model, str(path), "--format", args.format, "--threads",
            str(args.threads)]


def label_agreement(one: Path, other: Path) -> float | None:
    """The share of tokens two jsonl outputs of the same text label alike (None where they differ in tokens)."""
    def labels(path: Path) -> list[str]:
        with open(path, encoding="utf-8") as handle:
            return [label for line in handle if line.strip() for label in json.loads(line)["labels"]]
    a, b = labels(one), labels(other)
    if len(a) != len(b):
        return None
    return round(sum(x == y for x, y in zip(a, b)) / max(1, len(a)), 5)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="en-ner-conll03", help="an installed model's name, a run directory or a "
                                                               ".seqlab file")
    p.add_argument("--format", default="jsonl", choices=("jsonl", "conll", "inline", "conllu"))
    p.add_argument("--threads", type=int, default=1, help="torch threads of the tagging process")
    p.add_argument("--lines", type=int, default=20_000, help="Wikipedia lines of the wikipedia case")
    p.add_argument("--bytes", type=int, default=1_000_000, help="size of the single-line inputs")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cases", nargs="+", choices=CASES, default=["one_line", "wikipedia"])
    p.add_argument("--against", nargs="+", metavar="ENV=VALUE", default=[],
                   help="also run each case with these environment variables, alternating with the plain run")
    p.add_argument("--compare-tree", type=Path, help="also run each case from this checkout, alternating")
    p.add_argument("--versus", metavar="MODEL", help="also run each case with this model, alternating")
    args = p.parse_args()
    if any("=" not in item for item in args.against):
        p.error("--against takes ENV=VALUE items")
    if args.compare_tree is not None and not (args.compare_tree / "seqlab" / "__init__.py").is_file():
        p.error(f"--compare-tree: no seqlab package in {args.compare_tree}")
    threads = str(args.threads)
    env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    env.pop("PYTHONPATH", None)  # each side imports the seqlab of its own folder
    other = {**env, **dict(item.split("=", 1) for item in args.against)}
    sides = {"plain": (env, ROOT, args.model)}
    if args.against or args.compare_tree is not None or args.versus:
        sides["against"] = (other, (args.compare_tree or ROOT).resolve(), args.versus or args.model)
    floor: list[dict[str, float]] = []
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        inputs = build_inputs(args.cases, folder, args.lines, args.bytes)
        measured = {case: {side: [] for side in sides} for case in args.cases}
        for side_env, cwd, model in sides.values():  # unpacks the model into each side's cache
            run(tag_command(args, inputs[args.cases[0]], model), folder / "warm.out", side_env, cwd)
        for number in range(args.rounds):
            floor.append(run([sys.executable, "-c", "import torch"], folder / "floor.out", env))
            for case, path in inputs.items():
                order = list(sides) if number % 2 == 0 else list(reversed(sides))
                for side in order:
                    side_env, cwd, model = sides[side]
                    measured[case][side].append(run(tag_command(args, path, model), folder / f"{case}.{side}.out",
                                                    side_env, cwd))
            print(f"tag_memory: round {number + 1} of {args.rounds} done", file=sys.stderr)
        for case, path in inputs.items():
            tokens = count_tokens(folder / f"{case}.plain.out", args.format)
            entry: dict = {"lines": sum(1 for _ in open(path, encoding="utf-8")), "tokens": tokens,
                           **summary(measured[case]["plain"]), "rounds": measured[case]["plain"]}
            entry["tokens_per_cpu_s"] = round(tokens / entry["cpu_s"]["median"])
            if "against" in sides:
                entry["same_labels"] = same_labels(folder / f"{case}.plain.out", folder / f"{case}.against.out",
                                                   args.format)
                if args.versus and args.format == "jsonl":
                    entry["token_label_agreement"] = label_agreement(folder / f"{case}.plain.out",
                                                                     folder / f"{case}.against.out")
                pairs = list(zip(measured[case]["plain"], measured[case]["against"]))
                entry["against"] = {**summary(measured[case]["against"]), "rounds": measured[case]["against"]}
                entry["ratio_against_over_plain"] = {
                    key: spread([b[key] / a[key] for a, b in pairs]) for key in ("peak_rss_mb", "cpu_s")}
            results[case] = entry
    print(json.dumps({"model": portable_path(args.model), "format": args.format, "threads": args.threads,
                      "against": args.against,
                      "compare_tree": portable_path(args.compare_tree) if args.compare_tree else "",
                      "versus": portable_path(args.versus) if args.versus else "",
                      "floor_import_torch": summary(floor), **results}, indent=2))


if __name__ == "__main__":
    main()
