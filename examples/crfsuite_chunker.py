"""CoNLL-2000 chunking with a CRFsuite CRF and word representations (Turian, Ratinov & Bengio 2010, Table 2).

The experiment of Turian et al.'s Table 2 (chunking): a first-order linear-chain CRF (label
bigram transitions, CRFsuite's ``crf1d``) trained on CoNLL-2000 train (8,936 sentences) and
scored on test (2,012) with conlleval's chunk F1. Turian et al. report 93.79 for the baseline.

Features of token ``i`` (Turian et al. 2010, Table 1, after Sha & Pereira 2003), named as
CRFsuite sees them, with the window offset in brackets::

    words   w[-2] w[-1] w[0] w[+1] w[+2]   w[-1]|w[0]   w[0]|w[+1]
    POS     p[-2] p[-1] p[0] p[+1] p[+2]   p[-2]|p[-1] ... p[+1]|p[+2]
            p[-2]|p[-1]|p[0]   p[-1]|p[0]|p[+1]   p[0]|p[+1]|p[+2]
    Brown   brown4[k] brown6[k] brown10[k] brown20[k] for k in -2..+2    (--brown)
    emb     emb[j][k]: dimension j of the embedding of w[k], k in -2..+2 (--embeddings)

Discrete features are binary attributes ``name=value``, e.g. ``w[-1]|w[0]=the pound``
(n-gram values joined by a space, which no CoNLL token holds), ``p[0]=NN``,
``brown4[+1]=0110``; an embedding dimension is one real-valued attribute, ``emb[3][-2]``,
read and scaled to standard deviation 0.1 by :mod:`features.embeddings` (Turian et al.
section 7.2). A second ``--brown`` or ``--embeddings`` file gets ``#2`` after its feature
names (``brown4#2[0]``, ``emb[3]#2[0]``), and so on. Positions outside the sentence hold
the empty word and tag (:data:`examples.baselines.PAD`), as in Turian's ``to_crfsuite.py``, so ``w[-1]=``
marks the first token; they get no Brown feature and the embedding of ``*UNKNOWN*``
(zeros if the file has none), as do words missing from the vectors. Lookups are exact
(case-sensitive), as the representations were induced.

Training follows Turian's final baseline run (README of his
``turian/crfchunking-with-wordrepresentations``): SGD (CRFsuite ``l2sgd``) with an L2
prior of sigma 3.2, and ``feature.possible_states`` and ``feature.possible_transitions``
on (weights for every attribute/label and label/label pair, not only those seen in
train); his README lists test F1 93.63 for L-BFGS at sigma 2 without them (``--algorithm lbfgs --c2
0.125 --seen-features-only``, the defaults of CRFsuite and sklearn-crfsuite), 93.73 for
L-BFGS at sigma 3.2 with them (``--algorithm lbfgs``) and 93.79 for SGD. CRFsuite 0.12,
which python-crfsuite wraps, takes ``c2`` where older versions took sigma; both penalise
``||w||^2 / (2 sigma^2) = c2 ||w||^2``, so the default ``c2`` is ``1 / (2 * 3.2**2) =
0.048828125`` (:data:`TURIAN_C2`). Turian chose sigma on 1,000
sentences held out from train, then trained on all of train; CoNLL-2000 has no dev set.
By default that choice is reused, not retuned. ``--tune-c2 C2 [C2 ...]`` redoes the
protocol: a seeded shuffle of train (seed :data:`DEV_SEED`) holds out :data:`DEV_SENTENCES`
sentences, a CRF is trained on the rest for each ``c2`` and scored on them, and the best
``c2`` is used to train on all of train. The test set is never used for a choice.

Usage (paths relative to ``SEQLAB_DATA``, default ``../shared/data``, when not absolute)::

    python -m examples.crfsuite_chunker --train conll2000/train.txt --test conll2000/test.txt \\
        [--brown PATHS] [--embeddings VECTORS] [--algorithm {l2sgd,lbfgs}] [--c1 C1] [--c2 C2] \\
        [--max-iterations N] [--tune-c2 C2 ...] --model OUT.crfsuite --predictions OUT.txt

It prints one JSON object: ``test_f1`` and the test report (conlleval's counts and scores,
from :func:`seqlab.data.metrics.score`); ``train_seconds`` (CRFsuite's feature generation and
optimisation, after the Python feature extraction), ``tag_seconds`` and ``total_seconds``;
feature counts (distinct attributes in train, CRFsuite features, labels). The model,
the predictions (``word POS gold predicted``, conlleval's input), the resolved settings
with the results (``OUT.crfsuite.json``) and CRFsuite's training log (``OUT.crfsuite.log``)
are written atomically. Needs python-crfsuite: ``pip install python-crfsuite`` (the
``examples`` extra).
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from features.brown import BrownClusters
from features.embeddings import EmbeddingFeatures
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.data.conll import read_conll
from seqlab.data.metrics import report_to_dict, score

if not __package__:  # run as a file, where the examples package cannot be imported
    sys.exit("crfsuite_chunker: run it from the repository root as a module: python -m examples.crfsuite_chunker")
from examples.baselines import (PAD, WINDOW, RepresentationSettings, Sentence, WindowRepresentations,  # noqa: E402
                                add_output_arguments, add_representation_arguments, import_pycrfsuite,
                                load_representations, offset, representation_settings, run_main, tag, train_crf,
                                write_predictions, write_results)

logger = logging.getLogger("crfsuite_chunker")

COLUMNS = ("word", "pos", "chunk")
#: Table 1 templates: (column, offsets) conjoined into one attribute each.
TEMPLATES: tuple[tuple[str, tuple[int, ...]], ...] = (
    *(("w", (k,)) for k in WINDOW),
    ("w", (-1, 0)), ("w", (0, 1)),
    *(("p", (k,)) for k in WINDOW),
    *(("p", (k, k + 1)) for k in range(-2, 2)),
    *(("p", (k, k + 1, k + 2)) for k in range(-2, 1)),
)
#: Turian's L2 prior, sigma 3.2, chosen on held-out train; CRFsuite 0.12's c2 = 1 / (2 sigma^2).
TURIAN_SIGMA = 3.2
TURIAN_C2 = 0.048828125  # = 1 / (2 * 3.2**2), exact in binary
ALGORITHMS = ("l2sgd", "lbfgs")
#: Turian's run generated weights for unseen attribute/label and label/label pairs too.
FEATURE_PARAMS = {"feature.possible_states": True, "feature.possible_transitions": True}
DEV_SENTENCES = 1000  # held out of train for --tune-c2, as Turian did
DEV_SEED = 0


def _template_name(column: str, offsets: Sequence[int]) -> str:
    return "|".join(f"{column}[{offset(k)}]" for k in offsets)


class ChunkFeatures:
    """Per-token CRFsuite attributes of Turian et al. (2010, Table 1), with word representations.

    ``brown`` and ``embeddings`` add the features of the words in the window
    ``w[-2..+2]`` (see the module docstring for names and padding). Call on a
    sentence's words and POS tags to get one ``{attribute: value}`` dict per token.
    """

    def __init__(self, brown: Sequence[BrownClusters] = (), embeddings: Sequence[EmbeddingFeatures] = ()) -> None:
        self.representations = WindowRepresentations(brown, embeddings)
        self._templates = [(col, offsets, _template_name(col, offsets) + "=") for col, offsets in TEMPLATES]

    def __call__(self, words: Sequence[str], pos: Sequence[str]) -> list[dict[str, float]]:
        if len(words) != len(pos):
            raise ValueError(f"words and pos must match, but got {len(words)} words and {len(pos)} tags")
        pad = (PAD, PAD)
        columns = {"w": (*pad, *words, *pad), "p": (*pad, *pos, *pad)}  # index i + 2 is token i
        looked_up = self.representations.lookup(columns["w"])
        out = []
        for i in range(2, len(words) + 2):
            feats = {prefix + " ".join(columns[col][i + k] for k in offsets): 1.0
                     for col, offsets, prefix in self._templates}
            self.representations.add(feats, i, looked_up)
            out.append(feats)
        return out


@dataclass(frozen=True)
class ChunkerConfig(RepresentationSettings):
    """Everything that determines a run; written with the results next to the model."""

    train: str
    test: str
    model: str
    predictions: str
    algorithm: str = "l2sgd"
    c1: float | None = None
    c2: float = TURIAN_C2
    max_iterations: int | None = None
    tune_c2: tuple[float, ...] = ()
    possible_features: bool = True  # FEATURE_PARAMS on; False: only attribute/label pairs seen in train

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.algorithm not in ALGORITHMS:
            raise SeqlabError(f"algorithm must be one of {', '.join(ALGORITHMS)}, but got {self.algorithm!r}")
        if self.c1 is not None and self.algorithm != "lbfgs":
            raise SeqlabError(f"c1 (L1) needs algorithm 'lbfgs', but got {self.algorithm!r} (L2 only)")
        for name, value in (("c1", self.c1), ("c2", self.c2), *(("tune_c2", v) for v in self.tune_c2)):
            if value is not None and not value >= 0:
                raise SeqlabError(f"{name} must be a number >= 0, but got {value!r}")
        if self.max_iterations is not None and self.max_iterations < 1:
            raise SeqlabError(f"max_iterations must be >= 1, but got {self.max_iterations!r}")

    def crfsuite_params(self, c2: float | None = None) -> dict[str, Any]:
        possible = FEATURE_PARAMS if self.possible_features else {key: False for key in FEATURE_PARAMS}
        params: dict[str, Any] = {**possible, "c2": self.c2 if c2 is None else c2}
        if self.c1 is not None:
            params["c1"] = self.c1
        if self.max_iterations is not None:
            params["max_iterations"] = self.max_iterations
        return params


def read_sentences(path: str | os.PathLike[str]) -> list[Sentence]:
    """The (words, POS, chunks) of each sentence of a CoNLL-2000 file (``word POS chunk``)."""
    sentences = [(s["word"], s["pos"], s["chunk"]) for s in read_conll(path, COLUMNS)]
    if not sentences:
        raise SeqlabError(f"{path}: no sentences (expected CoNLL-2000 lines 'word POS chunk')")
    return sentences


def hold_out(sentences: Sequence[Sentence], size: int = DEV_SENTENCES,
             seed: int = DEV_SEED) -> tuple[list[Sentence], list[Sentence]]:
    """(rest, held out): ``size`` sentences drawn by a seeded shuffle, the rest in file order."""
    if not 0 < size < len(sentences):
        raise SeqlabError(f"cannot hold out {size} of {len(sentences)} training sentences for tuning c2")
    order = list(range(len(sentences)))
    random.Random(seed).shuffle(order)
    held = set(order[:size])
    return ([s for i, s in enumerate(sentences) if i not in held], [sentences[i] for i in sorted(held)])


def tune_c2(cfg: ChunkerConfig, sentences: Sequence[Sentence], featurize: ChunkFeatures) -> dict[str, Any]:
    """Choose c2 from ``cfg.tune_c2`` by chunk F1 on sentences held out from train."""
    rest, dev = hold_out(sentences, DEV_SENTENCES, DEV_SEED)
    dev_f1: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="crfsuite_chunker.") as folder:
        for c2 in cfg.tune_c2:
            model = Path(folder) / f"c2={c2}.crfsuite"
            train_crf(rest, featurize, cfg.algorithm, cfg.crfsuite_params(c2), model)
            dev_f1[repr(c2)] = score([s[2] for s in dev], tag(model, dev, featurize)).f1
            logger.info("c2 %g: dev F1 %.2f", c2, dev_f1[repr(c2)])
    best = max(cfg.tune_c2, key=lambda c2: dev_f1[repr(c2)])
    return {"dev_sentences": len(dev), "train_sentences": len(rest), "seed": DEV_SEED, "dev_f1": dev_f1,
            "chosen_c2": best}


def load_features(cfg: ChunkerConfig) -> ChunkFeatures:
    """The feature extractor with the representations ``cfg`` names loaded (paths relative to SEQLAB_DATA)."""
    return ChunkFeatures(*load_representations(cfg))


def run(cfg: ChunkerConfig) -> dict[str, Any]:
    """Train on ``cfg.train``, tag and score ``cfg.test``; write the model and predictions; return the results."""
    start = time.perf_counter()
    train_path, test_path = resolve_data_path(cfg.train, key="train"), resolve_data_path(cfg.test, key="test")
    import_pycrfsuite()  # fail before reading anything
    train, test = read_sentences(train_path), read_sentences(test_path)
    featurize = load_features(cfg)
    tuning = tune_c2(cfg, train, featurize) if cfg.tune_c2 else None
    c2 = tuning["chosen_c2"] if tuning else cfg.c2
    params = cfg.crfsuite_params(c2)
    logger.info("training %s on %d sentences with %s", cfg.algorithm, len(train), params)
    stats = train_crf(train, featurize, cfg.algorithm, params, cfg.model)
    tag_start = time.perf_counter()
    predicted = tag(cfg.model, test, featurize)
    tag_seconds = time.perf_counter() - tag_start
    write_predictions(cfg.predictions, test, predicted)
    report = score([s[2] for s in test], predicted)
    tokens = sum(len(s[0]) for s in train)
    results = {
        "test_f1": report.f1,
        "test": report_to_dict(report),
        "train_seconds": stats.seconds,
        "tag_seconds": tag_seconds,
        "total_seconds": time.perf_counter() - start,
        "features": {"attributes": stats.attributes, "crfsuite_features": stats.features,
                     "labels": stats.labels, "train_tokens": tokens},
        "crfsuite": {"algorithm": cfg.algorithm, **params, "iterations": stats.iterations},
        "tuning": tuning,
        "sentences": {"train": len(train), "test": len(test)},
        "config": dataclasses.asdict(cfg),
    }
    write_results(cfg.model, results, stats.log)
    return results


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--train", required=True, help="CoNLL-2000 training file (relative to SEQLAB_DATA)")
    p.add_argument("--test", required=True, help="CoNLL-2000 test file")
    add_representation_arguments(p)
    p.add_argument("--algorithm", choices=ALGORITHMS, default="l2sgd", help="CRFsuite training algorithm")
    p.add_argument("--c1", type=float, default=None, help="L1 coefficient (lbfgs only; default none)")
    p.add_argument("--c2", type=float, default=TURIAN_C2,
                   help=f"L2 coefficient (default {TURIAN_C2}: Turian's sigma {TURIAN_SIGMA})")
    p.add_argument("--max-iterations", type=int, default=None,
                   help="iteration (epoch) limit (default CRFsuite's: 1000 for l2sgd, none for lbfgs)")
    p.add_argument("--tune-c2", type=float, nargs="+", default=[],
                   help=f"choose c2 among these on {DEV_SENTENCES} sentences held out from train")
    p.add_argument("--seen-features-only", action="store_true",
                   help="turn feature.possible_states and feature.possible_transitions off (CRFsuite's and "
                        "sklearn-crfsuite's default; Turian's L-BFGS sigma-2 run, 93.63): a smaller, faster model")
    add_output_arguments(p, "the CRFsuite model", "'word POS gold predicted' lines")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("crfsuite_chunker", parser(), argv, lambda args: run(ChunkerConfig(
        train=args.train, test=args.test, model=args.model, predictions=args.predictions, **representation_settings(args),
        algorithm=args.algorithm, c1=args.c1, c2=args.c2, max_iterations=args.max_iterations,
        tune_c2=tuple(args.tune_c2), possible_features=not args.seen_features_only)))


if __name__ == "__main__":
    sys.exit(main())
