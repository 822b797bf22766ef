"""CoNLL-2003 NER with a linear model and word representations (Turian, Ratinov & Bengio 2010, Table 3).

Turian et al.'s Table 3 puts Brown clusters and C&W / HLBL embeddings into a linear NER
model (a regularized averaged perceptron) with the baseline features of Ratinov & Roth
(2009), on CoNLL-2003 English in BILOU. This script trains that model with CRFsuite,
whose ``ap`` algorithm is the averaged structured perceptron (Collins 2002) with Viterbi
decoding; ``--algorithm lbfgs`` trains a linear-chain CRF on the same features instead.

Features of token ``i`` (Turian et al. 2010, section 6.2), named as CRFsuite sees them::

    w[-2] .. w[+2]         the tokens in the window, as written
    type[0]                word type of x_i: A/a/n/punctuation runs merged ('Aa', 'n.n', 'A')
    cap[-2] .. cap[+2]     capitalization class in the window (features.orthographic.capitalization)
    cap[-2..+2]            the window's capitalization pattern, one conjoined attribute
    pre1..pre4, suf1..suf4 prefixes and suffixes of x_i
    hyph                   each part of x_i between hyphens ('Bosnia-Herzegovina' -> Bosnia, Herzegovina)
    brown4[k] .. brown20[k]  Brown path prefixes of w[k], k in -2..+2 (--brown)
    emb[j][k]              dimension j of the embedding of w[k], scaled to sigma 0.1 (--embeddings)

The paper's remaining baseline features depend on the decoder: the previous prediction
``y[i-1]`` is the first-order transition of the linear chain; ``y[i-2]`` and the
conjunction of the window with ``y[i-1]`` need a second-order or greedy decoder, which
CRFsuite's ``crf1d`` graph is not, so they are left out (as are gazetteers and
non-local features, which the paper adds only in its last rows). Representations are
looked up as they were induced (``--embeddings-lowercase``, ``--embeddings-normalize-numbers``;
Brown paths exact, then lower-cased with ``--brown-lowercase``).

The number of perceptron epochs (or the CRF's c2) can be chosen on the development set
(``--tune``); test is scored once, with conlleval's measure on the gold file's IOB1 tags.

Usage (paths relative to ``SEQLAB_DATA``, default ``../shared/data``)::

    python -m examples.crfsuite_ner --train conll2003/train.txt --dev conll2003/dev.txt \\
        --test conll2003/test.txt [--brown PATHS] [--embeddings VECTORS] \\
        --model OUT.crfsuite --predictions OUT.txt

It prints one JSON object with dev and test F1 and their conlleval reports, feature
counts and timings; ``OUT.crfsuite.json`` holds the same with the resolved settings.
Needs python-crfsuite (the ``examples`` extra).
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from features.brown import BrownClusters
from features.embeddings import EmbeddingFeatures
from features.orthographic import capitalization, word_type
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.data.conll import read_conll
from seqlab.data.metrics import report_to_dict, score
from seqlab.data.schemes import convert

if not __package__:  # run as a file, where the examples package cannot be imported
    sys.exit("crfsuite_ner: run it from the repository root as a module: python -m examples.crfsuite_ner")
from examples.baselines import (PAD, WINDOW, RepresentationSettings, Sentence, WindowRepresentations,  # noqa: E402
                                add_output_arguments, add_representation_arguments, import_pycrfsuite,
                                load_representations, offset, representation_settings, run_main, tag, train_crf,
                                write_predictions, write_results)

logger = logging.getLogger("crfsuite_ner")

COLUMNS = ("word", "pos", "chunk", "ner")
AFFIX_LENGTHS = (1, 2, 3, 4)
FILE_SCHEME = "iob1"  # CoNLL-2003's gold files
TRAIN_SCHEME = "bilou"  # Ratinov & Roth (2009): BILOU beats BIO for this model
ALGORITHMS = ("ap", "lbfgs")
TUNE_EPOCHS = (5, 10, 15, 20, 30, 50)  # perceptron epochs tried on dev by --tune
TUNE_C2 = (0.01, 0.03, 0.1, 0.3, 1.0)  # CRF L2 coefficients tried on dev by --tune

NerSentence = Sentence  # words, POS (not a feature), IOB1 or BILOU NER tags


class NerFeatures:
    """Per-token CRFsuite attributes of Turian et al. (2010, section 6.2), with word representations.

    Called like :class:`examples.crfsuite_chunker.ChunkFeatures` (words and POS tags; the POS tags
    are not among the baseline features and are ignored), it returns one
    ``{attribute: value}`` dict per token.
    """

    def __init__(self, brown: Sequence[BrownClusters] = (), embeddings: Sequence[EmbeddingFeatures] = (),
                 *, brown_lowercase: bool = False) -> None:
        self.representations = WindowRepresentations(brown, embeddings, brown_lowercase=brown_lowercase)

    def __call__(self, words: Sequence[str], pos: Sequence[str] = ()) -> list[dict[str, float]]:
        del pos  # not a baseline feature
        padded = (PAD, PAD, *words, PAD, PAD)  # index i + 2 is token i
        caps = [capitalization(w) if w else PAD for w in padded]
        looked_up = self.representations.lookup(padded)
        out = []
        for i in range(2, len(words) + 2):
            word = padded[i]
            feats: dict[str, float] = {f"w[{offset(k)}]={padded[i + k]}": 1.0 for k in WINDOW}
            feats.update({f"cap[{offset(k)}]={caps[i + k]}": 1.0 for k in WINDOW})
            feats["cap[-2..+2]=" + " ".join(caps[i - 2:i + 3])] = 1.0
            feats[f"type[0]={word_type(word)}"] = 1.0
            for n in AFFIX_LENGTHS:
                if len(word) > n:
                    feats[f"pre{n}={word[:n]}"] = 1.0
                    feats[f"suf{n}={word[-n:]}"] = 1.0
            if "-" in word.strip("-"):
                feats.update({f"hyph={part}": 1.0 for part in word.split("-") if part})
            self.representations.add(feats, i, looked_up)
            out.append(feats)
        return out


@dataclass(frozen=True)
class NerData(RepresentationSettings):
    """The data, outputs and word representations of a CoNLL-2003 run (this script's and greedy_ner.py's)."""

    train: str
    dev: str
    test: str
    model: str
    predictions: str
    brown_lowercase: bool = False

    def features(self) -> NerFeatures:
        """The feature extractor with the representations loaded (paths relative to SEQLAB_DATA)."""
        return NerFeatures(*load_representations(self), brown_lowercase=self.brown_lowercase)


@dataclass(frozen=True)
class NerConfig(NerData):
    """Everything that determines a run; written with the results next to the model."""

    algorithm: str = "ap"
    epochs: int = 20  # perceptron epochs (ap) or the CRF's iteration limit (lbfgs: 0 = none)
    c2: float = 0.1  # CRF L2 coefficient (lbfgs)
    tune: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.algorithm not in ALGORITHMS:
            raise SeqlabError(f"algorithm must be one of {', '.join(ALGORITHMS)}, but got {self.algorithm!r}")
        if self.epochs < 0 or (self.algorithm == "ap" and self.epochs < 1):
            raise SeqlabError(f"epochs must be >= 1 for ap (>= 0 for lbfgs), but got {self.epochs!r}")
        if not self.c2 >= 0:
            raise SeqlabError(f"c2 must be a number >= 0, but got {self.c2!r}")

    def params(self, *, epochs: int | None = None, c2: float | None = None) -> dict[str, Any]:
        epochs = self.epochs if epochs is None else epochs
        if self.algorithm == "ap":
            return {"max_iterations": epochs, "epsilon": 0.0}  # all epochs: no early stop on the train loss
        params: dict[str, Any] = {"c2": self.c2 if c2 is None else c2}
        if epochs:
            params["max_iterations"] = epochs
        return params


def read_sentences(path: str | os.PathLike[str]) -> list[NerSentence]:
    """The (words, POS, IOB1 NER tags) of each sentence of a CoNLL-2003 file."""
    sentences = [(s["word"], s["pos"], s["ner"]) for s in read_conll(path, COLUMNS)]
    if not sentences:
        raise SeqlabError(f"{path}: no sentences (expected CoNLL-2003 lines 'word POS chunk NER')")
    return sentences


def to_scheme(sentences: Sequence[NerSentence], scheme: str) -> list[NerSentence]:
    return [(words, pos, tuple(convert(tags, scheme))) for words, pos, tags in sentences]


def evaluate(model: str | os.PathLike[str], gold: Sequence[NerSentence], featurize: NerFeatures) -> tuple[
        list[list[str]], Any]:
    """The model's tags for ``gold`` in the file's scheme, and conlleval's report against it."""
    predicted = [convert(tags, FILE_SCHEME) for tags in tag(model, gold, featurize)]
    return predicted, score([list(s[2]) for s in gold], predicted)


def choose(cfg: NerConfig, train: Sequence[NerSentence], dev: Sequence[NerSentence],
           featurize: NerFeatures) -> dict[str, Any]:
    """Pick the perceptron's epochs (or the CRF's c2) by dev F1; test is never looked at."""
    grid: Sequence[Any] = TUNE_EPOCHS if cfg.algorithm == "ap" else TUNE_C2
    dev_f1: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="crfsuite_ner.") as folder:
        for value in grid:
            params = cfg.params(epochs=value) if cfg.algorithm == "ap" else cfg.params(c2=value)
            model = Path(folder) / f"{value}.crfsuite"
            train_crf(train, featurize, cfg.algorithm, params, model)
            dev_f1[repr(value)] = evaluate(model, dev, featurize)[1].f1
            logger.info("%s %s: dev F1 %.2f", "epochs" if cfg.algorithm == "ap" else "c2", value,
                        dev_f1[repr(value)])
    best = max(grid, key=lambda v: dev_f1[repr(v)])
    return {"grid": "epochs" if cfg.algorithm == "ap" else "c2", "dev_f1": dev_f1, "chosen": best}


def run(cfg: NerConfig) -> dict[str, Any]:
    """Train on ``cfg.train`` (in BILOU), select on dev, score dev and test; write model and predictions."""
    start = time.perf_counter()
    import_pycrfsuite()  # fail before reading anything
    paths = {key: resolve_data_path(getattr(cfg, key), key=key) for key in ("train", "dev", "test")}
    train, dev, test = (read_sentences(paths[key]) for key in ("train", "dev", "test"))
    train_bilou = to_scheme(train, TRAIN_SCHEME)
    featurize = cfg.features()
    tuning = choose(cfg, train_bilou, dev, featurize) if cfg.tune else None
    if tuning and cfg.algorithm == "ap":
        params = cfg.params(epochs=tuning["chosen"])
    else:
        params = cfg.params(c2=tuning["chosen"]) if tuning else cfg.params()
    logger.info("training %s on %d sentences with %s", cfg.algorithm, len(train), params)
    stats = train_crf(train_bilou, featurize, cfg.algorithm, params, cfg.model)
    _, dev_report = evaluate(cfg.model, dev, featurize)
    tag_start = time.perf_counter()
    predicted, test_report = evaluate(cfg.model, test, featurize)
    tag_seconds = time.perf_counter() - tag_start
    write_predictions(cfg.predictions, test, predicted)
    results = {
        "dev_f1": dev_report.f1,
        "test_f1": test_report.f1,
        "dev": report_to_dict(dev_report),
        "test": report_to_dict(test_report),
        "train_seconds": stats.seconds,
        "tag_seconds": tag_seconds,
        "total_seconds": time.perf_counter() - start,
        "features": {"attributes": stats.attributes, "crfsuite_features": stats.features, "labels": stats.labels},
        "crfsuite": {"algorithm": cfg.algorithm, **params, "iterations": stats.iterations},
        "tuning": tuning,
        "sentences": {"train": len(train), "dev": len(dev), "test": len(test)},
        "config": dataclasses.asdict(cfg),
    }
    write_results(cfg.model, results, stats.log)
    return results


def add_ner_data_arguments(p: argparse.ArgumentParser) -> None:
    """--train, --dev, --test and the representation flags (this script's and greedy_ner.py's)."""
    p.add_argument("--train", required=True, help="CoNLL-2003 training file (relative to SEQLAB_DATA)")
    p.add_argument("--dev", required=True, help="CoNLL-2003 development file (selection)")
    p.add_argument("--test", required=True, help="CoNLL-2003 test file (scored once)")
    add_representation_arguments(p)
    p.add_argument("--brown-lowercase", action="store_true",
                   help="look a word up lower-cased when it has no path as written")


def ner_data_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The fields of :class:`NerData` from the flags (``--model`` and ``--predictions`` included)."""
    return {"train": args.train, "dev": args.dev, "test": args.test, "model": args.model,
            "predictions": args.predictions, **representation_settings(args), "brown_lowercase": args.brown_lowercase}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_ner_data_arguments(p)
    p.add_argument("--algorithm", choices=ALGORITHMS, default="ap",
                   help="ap: averaged perceptron (the paper's model); lbfgs: linear-chain CRF")
    p.add_argument("--epochs", type=int, default=20, help="perceptron epochs / CRF iteration limit (default 20)")
    p.add_argument("--c2", type=float, default=0.1, help="CRF L2 coefficient (lbfgs; default 0.1)")
    p.add_argument("--tune", action="store_true",
                   help=f"choose epochs among {TUNE_EPOCHS} (ap) or c2 among {TUNE_C2} (lbfgs) on dev")
    add_output_arguments(p, "the CRFsuite model", "'word POS gold predicted' lines for test")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("crfsuite_ner", parser(), argv, lambda args: run(NerConfig(
        **ner_data_settings(args), algorithm=args.algorithm, epochs=args.epochs, c2=args.c2, tune=args.tune)))


if __name__ == "__main__":
    sys.exit(main())
