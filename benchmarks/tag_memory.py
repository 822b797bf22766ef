"""Peak memory and throughput of ``seqlab tag`` on inputs that used to exhaust memory, printed as JSON.

    python -m benchmarks.tag_memory --run runs/conll03_glove [--threads 1] [--bytes 1000000] [--lines 50000]

Two inputs are built in a scratch folder from the shared data (``$SEQLAB_DATA`` or ../shared/data):

* ``single_line``: ``--bytes`` of Reuters text joined into ONE line (thousands of sentences on it);
* ``no_sentence_end``: the same line without ``.``, ``!`` and ``?`` (one "sentence" of ~180k tokens);
* ``wikipedia``: the first ``--lines`` non-blank lines of the 2014 English Wikipedia dump.

Each is tagged by a fresh ``python -m seqlab.cli tag RUN FILE --format conll`` process whose output goes
to a file; its peak RSS is that process's own maximum resident set size (``os.wait4``), and tokens/s is
the number of tokens written over the process's wall time (start-up included). The target is a peak
RSS under 1 GB on both.
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
    """The first ``count`` non-blank lines of the Wikipedia dump."""
    source = sorted((root / "unlabeled" / "wikipedia_en_2014").glob("enwiki2014_part_*.txt.gz"))[0]
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        lines = itertools.islice((line for line in handle if line.strip()), count)
        out.write_text("".join(lines), encoding="utf-8")
    return out


def measure(run: Path, path: Path, threads: int) -> dict[str, float]:
    """Tag ``path`` in a fresh process; its peak RSS, wall time and tokens per second."""
    output = path.with_suffix(".tagged")
    command = [sys.executable, "-m", "seqlab.cli", "tag", str(run), str(path), "--format", "conll"]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    start = time.perf_counter()
    with open(output, "w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, cwd=ROOT, env=env)
        _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"tag_memory: {' '.join(command)} failed:\n{process.stderr.read().decode()[-2000:]}")
    with open(output, encoding="utf-8") as handle:
        tokens = sum(1 for line in handle if line.strip())
    return {"bytes": path.stat().st_size, "lines": sum(1 for _ in open(path, encoding="utf-8")),
            "tokens": tokens, "seconds": round(seconds, 2), "tokens_per_second": round(tokens / seconds),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}  # ru_maxrss is in KiB on Linux


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", required=True, type=Path, help="a tagging run directory")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the tagging process")
    p.add_argument("--bytes", type=int, default=1_000_000, help="size of the single-line input")
    p.add_argument("--lines", type=int, default=50_000, help="Wikipedia lines")
    args = p.parse_args()
    root = data_root()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        line = single_line(root, args.bytes, folder / "single_line.txt")
        inputs = {"single_line": line, "no_sentence_end": without_sentence_ends(line, folder / "no_end.txt"),
                  "wikipedia": wikipedia_lines(root, args.lines, folder / "wikipedia.txt")}
        results = {name: measure(args.run, path, args.threads) for name, path in inputs.items()}
    print(json.dumps({"run": str(args.run), "threads": args.threads, "target_peak_rss_mb": 1024, **results},
                     indent=2))


if __name__ == "__main__":
    main()
