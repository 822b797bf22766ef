"""An intrinsic check of LS vectors: how well a linear probe tells a mention token's type from its LS vector alone.

For each LS artefact, every token inside a gold mention of ``--train`` (CoNLL-2003 train by default)
becomes one example: its LS vector (Ghaddar & Langlais 2018 §3) → its type (PER, LOC, ORG, MISC).
A multinomial logistic regression fitted on them is scored on the mention tokens of ``--dev``.
This is cheap (seconds) next to training a tagger, so it is how variants of the LS build (e.g. with
and without distant supervision) are compared here. Prints JSON: accuracy, macro-F1, and the share
of dev mention tokens that are in the LS vocabulary (the rest get vectors from fastText sub-words).

    python -m benchmarks.ls_probe --ls runs/ls/fewnerd_ls100 runs/ls/fewnerd_ds100k_ls100
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from features.ls import LSVectors
from features.ls_corpus import read_typed


def mention_tokens(path: Path) -> tuple[list[str], list[str]]:
    """Tokens inside gold mentions and their types."""
    words, labels = [], []
    for sentence in read_typed(path):
        for m in sentence.mentions:
            words.extend(sentence.tokens[m.start:m.end])
            labels.extend([m.label] * (m.end - m.start))
    return words, labels


def probe(ls: Path, train: tuple[list[str], list[str]], dev: tuple[list[str], list[str]], seed: int) -> dict:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score

    start = time.perf_counter()
    vectors = LSVectors.load(ls)
    x_train, x_dev = vectors(train[0]), vectors(dev[0])  # shapes: (n_train, types), (n_dev, types)
    model = LogisticRegression(max_iter=2000, C=1.0, random_state=seed).fit(x_train, train[1])
    predicted = model.predict(x_dev)
    return {
        "ls": str(ls), "types": vectors.dim, "vocabulary": len(vectors),
        "dev_accuracy": round(100 * accuracy_score(dev[1], predicted), 2),
        "dev_macro_f1": round(100 * f1_score(dev[1], predicted, average="macro"), 2),
        "dev_in_vocabulary": round(100 * float(np.mean([w in vectors for w in dev[0]])), 2),
        "seconds": round(time.perf_counter() - start, 1),
    }


def main() -> None:
    data = Path(os.environ.get("SEQLAB_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ls", nargs="+", required=True, type=Path, help="LS artefact folders")
    p.add_argument("--train", type=Path, default=data / "conll2003" / "train.txt")
    p.add_argument("--dev", type=Path, default=data / "conll2003" / "dev.txt")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    train, dev = mention_tokens(args.train), mention_tokens(args.dev)
    labels, counts = np.unique(dev[1], return_counts=True)
    majority = round(100 * counts.max() / counts.sum(), 2)
    results = [probe(ls, train, dev, args.seed) for ls in args.ls]
    print(json.dumps({"train_tokens": len(train[0]), "dev_tokens": len(dev[0]), "majority_accuracy": majority,
                      "results": results}, indent=2))


if __name__ == "__main__":
    main()
