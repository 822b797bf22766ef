"""Brown clustering, seqlab (features.brown) against Liang's wcluster, side by side; prints one JSON object.

    python -m benchmarks.brown_vs_wcluster --wcluster /tmp/brown-cluster/wcluster \
        --words 1000000 --clusters 100 --rounds 3

Both sides cluster the same text: the first lines of the Reuters-21578 text
(``unlabeled/reuters21578_text.txt``) that hold ``--words`` whitespace tokens, written to
``--work``. Both split on whitespace, keep every word (min count 1) and run on one thread.
Rounds alternate: seqlab, wcluster, seqlab, wcluster, ... Each side is a whole process:

* seqlab: ``python -m benchmarks.brown_speed --corpus PREFIX --clusters C --output PATHS``
  (Python start-up, reading, counting, clustering, writing), whose JSON also gives the
  in-process ``seconds``/``cpu_seconds`` of :func:`features.brown.induce_brown`;
* wcluster: ``wcluster --text PREFIX --c C --threads 1 --rand 1 --output_dir DIR``.
  wcluster caches the indexed text beside its input (``PREFIX.int``, ``PREFIX.strdb``) and
  reads that cache on later runs; the cache is deleted before every wcluster round, so
  that, like seqlab, each round reads and indexes the text (``--keep-wcluster-cache``: no).

Wall and CPU seconds (the children's user + system time) per round, medians, and seqlab
over wcluster ratios (below 1: seqlab faster). AMI: both clusterings (the last round's
``paths`` files) scored by :func:`features.brown.ami` on the same within-line bigram
counts (wcluster reads the text as one stream, so its own objective also has the bigrams
that span line ends); seqlab's self-reported AMI is given too.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.sidebyside import (
    CHECKOUT, command_line, load_average, machine, one_thread_env, portable_command, portable_path, run_process,
    summarise,
)

CORPUS = "unlabeled/reuters21578_text.txt"  # under $SEQLAB_DATA (default ../shared/data)


def write_prefix(corpus: Path, words: int, out: Path) -> tuple[int, int]:
    """The first lines of ``corpus`` holding ``words`` tokens (the line that crosses the count included)."""
    n = lines = 0
    with open(corpus, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            if n >= words:
                break
            tokens = line.split()
            if not tokens:
                continue
            dst.write(" ".join(tokens) + "\n")
            n += len(tokens)
            lines += 1
    return n, lines


def score(prefix: Path, paths_file: Path) -> dict:
    """AMI (bits) of a paths file's clustering on the within-line bigram counts of ``prefix``."""
    from features.brown import ami, count_bigrams

    with open(prefix, encoding="utf-8") as f:
        data = count_bigrams((line.split() for line in f), min_count=1)
    bits = {}
    with open(paths_file, encoding="utf-8") as f:
        for line in f:
            bitstring, word, _ = line.rstrip("\n").split("\t")
            bits[word] = bitstring
    missing = [w for w in data.words if w not in bits]
    labels = {b: i for i, b in enumerate(sorted(set(bits.values())))}
    clusters = [labels.get(bits.get(w), -1) for w in data.words]
    return {"clusters": len(labels), "words_clustered": len(bits), "words_missing": len(missing),
            "ami_bits": round(ami(data.matrix(), clusters), 6)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--wcluster", default="/tmp/brown-cluster/wcluster", help="Liang's wcluster binary (make)")
    p.add_argument("--corpus", type=Path, default=None, help=f"default: $SEQLAB_DATA/{CORPUS}")
    p.add_argument("--words", type=int, default=1_000_000)
    p.add_argument("--clusters", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--work", type=Path, default=Path("/tmp/brown_vs_wcluster"))
    p.add_argument("--keep-wcluster-cache", action="store_true",
                   help="let wcluster reuse its PREFIX.int/.strdb cache after the first round")
    args = p.parse_args()
    if args.corpus is None:
        from seqlab.core.paths import resolve_data_path

        args.corpus = resolve_data_path(CORPUS, key="--corpus")
    args.work.mkdir(parents=True, exist_ok=True)
    prefix = args.work / f"reuters_{args.words}.txt"
    tokens, lines = write_prefix(args.corpus, args.words, prefix)
    env = one_thread_env(1)
    env["PYTHONPATH"] = str(CHECKOUT)  # the seqlab of this checkout
    load_before = load_average()
    ours_paths = args.work / f"seqlab_c{args.clusters}.paths"
    theirs_dir = args.work / f"wcluster_c{args.clusters}"
    seqlab_cmd = [sys.executable, "-m", "benchmarks.brown_speed", "--corpus", str(prefix),
                  "--clusters", str(args.clusters), "--output", str(ours_paths)]
    wcluster_cmd = [args.wcluster, "--text", str(prefix), "--c", str(args.clusters), "--threads", "1",
                    "--rand", "1", "--output_dir", str(theirs_dir)]
    caches = [Path(f"{prefix}.int"), Path(f"{prefix}.strdb")]
    wall, cpu, inner = [], [], []
    for _ in range(args.rounds):
        if not args.keep_wcluster_cache:
            for cache in caches:
                cache.unlink(missing_ok=True)
        time.sleep(1.0)
        ours = run_process(seqlab_cmd, env=env, stdout_path=str(args.work / "seqlab.json"))
        inner.append(json.loads((args.work / "seqlab.json").read_text()))
        time.sleep(1.0)
        theirs = run_process(wcluster_cmd, env=env, stdout_path=str(args.work / "wcluster.stdout"))
        wall.append({"seqlab": ours["wall_seconds"], "wcluster": theirs["wall_seconds"]})
        cpu.append({"seqlab": ours["cpu_seconds"], "wcluster": theirs["cpu_seconds"]})
    load_after = load_average()
    print(json.dumps({
        "benchmark": "brown_clustering_vs_wcluster", "scope": "whole process on both sides",
        "corpus": f"first {lines} lines of {portable_path(args.corpus.resolve())}", "tokens": tokens, "clusters": args.clusters,
        "threads": 1, "rounds_count": args.rounds, "wcluster_cache_kept": args.keep_wcluster_cache, "order": "per round: seqlab, wcluster",
        "commands": {"seqlab": portable_command(seqlab_cmd[1:]), "wcluster": portable_command(wcluster_cmd)},
        "wall_seconds": summarise(wall, "seqlab", "wcluster"),
        "cpu_seconds": summarise(cpu, "seqlab", "wcluster"),
        "seqlab_in_process": [{k: r[k] for k in ("seconds", "cpu_seconds", "ami_bits", "types", "peak_rss_mb")}
                              for r in inner],
        "ami_same_counts": {"seqlab": score(prefix, ours_paths), "wcluster": score(prefix, theirs_dir / "paths")},
        "load_average_before": load_before, "load_average_after": load_after,
        "machine": machine(),
        "versions": {"wcluster": "percyliang/brown-cluster fe90f87 (make, g++ -O3)"},
        "command": command_line(),
    }, indent=2))


if __name__ == "__main__":
    main()
