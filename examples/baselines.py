"""What the linear baselines of Turian, Ratinov & Bengio (2010) share: window feature names, word representations,
CRFsuite training and tagging, result files, and the command line's flags and JSON output.

:mod:`examples.crfsuite_chunker` (Table 2), :mod:`examples.crfsuite_ner` and :mod:`examples.greedy_ner`
(Table 3) build on it. A sentence is ``(words, POS tags, labels)``; a feature extractor maps a sentence's words
and POS tags to one ``{attribute: value}`` dict per token, the attributes named as CRFsuite sees them. Needs
python-crfsuite for training and tagging (the ``examples`` extra); :func:`import_pycrfsuite` says how to install it.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Callable

from features.base import FeatureFileError
from features.brown import BrownClusters
from features.embeddings import EmbeddingFeatures
from features.scaling import DEFAULT_SIGMA
from seqlab.cli import setup_logging
from seqlab.core.atomic import atomic_open, atomic_path
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path

logger = logging.getLogger(__name__)

#: Offsets of the window around token i whose words the features read.
WINDOW = (-2, -1, 0, 1, 2)
#: Word and tag of a position outside the sentence (Turian's to_crfsuite.py pads with '').
PAD = ""

Sentence = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]  # words, POS tags, labels (chunks or NER tags)
Featurizer = Callable[[Sequence[str], Sequence[str]], list[dict[str, float]]]  # words, POS -> one dict per token


def offset(k: int) -> str:
    """A window offset as the feature names write it: ``-2``, ``-1``, ``0``, ``+1``, ``+2``."""
    return "0" if k == 0 else f"{k:+d}"


def file_mark(n: int) -> str:
    """Suffix of the n-th file of one kind of representation: none for the first, ``#2`` ..."""
    return "" if n == 1 else f"#{n}"


class WindowRepresentations:
    """The word-representation attributes of the words in the window ``w[-2..+2]`` (Turian et al. 2010, section 7).

    Each Brown clustering adds its path prefixes, ``brown4[k]=0110`` (binary), and each embedding file one real
    value per dimension, ``emb[3][k]``; a second file of a kind gets ``#2`` after its names (``brown4#2[0]``,
    ``emb[3]#2[0]``). Padding positions get no Brown feature and the embedding of ``*UNKNOWN*``. With
    ``brown_lowercase``, a word without a path as written is looked up lower-cased.
    """

    def __init__(self, brown: Sequence[BrownClusters] = (), embeddings: Sequence[EmbeddingFeatures] = (),
                 *, brown_lowercase: bool = False) -> None:
        self.brown = list(brown)
        self.embeddings = list(embeddings)
        self.brown_lowercase = brown_lowercase
        self._emb_names = [
            {k: [f"{name}{file_mark(n)}[{offset(k)}]" for name in emb.feature_names()] for k in WINDOW}
            for n, emb in enumerate(self.embeddings, start=1)
        ]

    def _brown_dicts(self, clusters: BrownClusters, padded: Sequence[str]) -> list[dict[str, Any]]:
        dicts = clusters.feature_dicts(padded)
        if self.brown_lowercase:
            lowered = clusters.feature_dicts([w.lower() for w in padded])
            dicts = [d or low for d, low in zip(dicts, lowered)]
        return dicts

    def lookup(self, padded: Sequence[str]) -> tuple[list[list[dict[str, Any]]], list[list[list[float]]]]:
        """Each Brown file's path prefixes and each embedding file's vectors of every padded position."""
        brown = [self._brown_dicts(clusters, padded) for clusters in self.brown]
        vectors = [emb(padded).tolist() for emb in self.embeddings]  # shape: (len(padded), dim) each
        return brown, vectors

    def add(self, feats: dict[str, float], i: int,
            looked_up: tuple[list[list[dict[str, Any]]], list[list[list[float]]]]) -> None:
        """Add the window features of padded position ``i`` to ``feats``, from :meth:`lookup`'s result."""
        brown, vectors = looked_up
        for n, dicts in enumerate(brown, start=1):
            for k in WINDOW:
                for key, value in dicts[i + k].items():
                    feats[f"{key}{file_mark(n)}[{offset(k)}]={value}"] = 1.0
        for names, rows in zip(self._emb_names, vectors):
            for k in WINDOW:
                feats.update(zip(names[k], rows[i + k]))


@dataclass(frozen=True, kw_only=True)
class RepresentationSettings:
    """The word representations a baseline reads (paths relative to SEQLAB_DATA) and how the embeddings are looked
    up and scaled: the fields every baseline's config inherits (keyword-only, after the config's own)."""

    brown: tuple[str, ...] = ()
    embeddings: tuple[str, ...] = ()
    embedding_scale: float = DEFAULT_SIGMA
    embeddings_lowercase: bool = False  # for vectors induced from lower-cased text (Turian's C&W and HLBL)
    embeddings_normalize_numbers: bool = False  # for vectors induced with 1980 -> *DDDD*

    def __post_init__(self) -> None:
        if not self.embedding_scale > 0:
            raise SeqlabError(f"embedding_scale must be > 0, but got {self.embedding_scale!r}")


def load_representations(cfg: RepresentationSettings) -> tuple[list[BrownClusters], list[EmbeddingFeatures]]:
    """The Brown clusterings and scaled embeddings named by ``cfg``, paths relative to SEQLAB_DATA."""
    brown = [BrownClusters.load(resolve_data_path(p, key="brown")) for p in cfg.brown]
    embeddings = [EmbeddingFeatures.load(resolve_data_path(p, key="embeddings"), scale=cfg.embedding_scale,
                                         lowercase=cfg.embeddings_lowercase,
                                         normalize_numbers=cfg.embeddings_normalize_numbers)
                  for p in cfg.embeddings]
    return brown, embeddings


def import_pycrfsuite() -> Any:
    """The python-crfsuite module, or an error with the install hint."""
    try:
        import pycrfsuite
    except ImportError:
        raise SeqlabError("this example needs python-crfsuite: pip install python-crfsuite") from None
    return pycrfsuite


@dataclass(frozen=True)
class TrainStats:
    """What training a CRF took and produced."""

    seconds: float
    iterations: int
    attributes: int  # distinct attributes in the training data
    features: int  # CRFsuite's (attribute, label) and (label, label) weights
    labels: int
    log: str


def train_crf(sentences: Sequence[Sentence], featurize: Featurizer, algorithm: str,
              params: dict[str, Any], model_path: str | os.PathLike[str]) -> TrainStats:
    """Train a CRFsuite model on ``sentences`` and write it atomically to ``model_path``."""
    trainer = _logging_trainer(import_pycrfsuite())(algorithm, params=params, verbose=True)
    attributes: set[str] = set()
    labels: set[str] = set()
    for words, pos, tags in sentences:
        xseq = featurize(words, pos)
        for feats in xseq:
            attributes.update(feats)
        labels.update(tags)
        trainer.append(xseq, list(tags))
    start = time.perf_counter()
    with atomic_path(model_path) as tmp:
        trainer.train(str(tmp))
    seconds = time.perf_counter() - start
    parsed = trainer.logparser
    return TrainStats(seconds, len(parsed.iterations), len(attributes), parsed.featgen_num_features or 0,
                      len(labels), "".join(parsed.log))


def _logging_trainer(pycrfsuite: Any) -> type:
    """pycrfsuite's Trainer with its progress sent to logging instead of stdout."""

    class LoggingTrainer(pycrfsuite.Trainer):
        def on_start(self, log: str) -> None:
            self._started = time.perf_counter()
            self._limit = self.get("max_iterations")

        def on_featgen_progress(self, log: str, percent: int) -> None:
            pass

        def on_featgen_end(self, log: str) -> None:
            logger.info("CRFsuite: %d features", self.logparser.featgen_num_features or 0)

        def on_prepared(self, log: str) -> None:
            pass

        def on_prepare_error(self, log: str) -> None:
            logger.error("CRFsuite: %s", log.strip())

        def on_iteration(self, log: str, info: dict[str, Any]) -> None:
            elapsed = time.perf_counter() - self._started
            logger.info("iteration %d/%s: loss %.2f, %.1f s (%.2f s/iteration so far)", info["num"], self._limit,
                        info.get("loss", float("nan")), elapsed, elapsed / info["num"])

        def on_optimization_end(self, log: str) -> None:
            logger.info("CRFsuite: %s", log.strip().splitlines()[0] if log.strip() else "optimization ended")

        def on_end(self, log: str) -> None:
            pass

    return LoggingTrainer


def tag(model_path: str | os.PathLike[str], sentences: Iterable[Sentence], featurize: Featurizer) -> list[list[str]]:
    """The Viterbi labels of each sentence under a CRFsuite model."""
    tagger = import_pycrfsuite().Tagger()
    tagger.open(str(model_path))
    try:
        return [list(tagger.tag(featurize(words, pos))) for words, pos, _ in sentences]
    finally:
        tagger.close()


def write_predictions(path: str | os.PathLike[str], sentences: Sequence[Sentence],
                      predicted: Sequence[Sequence[str]]) -> None:
    """``word POS gold predicted`` per token, a blank line after each sentence (conlleval's input)."""
    with atomic_open(path) as out:
        for (words, pos, gold), pred in zip(sentences, predicted):
            out.writelines(f"{w} {p} {g} {y}\n" for w, p, g, y in zip(words, pos, gold, pred))
            out.write("\n")


def write_results(model: str | os.PathLike[str], results: dict[str, Any], log: str) -> None:
    """``MODEL.json`` (the results) and ``MODEL.log`` (CRFsuite's own log) beside the model, atomically."""
    with atomic_open(f"{model}.json") as out:
        json.dump(results, out, indent=2)
    with atomic_open(f"{model}.log") as out:
        out.write(log)


def add_representation_arguments(p: argparse.ArgumentParser) -> None:
    """--brown, --embeddings and how the embeddings are looked up and scaled."""
    p.add_argument("--brown", action="append", default=[], help="Brown clusters, wcluster 'paths' format")
    p.add_argument("--embeddings", action="append", default=[], help="word vectors (word2vec or Turian text)")
    p.add_argument("--embedding-scale", type=float, default=DEFAULT_SIGMA,
                   help=f"standard deviation the embeddings are scaled to (default {DEFAULT_SIGMA})")
    p.add_argument("--embeddings-lowercase", action="store_true",
                   help="look words up lower-cased when not found as written (vectors induced with --lowercase)")
    p.add_argument("--embeddings-normalize-numbers", action="store_true",
                   help="look numbers up by shape, 1980 -> *DDDD* (vectors induced with --normalize-numbers)")


def representation_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The fields of :class:`RepresentationSettings` from the flags :func:`add_representation_arguments` adds."""
    return {"brown": tuple(args.brown), "embeddings": tuple(args.embeddings), "embedding_scale": args.embedding_scale,
            "embeddings_lowercase": args.embeddings_lowercase,
            "embeddings_normalize_numbers": args.embeddings_normalize_numbers}


def add_output_arguments(p: argparse.ArgumentParser, model: str, predictions: str) -> None:
    """--model and --predictions (where they are written, as ``model`` and ``predictions`` say) and -v."""
    p.add_argument("--model", required=True, help=f"where to write {model}")
    p.add_argument("--predictions", required=True, help=f"where to write {predictions}")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def run_main(name: str, p: argparse.ArgumentParser, argv: Sequence[str] | None,
             work: Callable[[argparse.Namespace], dict[str, Any]]) -> int:
    """Parse ``argv``, log, and print ``work(args)``'s results as JSON (exit 0), or its error as one line
    ``NAME: error: ...`` (exit 2)."""
    args = p.parse_args(argv)
    setup_logging(args.verbose)
    try:
        results = work(args)
    except (SeqlabError, FeatureFileError) as err:
        print(f"{name}: error: {err}", file=sys.stderr)
        return 2
    json.dump(results, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
