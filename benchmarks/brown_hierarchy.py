"""Brown clustering's two stages timed apart on a Reuters prefix: the merge window, then the hierarchy; prints JSON.

    OMP_NUM_THREADS=1 python -m benchmarks.brown_hierarchy --clusters 3000 --words 100000

Reads the first lines of ``$SEQLAB_DATA/unlabeled/reuters21578_text.txt`` holding ``--words`` whitespace
tokens, counts bigrams (min count 1), runs :class:`features.brown_merge.Clusterer` through the window
stage (every word in, merged down to ``--clusters``) and then merges the clusters down to one, as
:func:`features.brown_induce.induce` does. CPU and wall seconds of each stage, the AMI
after the window, and a digest of the hierarchy's merges (the born ids of each merged pair, in order), so
that two versions of ``features/`` (each on ``PYTHONPATH``, e.g. a ``git worktree`` of an older commit) can
be compared for speed and for the clustering they give.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import time
from pathlib import Path

CORPUS = "unlabeled/reuters21578_text.txt"


def main() -> None:
    from features.brown import count_bigrams
    from features.brown_merge import Clusterer

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clusters", type=int, default=1000)
    p.add_argument("--words", type=int, default=150_000)
    args = p.parse_args()
    path = Path(os.environ.get("SEQLAB_DATA", "../shared/data")) / CORPUS
    if not path.is_file():
        sys.exit(f"brown_hierarchy: {path}: no such file (set SEQLAB_DATA)")
    lines, tokens = [], 0
    with path.open(encoding="utf-8") as f:
        for line in f:
            words = line.split()
            lines.append(words)
            tokens += len(words)
            if tokens >= args.words:
                break
    data = count_bigrams(lines)
    c = args.clusters
    if len(data.words) <= c:
        sys.exit(f"brown_hierarchy: {len(data.words)} word types, not more than --clusters {c}")
    state = Clusterer(data, c)
    free = c
    start, wall = time.process_time(), time.perf_counter()
    for w in range(c, len(data.words)):
        if not state.fold_new_word(w, free):
            state.add_word(w, free)
            _, free = state.merge(*state.best_pair())
    window, window_wall = time.process_time() - start, time.perf_counter() - wall
    ami = state.ami_bits()
    state.track_members = False
    merges = []
    start, wall = time.process_time(), time.perf_counter()
    for _ in range(c - 1):
        a, b = state.best_pair()
        merges.append((int(state.born[a]), int(state.born[b])))
        state.merge(a, b)
    hierarchy, hierarchy_wall = time.process_time() - start, time.perf_counter() - wall
    print(json.dumps({"benchmark": "brown_stages", "corpus": f"first {len(lines)} lines of $SEQLAB_DATA/{CORPUS}",
                      "tokens": tokens, "types": len(data.words), "clusters": c,
                      "features": str(Path(sys.modules["features"].__file__).parent),
                      "window_cpu_seconds": round(window, 2), "window_wall_seconds": round(window_wall, 2),
                      "ami_bits_after_window": ami,
                      "hierarchy_cpu_seconds": round(hierarchy, 2), "hierarchy_wall_seconds": round(hierarchy_wall, 2),
                      "hierarchy_merges_sha1": hashlib.sha1(repr(merges).encode()).hexdigest(),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                      "load_before": os.getloadavg()[0]}, indent=2))


if __name__ == "__main__":
    main()
