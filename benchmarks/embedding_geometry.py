"""How much of a word-vector table its frequent words share: one JSON object per file, and optionally the table
with that shared direction projected out of every row.

    python -m benchmarks.embedding_geometry runs/features/cw25_wiki.txt runs/features/hlbl25_wiki.txt
    python -m benchmarks.embedding_geometry runs/features/cw25_wiki.txt --project-out runs/features/cw25_wiki_nocommon.txt

For the ``--top`` most frequent words (the first rows after the padding and unknown entries of an induced table,
which ``features`` writes in frequency order): the mean cosine of ``--pairs`` random pairs, the share of the
variance on the first principal component, and the norm of their mean vector against their mean norm. A table
whose frequent rows are mostly one common vector (C&W after a few epochs: mean cosine near 1) passes little to
a linear model once it is scaled to a fixed standard deviation. ``--project-out`` writes every row minus its
component along that mean's direction (word2vec text), so the rows' remainder can be tried as features alone.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from features.base import FeatureFileError
from features.vocab import PADDING, UNKNOWN, Embeddings


def frequent_rows(table: Embeddings, top: int) -> np.ndarray:
    """The first ``top`` rows that are words, not the padding or unknown entries (float64)."""
    keep = [i for i, w in enumerate(table.words[:top + 2]) if w not in (PADDING, UNKNOWN)][:top]
    if len(keep) < 2:
        raise ValueError(f"the table has {len(keep)} word rows; at least 2 are needed")
    return table.matrix[keep].astype(np.float64)


def shared_direction(rows: np.ndarray) -> np.ndarray:
    """The unit vector along the mean of ``rows``."""
    mean = rows.mean(axis=0)
    norm = np.linalg.norm(mean)
    if norm == 0:
        raise ValueError("the frequent rows' mean is the zero vector: no shared direction to project out")
    return mean / norm


def geometry(rows: np.ndarray, *, pairs: int, seed: int) -> dict[str, float]:
    unit = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(rows), pairs), rng.integers(0, len(rows), pairs)
    distinct = i != j
    variances = np.linalg.svd(rows - rows.mean(axis=0), compute_uv=False) ** 2
    return {"mean_cosine_random_pairs": float((unit[i[distinct]] * unit[j[distinct]]).sum(axis=1).mean()),
            "first_component_variance_share": float(variances[0] / variances.sum()) if variances.sum() else 0.0,
            "mean_vector_norm_over_mean_row_norm": float(np.linalg.norm(rows.mean(axis=0))
                                                         / np.linalg.norm(rows, axis=1).mean())}


def project_out(table: Embeddings, direction: np.ndarray) -> Embeddings:
    matrix = table.matrix.astype(np.float64)
    return Embeddings(list(table.words), (matrix - np.outer(matrix @ direction, direction)).astype(np.float32))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("vectors", nargs="+", type=Path, help="word2vec or Turian text files, rows in frequency order")
    p.add_argument("--top", type=int, default=20_000, help="how many frequent words (default 20,000)")
    p.add_argument("--pairs", type=int, default=5_000, help="random pairs for the mean cosine (default 5,000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--project-out", type=Path, metavar="OUT",
                   help="write the (single) table with its shared direction projected out, and report it too")
    args = p.parse_args(argv)
    if args.project_out and len(args.vectors) != 1:
        p.error("--project-out takes one vector file")
    if args.top < 2 or args.pairs < 1:
        p.error("--top must be at least 2 and --pairs at least 1")
    for path in args.vectors:
        try:
            table = Embeddings.load(path)
            rows = frequent_rows(table, args.top)
            report: dict[str, object] = {"file": str(path), "words": len(table), "dim": table.dim, "top": len(rows),
                                         **geometry(rows, pairs=args.pairs, seed=args.seed)}
            if args.project_out:
                projected = project_out(table, shared_direction(rows))
                projected.save(args.project_out)
                report["projected"] = {"file": str(args.project_out),
                                       **geometry(frequent_rows(projected, args.top), pairs=args.pairs, seed=args.seed)}
        except (OSError, ValueError, FeatureFileError) as err:
            message = str(err)  # the loader's errors name the file (and line) already; others get it here
            print(f"embedding_geometry: {message if str(path) in message else f'{path}: {message}'}", file=sys.stderr)
            return 2
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
