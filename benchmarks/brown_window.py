"""CPU time per word of Brown clustering's merge window at C clusters, on a real corpus; prints JSON.

    python -m benchmarks.brown_window --clusters 10000 --words 300 --counts /tmp/wiki_counts.npz
    python -m benchmarks.brown_window --corpus ../shared/data/unlabeled/reuters21578_text.txt --clusters 3200

The window (:func:`features.brown_induce.induce`) adds the words after the first C one at a time, by falling count;
nearly every one folds into a cluster (:meth:`features.brown_merge.Clusterer.fold_new_word`), the others enter their
own slot and the cheapest pair merges. This times ``--words`` of them, from the word ranked C + ``--skip`` on (the
words just past C have the most neighbour clusters, so they cost the most), after building the C singleton
clusters' loss table (``start_cpu_s``). The bigram counts of the corpus (read as ``seqlab features brown`` reads it:
tokenised, ``--min-count``) can be kept in ``--counts`` (an ``.npz``) and read from there next time. Run it from two
checkouts to compare them side by side: the fold's per-word passes are what changes between versions.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

from features.brown import BigramCounts, count_bigrams
from features.brown_merge import Clusterer
from features.corpus import read_corpus

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "unlabeled" / "wikipedia_en_2014"


def load_counts(corpus: Path, min_count: int, cache: Path | None) -> BigramCounts:
    """The corpus's bigram counts, from ``cache`` when it exists (written there otherwise)."""
    if cache is not None and cache.exists():
        try:
            with np.load(cache, allow_pickle=False) as f:
                return BigramCounts(words=f["words"].tolist(), counts=f["counts"], fwd_ptr=f["fwd_ptr"],
                                    fwd_idx=f["fwd_idx"], fwd_cnt=f["fwd_cnt"], tokens=int(f["tokens"]),
                                    types=int(f["types"]))
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
            raise SystemExit(f"brown_window.py: --counts {cache}: not the counts this script writes ({e}); "
                             "remove it to count again") from None
    try:
        data = count_bigrams(read_corpus(corpus), min_count=min_count)
    except (OSError, ValueError) as e:  # a missing or empty corpus, no word frequent enough, undecodable bytes
        raise SystemExit(f"brown_window.py: --corpus {corpus}: {e}") from None
    if cache is not None:
        tmp = cache.with_name(cache.name + ".tmp.npz")
        np.savez(tmp, words=np.array(data.words), counts=data.counts, fwd_ptr=data.fwd_ptr, fwd_idx=data.fwd_idx,
                 fwd_cnt=data.fwd_cnt, tokens=np.array(data.tokens), types=np.array(data.types))
        tmp.replace(cache)
    return data


def benchmark(data: BigramCounts, clusters: int, words: int, skip: int) -> dict:
    cpu = time.process_time()
    state = Clusterer(data, clusters)
    start_cpu = time.process_time() - cpu
    free, folds, merges = clusters, 0, 0
    first = clusters + skip
    last = min(first + words, len(data.words))
    if last <= first:
        raise SystemExit(f"the corpus has {len(data.words):,} words: none past rank {first:,} to time")
    cpu = 0.0
    for w in range(clusters, last):
        if w == first:
            cpu = time.process_time()
        if state.fold_new_word(w, free):
            folds += w >= first
        else:
            state.add_word(w, free)
            _, free = state.merge(*state.best_pair())
            merges += w >= first
    cpu = time.process_time() - cpu
    neighbours = np.diff(data.fwd_ptr)[first:last]
    return {"clusters": clusters, "vocabulary": len(data.words), "first_rank": first, "words": last - first,
            "folds": folds, "merges": merges, "start_cpu_s": round(start_cpu, 2),
            "cpu_ms_per_word": round(1000 * cpu / (last - first), 3),
            "mean_right_neighbour_types": round(float(neighbours.mean()), 1),
            "loss_table_checksum": float(np.where(np.isfinite(state.L), state.L, 0.0).sum()),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="file or folder (default: Wikipedia)")
    parser.add_argument("--min-count", type=int, default=2)
    parser.add_argument("--counts", type=Path, help="an .npz of the counts: read if it exists, else written")
    parser.add_argument("--clusters", type=int, default=10_000)
    parser.add_argument("--words", type=int, default=300, help="words timed")
    parser.add_argument("--skip", type=int, default=0, help="words folded, untimed, before those timed")
    args = parser.parse_args(argv)
    for name in ("min_count", "clusters", "words"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.skip < 0:
        parser.error("--skip must be 0 or more")
    if not args.corpus.exists() and not (args.counts and args.counts.exists()):
        parser.error(f"--corpus: {args.corpus} does not exist")
    data = load_counts(args.corpus, args.min_count, args.counts)
    print(json.dumps(benchmark(data, args.clusters, args.words, args.skip)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
