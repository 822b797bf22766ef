"""Speed, memory and AMI of seqlab's Brown clustering (features.brown) on an unlabelled corpus.

Usage::

    nice -n 19 python -m benchmarks.brown_speed --clusters 100
    nice -n 19 python -m benchmarks.brown_speed --corpus ../shared/data/unlabeled/wikipedia_en_2014 \\
        --clusters 1000 --min-count 3 --output runs/brown/wiki-c1000.paths

The corpus (a file or a folder of ``.txt``/``.txt.gz`` files) is read one sentence per line
and split on whitespace, as Liang's ``wcluster`` reads it (``--tokenize``: CoNLL-style
tokenisation and sentence splitting instead); the default is the Reuters-21578 text, whose
2,772,526 tokens have 134,885 whitespace types. Prints one JSON object: ``seconds`` is the
wall-clock time of :func:`features.brown.induce_brown` (counting included), ``cpu_seconds``
its CPU time (the fairer figure on a shared machine), ``ami_bits`` the AMI of the class
bigram model at ``clusters`` clusters and ``peak_rss_mb`` the peak resident memory of the
whole process (``baseline_rss_mb``: the same before reading the corpus).
"""
from __future__ import annotations

import argparse
import itertools
import json
import logging
import resource
import sys
import time
from pathlib import Path

from features.brown import induce_brown
from features.corpus import corpus_files, read_corpus

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "unlabeled" / "reuters21578_text.txt"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


def benchmark(corpus: Path, clusters: int, min_count: int = 1, limit_lines: int | None = None,
              tokenize: bool = False, progress: bool = False, output: Path | None = None) -> dict:
    """Induce clusters from ``corpus`` and return the JSON-ready measurements."""
    files = corpus_files(corpus)
    baseline = _peak_rss_mb()
    sentences = read_corpus(files, tokenize=tokenize)
    if limit_lines is not None:
        sentences = itertools.islice(sentences, limit_lines)
    cpu = time.process_time()
    result = induce_brown(sentences, clusters, min_count=min_count, progress=progress)
    cpu = time.process_time() - cpu
    if output is not None:
        result.save(output)
    return {
        "corpus": str(corpus), "tokens": result.tokens, "types": result.types, "kept_types": len(result),
        "clusters": clusters, "min_count": min_count, "limit_lines": limit_lines, "tokenize": tokenize,
        "seconds": round(result.seconds or 0.0, 2), "cpu_seconds": round(cpu, 2),
        "ami_bits": round(result.ami or 0.0, 6), "peak_rss_mb": round(_peak_rss_mb(), 1),
        "baseline_rss_mb": round(baseline, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="text file or folder of .txt[.gz] files")
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--min-count", type=int, default=1)
    parser.add_argument("--limit-lines", type=int, default=None, help="read only the first N sentences")
    parser.add_argument("--tokenize", action="store_true", help="CoNLL-style tokenisation instead of str.split")
    parser.add_argument("--progress", action="store_true", help="progress bar on stderr")
    parser.add_argument("--output", type=Path, default=None, help="also write the clusters in Liang's paths format")
    args = parser.parse_args(argv)
    if args.clusters < 2:
        parser.error(f"--clusters must be at least 2, got {args.clusters}")
    if args.min_count < 1:
        parser.error(f"--min-count must be at least 1, got {args.min_count}")
    if args.limit_lines is not None and args.limit_lines < 1:
        parser.error(f"--limit-lines must be at least 1, got {args.limit_lines}")
    if not args.corpus.exists():
        parser.error(f"--corpus {args.corpus} does not exist")
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    result = benchmark(args.corpus, args.clusters, args.min_count, args.limit_lines, args.tokenize,
                       args.progress, args.output)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
