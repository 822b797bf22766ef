"""Relation classification as a task for the one trainer: SemEval-2010 Task 8 with the official macro-F1, or
relation JSON lines with macro-F1 over their own labels (:mod:`seqlab.relation.label_score`).

The dev split is the ``data.dev`` file, or ``data.dev_size`` training sentences sampled with ``data.dev_seed``; the best epoch
is chosen by the macro-F1 on it and never by the test set (Lee et al.'s public code
evaluated on test during training; we do not). The test set is scored once, at the end, with the
selected weights. The run directory gets, besides the trainer's files, ``vocabs.json`` and the
official-format answer files and reports (``dev.answers.txt``, ``test.answers.txt``, ``test.report.txt``).
"""
from __future__ import annotations

import difflib
import logging
from pathlib import Path
from typing import Any, Iterator, Sequence

import torch
from torch import nn

from seqlab.core import rundir
from seqlab.core.atomic import atomic_open
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.core.optim import transformer_groups
from seqlab.modules.transformer import recorded_encoder
from seqlab.core.task import BatchLoss, Score
from seqlab.data.pretrained import word_vocabulary
from seqlab.data.relations import READERS, check_labels, relation_format
from seqlab.data.semeval import LABELS, OTHER, RelationExample, dev_split
from seqlab.data.vocab import Vocab, label_vocab, load_vocabs, save_vocabs
from seqlab.models.relation import RelationBatch, RelationClassifier
from seqlab.relation.build import RelationData, batches, build_model, encode, model_inputs
from seqlab.relation.calibration import RelationOutcomes, calibrate_relations
from seqlab.relation.config import RelationConfig
from seqlab.relation.label_score import relation_scorer
from seqlab.relation.predict import evaluate_examples

log = logging.getLogger(__name__)


def read_data(config: RelationConfig) -> tuple[str, list[RelationExample], list[RelationExample] | None]:
    """(format, the whole training file, the test file or None): the files of ``config``, in one format."""
    d = config.data
    train_path = resolve_data_path(d.train, key="data.train")
    fmt = relation_format(train_path, d.format)
    full = READERS[fmt](train_path)
    if any(e.label is None for e in full):
        raise SeqlabError(f"data.train: {d.train} has sentences without labels")
    return fmt, full, read_other(config, "test", fmt) if d.test else None


def read_other(config: RelationConfig, key: str, fmt: str) -> list[RelationExample]:
    """The examples of ``data.<key>`` (``dev`` or ``test``), which must be in the training file's format."""
    name = getattr(config.data, key)
    path = resolve_data_path(name, key=f"data.{key}")
    if relation_format(path, config.data.format) != fmt:
        raise SeqlabError(f"data.{key}: {name} is a {relation_format(path, config.data.format)} file, but data.train "
                          f"is {fmt}; give both in one format (they are scored with one measure)")
    return READERS[fmt](path)


def read_splits(config: RelationConfig, data: tuple[str, list[RelationExample], list[RelationExample] | None]
                | None = None) -> dict[str, list[RelationExample]]:
    """train / dev (sampled from training) / test examples, as the model reads them (``data``: what
    :func:`read_data` read, else read here)."""
    d = config.data
    fmt, full, test = data or read_data(config)
    if d.dev:  # a dev file: all of train is trained on
        train, dev = full, read_other(config, "dev", fmt)
    else:
        train, dev = dev_split(full, d.dev_size, d.dev_seed)
    splits = {"train": train, "dev": dev}
    if test is not None:
        splits["test"] = test
    if d.limit:  # after the dev split, so a smoke run's dev sentences are the full run's
        splits = {name: examples[:d.limit] for name, examples in splits.items()}
    return {name: model_inputs(examples, config.model) for name, examples in splits.items()}


def relation_labels(config: RelationConfig, fmt: str, train: list[RelationExample]) -> list[str]:
    """The labels the model tells apart: SemEval's 19, or the labels of the whole JSONL training file
    (sorted), which must hold ``data.negative_label`` when one is given."""
    negative = config.data.negative_label
    if fmt == "semeval":
        if negative not in (None, OTHER):
            raise SeqlabError(f"data.negative_label: SemEval-2010 Task 8 files are scored by the official scorer, "
                              f"whose negative label is {OTHER}; got {negative!r}")
        return list(LABELS)
    labels = sorted({e.label for e in train})
    if negative is not None and negative not in labels:
        near = difflib.get_close_matches(negative, labels, n=1)
        raise SeqlabError(f"data.negative_label: {negative!r} is not a label of {config.data.train} "
                          f"({', '.join(labels)}){f'; did you mean {near[0]!r}?' if near else ''}")
    return labels


def build_vocabs(config: RelationConfig, splits: dict[str, list[RelationExample]], labels: Sequence[str] = LABELS
                 ) -> tuple[dict[str, Vocab], torch.Tensor | None]:
    """Word and label vocabularies, and the initial word-embedding matrix, by the taggers' rule
    (:func:`seqlab.data.pretrained.word_vocabulary`); ``labels`` come from the training file alone."""
    words, matrix = word_vocabulary(config.model.embeddings, (e.tokens for e in splits["train"]),
                                    (e.tokens for split in splits.values() for e in split), config.train.seed)
    return {"words": words, "labels": label_vocab(labels)}, matrix


class RelationTask:
    """A relation classifier's data, vocabularies and model during training."""

    measure = "macro-F1"

    def __init__(self, config: RelationConfig, run_dir: Path | None, device: torch.device) -> None:
        self.config, self.device = config, device
        data = read_data(config)
        self.format = data[0]
        self.splits = read_splits(config, data)
        self.encoder_record = None  # the record of the transformer a resumed run was trained with
        if run_dir is not None:
            self.vocabs, self.matrix = load_vocabs(run_dir / rundir.VOCABS), None
            self.encoder_record = recorded_encoder(run_dir)
        else:
            self.vocabs, self.matrix = build_vocabs(config, self.splits, relation_labels(config, *data[:2]))
        if data[2] is not None:
            check_labels(data[2], self.vocabs["labels"].itos, f"data.test: {config.data.test}")
        self.score = relation_scorer(self.format, config.data.negative_label)
        self.model: RelationClassifier | None = None
        self.data: dict[str, RelationData] = {}

    def build_model(self, *, progress: bool = True) -> nn.Module:
        self.model = build_model(self.config, self.vocabs, self.matrix, self.encoder_record).to(self.device)
        self.matrix = None
        self.data = {name: encode(examples, self.vocabs) for name, examples in self.splits.items()}
        contextual = self.model.embedder.contextual
        if contextual is not None and not contextual.fine_tune:
            sentences = (e.tokens for split in self.splits.values() for e in split)
            stats = contextual.precompute(sentences, progress=progress)
            log.info("frozen transformer vectors of %d sentences cached in %.1f s (%.0f MB)", stats["sentences"],
                     stats["seconds"], stats["megabytes"])
        return self.model

    def parameter_groups(self) -> list[Any]:
        return transformer_groups(self.model, self.model.embedder.contextual, self.config.model.transformer)

    def save_run_files(self, run_dir: Path) -> None:
        save_vocabs(run_dir / rundir.VOCABS, self.vocabs)
        if self.model.embedder.contextual is not None:
            rundir.save_encoder_record(run_dir, self.model.embedder.contextual.record.to_dict())

    def split_sizes(self) -> dict[str, int]:
        return {name: len(examples) for name, examples in self.splits.items()}

    def training_record(self) -> dict[str, Any]:
        return {}  # the splits say it all

    def training_batches(self, generator: torch.Generator, shard: tuple[int, int] = (0, 1)) -> Iterator[RelationBatch]:
        t = self.config.train
        for _, batch in batches(self.data["train"], t.batch_size, shuffle=True, generator=generator,
                                bucket_factor=t.bucket_factor, shard=shard):
            yield batch.to(self.device)

    def loss(self, batch: RelationBatch) -> BatchLoss:
        return BatchLoss(self.model.loss(batch), int(batch.words.shape[0]), int(batch.lengths.sum()))

    def evaluate(self, model: nn.Module, split: str, out_dir: Path | None = None) -> Score:
        answers = out_dir / f"{split}.answers.txt" if out_dir is not None else None
        result = evaluate_examples(model, self.data[split], self.vocabs["labels"].itos,
                                   batch_size=self.config.train.eval_batch_size, device=self.device, answers=answers,
                                   score=self.score)
        if out_dir is not None:
            with atomic_open(out_dir / f"{split}.report.txt") as out:
                out.write(result.report)
        return Score(result.score, result.to_dict(), result.report)


    def calibrate(self, model: nn.Module, run_dir: Path) -> dict[str, Any] | None:
        """Fit the confidences' temperature on dev (:mod:`seqlab.relation.calibration`) and write it to the run's
        calibration.json, which loading reads; None without a dev split."""
        if "dev" not in self.data:
            return None
        outcomes = RelationOutcomes(model, self.data["dev"], self.vocabs["labels"].itos,
                                    self.config.data.negative_label, batch_size=self.config.train.eval_batch_size,
                                    device=self.device)
        record = calibrate_relations(outcomes, str(self.config.data.dev or "dev"))
        rundir.save_json(run_dir, rundir.CALIBRATION, record)
        return record


def prepare(config: RelationConfig, run_dir: Path | None, device: torch.device) -> RelationTask:
    """The relation task of ``config``."""
    return RelationTask(config, run_dir, device)
