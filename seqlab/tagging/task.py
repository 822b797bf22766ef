"""Sequence tagging as a task for the one trainer: CoNLL splits, vocabularies, token features, span F1.

Implements :class:`seqlab.core.task.Task` for every tagger (BiLSTM-CRF, softmax, windowed I-T-W-O).
A run directory gets, besides the trainer's files, ``vocabs.json`` and ``features.json`` (the state of
token features fitted on the training split), and ``dev/test.predictions.txt`` (token gold pred).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterator

import torch
from torch import nn

from seqlab.core import rundir
from seqlab.text.learned import save_adaptations
from seqlab.core.config import EmbeddingsConfig
from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.core.task import BatchLoss, Score
from seqlab.data.pretrained import word_vocabulary
from seqlab.data.batching import Batch, Encoded, encode, iterate
from seqlab.data.dataset import Split, read_splits
from seqlab.data.labelling import Labelling
from seqlab.data.vocab import UNK, Vocab, char_vocab, label_vocab, load_vocabs, save_vocabs
from seqlab.models.tagger import Tagger
from seqlab.modules.transformer import recorded_encoder
from seqlab.tagging.build import build_tagger, parameter_groups
from seqlab.tagging.calibration import Outcomes, fit_temperature
from seqlab.tagging.calibration import summary as calibration_summary
from seqlab.tagging.config import Config
from seqlab.tagging.evaluate import evaluate_split
from seqlab.tagging.features import TokenFeatures, encode_options
from seqlab.tagging.parts import load_token_features
from seqlab.tagging.predict import Predictor
from seqlab.tagging.teacher import SoftTargets, check_teacher_types, draw, mixed_batches, read_teacher

log = logging.getLogger("seqlab.train")


def build_vocabs(config: Config, splits: dict[str, Split],
                 teacher: Split | None = None) -> tuple[dict[str, Vocab], torch.Tensor | None]:
    """Word, character and label vocabularies, and the initial word-embedding matrix
    (:func:`seqlab.data.pretrained.word_vocabulary`'s rule; no labels of dev or test are used). The words and
    characters of ``teacher``'s sentences (teacher-labelled training text) count as training text; the labels
    are the gold training split's."""
    emb = config.model.embeddings or EmbeddingsConfig()  # null: the vocabulary still indexes the words
    train = splits["train"]
    training = train.tokens + (teacher.tokens if teacher is not None else [])
    every = [*splits.values(), *([teacher] if teacher is not None else [])]
    words, matrix = word_vocabulary(emb, training, (s for split in every for s in split.tokens), config.train.seed)
    labelling = config.data.labelling
    classes = sorted(labelling.classes(t for s in train.tags for t in s))
    if config.data.limit:
        drop_unseen(splits, set(classes), labelling)
    vocabs: dict[str, Vocab] = {
        "words": words,
        "chars": char_vocab(w for s in training for w in s),
        "tags": label_vocab(labelling.label_set(classes)),
    }
    check_classes(splits, classes, labelling)
    return vocabs, matrix if config.model.embeddings else None


def drop_unseen(splits: dict[str, Split], classes: set[str], labelling: Labelling) -> None:
    """A smoke run (``data.limit``): leave out of dev and test the sentences whose types (or labels) the limited
    training split never shows, with a warning, instead of refusing them as a full run does."""
    for name, split in splits.items():
        keep = [i for i, labels in enumerate(split.tags) if labelling.classes(labels) <= classes]
        if name == "train" or len(keep) == len(split.tags):
            continue
        unseen = sorted(set().union(*(labelling.classes(labels) for labels in split.tags)) - classes)
        log.warning("data.limit: %d of the %d %s sentences left out: they hold %s, which the %d training sentences "
                    "never show", len(split.tags) - len(keep), len(split.tags), name, ", ".join(unseen),
                    len(splits["train"].tags))
        splits[name] = split.subset(keep)


def check_classes(splits: dict[str, Split], classes: list[str], labelling: Labelling) -> None:
    """Refuse a dev or test split with an entity type (or a token label) that training never shows: the model
    cannot predict it, and encoding its labels would fail without naming the file."""
    what = labelling.label_word
    for name, split in splits.items():
        if name == "train":
            continue
        for number, labels in enumerate(split.tags, start=1):
            unseen = sorted(labelling.classes(labels) - set(classes))
            if unseen:
                shown = ", ".join(classes[:40]) + (", ..." if len(classes) > 40 else "") or f"no {what}s"
                raise SeqlabError(f"data.{name}: {split.path}, sentence {number}: {what} {unseen[0]!r} never "
                                  f"occurs in the training data ({splits['train'].path}: {shown})")


class TaggingTask:
    """A tagger's data, vocabularies, token features and model during training."""

    def __init__(self, config: Config, run_dir: Path | None, device: torch.device) -> None:
        self.config, self.device = config, device
        self.labelling = config.data.labelling
        self.measure = self.labelling.measure  # F1 for spans, accuracy for token labels
        if config.data.limit:
            log.warning("data.limit %d: a smoke run on the first %d sentences of each file; its scores (an F1 of "
                        "0.00 after a few epochs is usual) say nothing of what the config reaches on all the data",
                        config.data.limit, config.data.limit)
        self.splits = read_splits(config.data)
        self.teacher = read_teacher(config.train.teacher, self.labelling, (
            sentence for name, split in self.splits.items() if name != "train" for sentence in split.tokens)
        ) if config.train.teacher else None
        pool = self.teacher.split if self.teacher is not None else None
        self.encoder_record = None  # the transformer a resumed run was trained with
        if run_dir is not None:  # a resumed run: its own vocabularies; its weights come from the checkpoint
            self.vocabs, self.matrix = load_vocabs(run_dir / rundir.VOCABS), None
            self.encoder_record = recorded_encoder(run_dir)
        else:
            self.vocabs, self.matrix = build_vocabs(config, self.splits, pool)
        state = rundir.load_feature_state(run_dir) if run_dir is not None else None
        evaluation = {f"data.{n}": s.path for n, s in self.splits.items() if n != "train"}
        self.features: TokenFeatures | None = load_token_features(
            config.model.features, train=self.splits["train"], state=state, evaluation_files=evaluation)
        if self.teacher is not None:
            self._check_teacher()
        self.model: Tagger | None = None
        self.encoded: dict[str, Encoded] = {}
        self.singletons: torch.Tensor | None = None
        self._label_ids: torch.Tensor | None = None  # the student's label id of each soft-target label

    def _check_teacher(self) -> None:
        """Refuse teacher data the model cannot train on: a type the labels lack, or a model reading data columns
        (raw text has none)."""
        check_teacher_types(self.teacher, self.vocabs["tags"].itos, self.labelling, smoke=bool(self.config.data.limit))
        if self.features is not None and self.features.columns:
            raise ConfigError(f"train.teacher: the model reads the data column(s) {list(self.features.columns)} "
                              "(model.features), which teacher-labelled raw text does not have")

    def build_model(self, *, progress: bool = True) -> nn.Module:
        self.model = build_tagger(self.config, self.vocabs, token_features=self.features,
                                  pretrained=self.matrix, encoder_record=self.encoder_record).to(self.device)
        self.matrix = None
        every = [*self.splits.values(), *([self.teacher.split] if self.teacher is not None else [])]
        self.encoded = {s.name: encode(s.tokens, self.vocabs, tags=s.tags, **encode_options(self.features, s.columns))
                        for s in every}
        self.singletons = self._singletons()
        contextual = self.model.embedder.contextual
        if contextual is not None and not contextual.fine_tune:
            sentences = (s for split in every for s in split.tokens)
            stats = contextual.precompute(sentences, progress=progress)
            log.info("frozen transformer vectors of %d sentences cached in %.1f s (%.0f MB)", stats["sentences"],
                     stats["seconds"], stats["megabytes"])
        return self.model

    def parameter_groups(self) -> list[Any]:
        return parameter_groups(self.model, self.config.train, self.config.model.transformer)

    def save_run_files(self, run_dir: Path) -> None:
        save_vocabs(run_dir / rundir.VOCABS, self.vocabs)
        rundir.save_feature_state(run_dir, self.features.state if self.features else {})
        save_adaptations(self.config.data, run_dir)
        if self.model.embedder.contextual is not None:
            rundir.save_encoder_record(run_dir, self.model.embedder.contextual.record.to_dict())

    def split_sizes(self) -> dict[str, int]:
        """Sentences per split; with teacher data, ``train`` is an epoch's sentences (the gold ones and the
        teacher's drawn for it) and ``teacher`` how many of them the teacher labelled."""
        sizes = {name: len(self.splits[name].tokens) for name in ("train", "dev", "test") if name in self.splits}
        if self.teacher is not None:
            sizes["teacher"] = self.teacher.per_epoch(sizes["train"])
            sizes["train"] += sizes["teacher"]
        return sizes

    def training_record(self) -> dict[str, Any]:
        """``{"teacher": ...}``, what the teacher data was (:meth:`TeacherData.record`), for a run with one."""
        if self.teacher is None:
            return {}
        return {"teacher": self.teacher.record(len(self.splits["train"].tokens))}

    # ------------------------------------------------------------ training

    def _singletons(self) -> torch.Tensor | None:
        """Word ids seen once in training, for singleton-to-<unk> replacement (shape: (V,) bool)."""
        emb = self.config.model.embeddings
        if emb is None or emb.singleton_unk <= 0:
            return None
        data = self.encoded["train"]
        counts = torch.bincount(data.words[data.types > 0], minlength=len(self.vocabs["words"]))
        return (counts == 1).to(self.device)

    def training_batches(self, generator: torch.Generator, shard: tuple[int, int] = (0, 1)) -> Iterator[Batch]:
        t = self.config.train
        if self.teacher is None:
            batches = iterate(self.encoded["train"], t.batch_size, shuffle=True, generator=generator,
                              bucket_factor=t.bucket_factor, shard=shard)
        else:  # every gold sentence, and teacher sentences drawn afresh
            pool = self.encoded["teacher"]
            drawn = draw(len(pool), self.teacher.per_epoch(len(self.encoded["train"])), generator)
            batches = mixed_batches(self.encoded["train"], pool, drawn, t.batch_size, bucket_factor=t.bucket_factor,
                                    generator=generator, shard=shard, soft=self._soft_targets())
        for batch in batches:
            yield batch.to(self.device)

    def _soft_targets(self) -> tuple[SoftTargets, torch.Tensor] | None:
        """The pool's distributions and the student's label id of each of their labels (-1: one it lacks, left
        out with a warning), for ``train.teacher.loss: soft``; None for ``hard``."""
        if self.teacher is None or self.teacher.targets is None:
            return None
        if self._label_ids is None:
            targets, tags = self.teacher.targets, self.vocabs["tags"]
            known = set(tags.itos)
            missing = [label for label in targets.labels if label not in known]
            if missing:
                log.warning("train.teacher: the teacher's distributions name %s, which the student's labels lack; "
                            "their probability is left out", ", ".join(missing))
            self._label_ids = torch.tensor([tags.index(label) if label in known else -1 for label in targets.labels],
                                           dtype=torch.long)
        return self.teacher.targets, self._label_ids

    def drop_singletons(self, words: torch.Tensor) -> torch.Tensor:
        """Lample et al. 2016 §4: each training singleton is read as <unk> with probability ``singleton_unk``."""
        if self.singletons is None:
            return words
        p = self.config.model.embeddings.singleton_unk
        drop = self.singletons[words] & (torch.rand(words.shape, device=words.device) < p)  # shape: (B, T)
        return words.masked_fill(drop, self.vocabs["words"].index(UNK))

    def loss(self, batch: Batch) -> BatchLoss:
        batch.words = self.drop_singletons(batch.words)
        return BatchLoss(self.model.loss(batch), int(batch.indices.shape[0]), int(batch.mask.sum()))

    def evaluate(self, model: nn.Module, split: str, out_dir: Path | None = None) -> Score:
        predictions = out_dir / f"{split}.predictions.txt" if out_dir is not None else None
        predictor = Predictor(model, self.vocabs["tags"], self.labelling, device=self.device)
        result = evaluate_split(predictor, self.encoded[split], self.splits[split], labelling=self.labelling,
                                batch_size=self.config.train.eval_batch_size, predictions=predictions)
        return Score(result.score, result.to_dict(), result.report_text)


    def calibrate(self, model: nn.Module, run_dir: Path) -> dict[str, Any] | None:
        """Fit the confidences' temperature on dev (:mod:`seqlab.tagging.calibration`) and write it to the run's
        calibration.json, which loading reads; None without a dev split."""
        if "dev" not in self.splits:
            return None
        predictor = Predictor(model, self.vocabs["tags"], self.labelling, device=self.device)
        outcomes = Outcomes(predictor, self.encoded["dev"], self.splits["dev"], self.labelling,
                            batch_size=self.config.train.eval_batch_size)
        temperature = fit_temperature(outcomes)
        record = calibration_summary(outcomes.reliability(1.0), outcomes.reliability(temperature),
                                     str(self.config.data.dev))
        rundir.save_json(run_dir, rundir.CALIBRATION, record)
        return record


def prepare(config: Config, run_dir: Path | None, device: torch.device) -> TaggingTask:
    """The tagging task of ``config`` (checking LS artefacts first, before any vectors are read)."""
    from seqlab.tagging.ls_features import require_ls_artefacts

    require_ls_artefacts(config.model.features)
    return TaggingTask(config, run_dir, device)
