"""CoNLL-2003 NER with Ratinov & Roth (2009)'s greedy averaged perceptron and its history features.

Turian, Ratinov & Bengio (2010, section 6.2) add word representations to Ratinov & Roth's
baseline NER model: an averaged perceptron that tags left to right, one token at a time, with
the previous two predictions among its features. ``crfsuite_ner.py`` trains CRFsuite's
first-order chain on the same per-token features, which cannot see ``y[i-2]`` or the window
conjoined with ``y[i-1]``. This script is the greedy model itself, so that those features are in:

    every feature of crfsuite_ner.NerFeatures (window tokens, capitalization, word type,
        affixes, hyphen parts, Brown prefixes, scaled embeddings)
    y-1=L, y-2=L, y-2,y-1=L,L'     the previous two predictions and their pair
    w[k]=x|y-1=L                   each window token conjoined with the previous prediction

Labels are BILOU (converted back to the gold file's IOB1 for scoring); a label that cannot
follow the previous one in BILOU is never chosen. Training is online: each sentence is tagged
with the current weights, and a token whose predicted label is wrong moves the weights of its
features towards the gold label and away from the predicted one (multiclass updates). With
``--thickness T`` each label has its own binary perceptron instead, updated on every token until
it scores the token at least ``T`` on the right side of 0 (the thick separator of LBJ's averaged
perceptron, which Ratinov & Roth's "regularized" refers to). The history features read the model's
own earlier predictions, as at test time (``--train-history gold``: the gold labels). The weights
are averaged over every token seen (Collins 2002), from running sums rather than a copy per token.
Sentences are shuffled each epoch with ``--seed``, so runs differ by seed.

With ``--tune`` the dev set is scored after each epoch in ``--tune-epochs`` of one training run and
the best epoch's averaged weights are kept; test is scored once, with them.

Usage (paths relative to ``SEQLAB_DATA``, default ``../shared/data``)::

    python -m examples.greedy_ner --train conll2003/train.txt --dev conll2003/dev.txt \\
        --test conll2003/test.txt --tune [--brown PATHS] [--embeddings VECTORS] [--seed N] \\
        --model OUT.npz --predictions OUT.txt

It prints one JSON object with dev and test F1 and their conlleval reports; ``OUT.npz.json`` holds
the same with the settings. ``OUT.npz`` holds the averaged weights, the feature index and labels.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from seqlab.core.atomic import atomic_open, atomic_path
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.data.metrics import report_to_dict, score
from seqlab.data.schemes import allowed_transitions, convert

if not __package__:  # run as a file, where the examples package cannot be imported
    sys.exit("greedy_ner: run it from the repository root as a module: python -m examples.greedy_ner")
from examples.baselines import WINDOW, add_output_arguments, offset, run_main, write_predictions  # noqa: E402
from examples.crfsuite_ner import (FILE_SCHEME, TRAIN_SCHEME, NerData, NerSentence,  # noqa: E402
                                   add_ner_data_arguments, ner_data_settings, read_sentences, to_scheme)

logger = logging.getLogger("greedy_ner")

START = "<s>"  # the "previous prediction" before a sentence's first token
OFFSETS = tuple(offset(k) for k in WINDOW)  # "-2" ... "+2", as the window features name them
TUNE_EPOCHS = (5, 10, 15, 20, 30, 50)
TRAIN_HISTORIES = ("predicted", "gold")


@dataclass(frozen=True)
class GreedyConfig(NerData):
    """Everything that determines a run; written with the results next to the model."""

    epochs: int = 20
    tune: bool = False
    tune_epochs: tuple[int, ...] = TUNE_EPOCHS
    history: bool = True  # False: no y-1 / y-2 features (the ablation of the greedy model's history)
    train_history: str = "predicted"  # or "gold": the history features read the gold labels in training
    thickness: float | None = None  # one-vs-all updates with this margin (LBJ's thick separator); None: multiclass
    seed: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.epochs < 1:
            raise SeqlabError(f"epochs must be >= 1, but got {self.epochs!r}")
        if self.tune and (not self.tune_epochs or min(self.tune_epochs) < 1):
            raise SeqlabError(f"tune_epochs must be positive epoch counts, but got {list(self.tune_epochs)}")
        if self.thickness is not None and not self.thickness >= 0:
            raise SeqlabError(f"thickness must be >= 0, but got {self.thickness!r}")
        if self.train_history not in TRAIN_HISTORIES:
            raise SeqlabError(f"train_history must be one of {', '.join(TRAIN_HISTORIES)}, got {self.train_history!r}")

    @property
    def last_epoch(self) -> int:
        return max(self.tune_epochs) if self.tune else self.epochs


class GreedyPerceptron:
    """A multiclass averaged perceptron over named sparse features, tagging a sentence left to right.

    ``static`` features (a sentence's :class:`crfsuite_ner.NerFeatures` dicts) are indexed once per
    sentence; the history features are named and looked up as the predictions are made. A feature gets
    a row of weights (one per label) the first time an update touches it, so the rows are the features
    that ever mattered in training.
    """

    def __init__(self, labels: Sequence[str], *, history: bool = True, gold_history: bool = False,
                 thickness: float | None = None, capacity: int = 1 << 20) -> None:
        self.labels = list(labels)
        self._label_id = {label: i for i, label in enumerate(self.labels)}
        self._ones = np.ones(3 + len(WINDOW))  # the values of the history features
        self.thickness = thickness  # None: multiclass updates; else one-vs-all with this margin
        self.history = history
        self.gold_history = gold_history  # in training, read the gold labels of the previous tokens
        self.index: dict[str, int] = {}
        self.W = np.zeros((capacity, len(self.labels)))  # current weights
        self.U = np.zeros((capacity, len(self.labels)))  # sum over updates of (time of update) x (update)
        self.time = 1  # tokens seen, plus one
        trans, start, _ = allowed_transitions(self.labels, TRAIN_SCHEME)
        allowed = np.array(trans, dtype=bool)  # [previous, next]
        self._mask = {START: np.where(np.array(start, dtype=bool), 0.0, -np.inf)}
        self._mask.update({label: np.where(allowed[i], 0.0, -np.inf) for i, label in enumerate(self.labels)})

    # ---------------------------------------------------------------- features

    def _ids(self, names: Sequence[str], values: Sequence[float], grow: bool) -> tuple[np.ndarray, np.ndarray]:
        if grow:
            for name in names:
                if name not in self.index:
                    self._add(name)
            return np.fromiter((self.index[n] for n in names), np.int64, len(names)), np.asarray(values, float)
        pairs = [(self.index[n], v) for n, v in zip(names, values) if n in self.index]
        return np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], float)

    def _add(self, name: str) -> None:
        row = len(self.index)
        if row == self.W.shape[0]:
            self.W = np.concatenate([self.W, np.zeros_like(self.W)])
            self.U = np.concatenate([self.U, np.zeros_like(self.U)])
        self.index[name] = row

    def static(self, feats: Sequence[dict[str, float]], grow: bool) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each token's (feature rows, values); ``grow`` adds the unseen features (training), else they are
        dropped."""
        return [self._ids(list(f), list(f.values()), grow) for f in feats]

    def _contexts(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """Each token's window features conjoined with y-1, named up to the label (``w[k]=x|y-1=``)."""
        if not self.history:
            return [()] * len(words)
        padded = ("", "", *words, "", "")
        return [tuple(f"w[{o}]={padded[i + 2 + k]}|y-1=" for k, o in zip(WINDOW, OFFSETS)) for i in range(len(words))]

    def _history(self, context: tuple[str, ...], p1: str, p2: str) -> list[str]:
        """The features of a token that read the predictions: y-1, y-2, their pair and ``context`` + y-1."""
        if not self.history:
            return []
        return [f"y-1={p1}", f"y-2={p2}", f"y-2,y-1={p2},{p1}", *(c + p1 for c in context)]

    # ---------------------------------------------------------------- tagging and learning

    def tag(self, words: Sequence[str], static: list[tuple[np.ndarray, np.ndarray]], W: np.ndarray,
            gold: Sequence[str] | None = None) -> list[str]:
        """Greedy BILOU labels of one sentence under weights ``W``; with ``gold``, update as it goes."""
        contexts = self._contexts(words)
        index = self.index
        p1 = p2 = START
        out: list[str] = []
        for i, (ids, values) in enumerate(static):
            hist = self._history(contexts[i], p1, p2)
            known = [index[h] for h in hist if h in index]
            rows = np.concatenate([ids, np.array(known, np.int64)]) if known else ids
            vals = np.concatenate([values, self._ones[:len(known)]]) if known else values
            raw = vals @ W[rows]
            guess = self.labels[int(np.argmax(raw + self._mask[p1]))]
            if gold is not None:
                good = self._label_id[gold[i]]
                if self.thickness is None:  # multiclass: the gold label up, the wrong guess down
                    change = {good: 1.0, self._label_id[guess]: -1.0} if guess != gold[i] else {}
                else:  # one binary scorer per label, each asked for a margin of ``thickness`` on its side
                    short = raw > -self.thickness
                    short[good] = raw[good] < self.thickness
                    change = {y: (1.0 if y == good else -1.0) for y in np.flatnonzero(short).tolist()}
                if change:
                    hist_rows, hist_vals = self._ids(hist, [1.0] * len(hist), grow=True)
                    self._update(np.concatenate([ids, hist_rows]), np.concatenate([values, hist_vals]), change)
                    W = self.W  # may have grown
                self.time += 1
            out.append(guess)
            p1, p2 = (gold[i] if gold is not None and self.gold_history else guess), p1
        return out

    def _update(self, rows: np.ndarray, values: np.ndarray, change: dict[int, float]) -> None:
        """Add ``sign x values`` to the weights of ``rows`` in each label column of ``change``."""
        for label, sign in change.items():
            self.W[rows, label] += sign * values
            self.U[rows, label] += (sign * self.time) * values

    def padded(self, W: np.ndarray) -> np.ndarray:
        """``W`` (the averaged weights of an earlier epoch) with a zero row for each feature added since."""
        if W.shape[0] == len(self.index):
            return W
        return np.concatenate([W, np.zeros((len(self.index) - W.shape[0], W.shape[1]))])

    def averaged(self) -> np.ndarray:
        """The mean of the weights after each training token so far (Collins 2002): with updates ``v`` at times
        ``t`` of ``T`` tokens, ``W - (U - W) / T`` for ``W = sum v`` and ``U = sum t v``."""
        n, tokens = len(self.index), self.time - 1
        if tokens == 0:
            return self.W[:n].copy()
        return self.W[:n] - (self.U[:n] - self.W[:n]) / tokens

    def train_epoch(self, words: Sequence[Sequence[str]], static: list[list[tuple[np.ndarray, np.ndarray]]],
                    gold: Sequence[Sequence[str]], order: Sequence[int]) -> int:
        """One pass over the sentences in ``order``; returns the tokens tagged wrong."""
        wrong = 0
        for s in order:
            guess = self.tag(words[s], static[s], self.W, gold[s])
            wrong += sum(g != y for g, y in zip(guess, gold[s]))
        return wrong

    def save(self, path: str | os.PathLike[str], W: np.ndarray) -> None:
        names = np.array(sorted(self.index, key=self.index.__getitem__), dtype=object)
        with atomic_path(path) as tmp, open(tmp, "wb") as handle:
            np.savez_compressed(handle, weights=W.astype(np.float32), features=names.astype(str),
                                labels=np.array(self.labels, dtype=str))


def _decode(model: GreedyPerceptron, W: np.ndarray, sentences: Sequence[NerSentence],
            static: list[list[tuple[np.ndarray, np.ndarray]]]) -> list[list[str]]:
    """Predicted tags in the gold file's scheme."""
    return [convert(model.tag(s[0], feats, W), FILE_SCHEME) for s, feats in zip(sentences, static)]


def run(cfg: GreedyConfig) -> dict[str, Any]:
    """Train on ``cfg.train`` (BILOU), choose the epoch on dev if asked, score dev and test; write the model."""
    start = time.perf_counter()
    paths = {key: resolve_data_path(getattr(cfg, key), key=key) for key in ("train", "dev", "test")}
    train, dev, test = (read_sentences(paths[key]) for key in ("train", "dev", "test"))
    train_bilou = to_scheme(train, TRAIN_SCHEME)
    featurize = cfg.features()
    labels = sorted({t for s in train_bilou for t in s[2]})
    model = GreedyPerceptron(labels, history=cfg.history, gold_history=cfg.train_history == "gold",
                             thickness=cfg.thickness)
    train_static = [model.static(featurize(s[0]), grow=True) for s in train_bilou]
    static_features = len(model.index)
    dev_static, test_static = ([model.static(featurize(s[0]), grow=False) for s in split] for split in (dev, test))
    words, gold = [s[0] for s in train_bilou], [s[2] for s in train_bilou]
    rng = random.Random(cfg.seed)
    order = list(range(len(train_bilou)))
    checkpoints = set(cfg.tune_epochs) if cfg.tune else {cfg.epochs}
    dev_f1: dict[str, float] = {}
    best: tuple[float, int, np.ndarray] | None = None
    train_start = time.perf_counter()
    for epoch in range(1, cfg.last_epoch + 1):
        rng.shuffle(order)
        wrong = model.train_epoch(words, train_static, gold, order)
        logger.info("epoch %d: %d training tokens tagged wrong, %d features, %.0f s", epoch, wrong,
                    len(model.index), time.perf_counter() - train_start)
        if epoch in checkpoints:
            W = model.averaged()
            f1 = score([list(s[2]) for s in dev], _decode(model, W, dev, dev_static)).f1
            dev_f1[str(epoch)] = f1
            logger.info("epoch %d: dev F1 %.2f", epoch, f1)
            if best is None or f1 > best[0]:
                best = (f1, epoch, W)
    train_seconds = time.perf_counter() - train_start
    assert best is not None
    _, chosen, W = best
    W = model.padded(W)  # features first updated after the chosen epoch weigh nothing in its average
    dev_report = score([list(s[2]) for s in dev], _decode(model, W, dev, dev_static))
    tag_start = time.perf_counter()
    predicted = _decode(model, W, test, test_static)
    tag_seconds = time.perf_counter() - tag_start
    test_report = score([list(s[2]) for s in test], predicted)
    write_predictions(cfg.predictions, test, predicted)
    model.save(cfg.model, W)
    results = {
        "dev_f1": dev_report.f1,
        "test_f1": test_report.f1,
        "dev": report_to_dict(dev_report),
        "test": report_to_dict(test_report),
        "epochs": {"chosen": chosen, "dev_f1": dev_f1 if cfg.tune else None},
        "train_seconds": train_seconds,
        "tag_seconds": tag_seconds,
        "total_seconds": time.perf_counter() - start,
        "features": {"static": static_features, "all": len(model.index), "labels": len(labels)},
        "sentences": {"train": len(train), "dev": len(dev), "test": len(test)},
        "config": dataclasses.asdict(cfg),
    }
    with atomic_open(f"{cfg.model}.json") as out:
        json.dump(results, out, indent=2)
        out.write("\n")
    return results


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_ner_data_arguments(p)
    p.add_argument("--epochs", type=int, default=20, help="training epochs without --tune (default 20)")
    p.add_argument("--tune", action="store_true", help="choose the epoch among --tune-epochs on dev (one run)")
    p.add_argument("--tune-epochs", type=int, nargs="+", default=list(TUNE_EPOCHS),
                   help=f"epochs after which dev is scored with --tune (default {' '.join(map(str, TUNE_EPOCHS))})")
    p.add_argument("--no-history", action="store_true", help="leave out the features of the previous predictions")
    p.add_argument("--train-history", choices=TRAIN_HISTORIES, default="predicted",
                   help="what the history features read in training: the model's own predictions (as when "
                        "tagging; default) or the gold labels")
    p.add_argument("--thickness", type=float, default=None,
                   help="train one binary perceptron per label, each updated until it scores its tokens at least "
                        "this far on the right side of 0 (a thick separator, as LBJ's averaged perceptron; "
                        "default: multiclass updates on mistakes only)")
    p.add_argument("--seed", type=int, default=1, help="the sentence order's seed (default 1)")
    add_output_arguments(p, "the averaged weights (.npz)", "'word POS gold predicted' lines for test")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("greedy_ner", parser(), argv, lambda args: run(GreedyConfig(
        **ner_data_settings(args), epochs=args.epochs, tune=args.tune,
        tune_epochs=tuple(args.tune_epochs), history=not args.no_history, train_history=args.train_history,
        thickness=args.thickness, seed=args.seed)))


if __name__ == "__main__":
    sys.exit(main())
