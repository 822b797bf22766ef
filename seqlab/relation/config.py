"""Relation-classification configs: YAML with a top-level ``task: relation`` key, loaded strictly.

Same rules as the tagger's :mod:`seqlab.tagging.config` (both are read by :mod:`seqlab.core.strict`): frozen dataclasses,
unknown keys and wrong types are errors naming the key, ``--set a.b=c`` overrides. The defaults
are the hyperparameters of Lee, Seo & Choi (2019) §4 where our data allows them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from seqlab.core.config import EmbeddingsConfig, TrainSettings, TransformerConfig, check_fine_tune
from seqlab.core.errors import ConfigError
from seqlab.core.strict import MAX_COUNT, MAX_SIZE, choice, count, dropout_rate, load_strict, seed, size
from seqlab.data.relations import FORMATS

TASK = "relation"


@dataclass(frozen=True)
class RelationDataConfig:
    """SemEval-2010 Task 8 files, relation JSON lines or SpERT JSON (:mod:`seqlab.data.relations`); dev is the
    ``dev`` file, or ``dev_size`` training sentences sampled with ``dev_seed``.

    ``format``: ``semeval``, ``jsonl``, ``spert`` (every ordered entity pair of a sentence, the negative label
    ``no_relation``: :mod:`seqlab.data.formats.spert`), or ``auto`` (``jsonl`` for a ``.jsonl``/``.json`` file
    or one whose first character is ``{``). SemEval files are scored by the official measure; JSON lines by macro-F1 over their own
    labels, leaving out ``negative_label`` (``Other``, ``no_relation``; null: none) when it is given
    (:mod:`seqlab.relation.label_score`).
    """

    train: str
    test: str | None = None
    dev: str | None = None  # a dev file (CoNLL04's); null: dev_size training sentences are held out
    dev_size: int = 800
    dev_seed: int = 1  # fixed apart from train.seed, so every seed selects on the same dev split
    limit: int = 0  # > 0: keep only the first `limit` sentences of each of train, dev and test (a smoke run)
    format: str = "auto"  # semeval, jsonl, spert, or auto: by extension and first character
    negative_label: str | None = None  # JSON lines: the "no relation" label, left out of the macro-F1

    def __post_init__(self) -> None:
        choice("data.format", self.format, FORMATS)
        if self.negative_label is not None and not self.negative_label.strip():
            raise ConfigError("data.negative_label: expected a label (such as Other) or null, got an empty string")
        count("data.dev_size", self.dev_size)
        seed("data.dev_seed", self.dev_seed)
        if not 0 <= self.limit <= MAX_COUNT:
            raise ConfigError(f"data.limit: expected a number of sentences >= 0 (0: all) and at most {MAX_COUNT}, "
                              f"got {self.limit}")


@dataclass(frozen=True)
class RelationModelConfig:
    """Entity-aware attention BiLSTM with latent entity typing (Lee et al. 2019 §3, hyperparameters §4).

    ``self_attention: false`` drops the multi-head self-attention (the BiLSTM reads the word
    embeddings); ``latent_types: 0`` drops LET (the entity features are the BiLSTM states alone).
    ``entity_markers: true`` keeps the ``<e1>``/``</e1>``/``<e2>``/``</e2>`` tags as input tokens
    (as the paper's released code does; learned embeddings), see :func:`seqlab.data.semeval.with_markers`;
    ``typed_markers: true`` makes them name the entities' types (``<e1:Peop>``), for data that gives types.
    ``transformer``: a pretrained transformer's contextual vectors, concatenated with the word embeddings
    (:class:`seqlab.core.config.TransformerConfig`); the entity tags reach it as plain text.
    """

    embeddings: EmbeddingsConfig = field(default_factory=lambda: EmbeddingsConfig(min_count=1))
    self_attention: bool = True
    heads: int = 4
    hidden: int = 300  # BiLSTM size per direction
    position_dim: int = 50
    max_length: int = 100  # L: relative positions are clipped to ±(L-1), a table of 2L-1 offsets
    attention_dim: int = 50
    latent_types: int = 3  # K; 0 switches LET off
    dropout_embedding: float = 0.3
    dropout_lstm: float = 0.3
    dropout_attention: float = 0.5
    entity_markers: bool = False
    typed_markers: bool = False  # the tags name the entities' types: <e1:Peop> (SpERT data; an extraction tagger's)
    negative_weight: float = 1.0  # weight of data.negative_label's examples in the loss (most entity pairs have none)
    transformer: TransformerConfig | None = None

    def __post_init__(self) -> None:
        for key in ("heads", "hidden", "position_dim", "max_length", "attention_dim"):
            size(f"model.{key}", getattr(self, key))
        if not 0 <= self.latent_types <= MAX_SIZE:
            raise ConfigError(f"model.latent_types: expected 0 (LET off) or a positive K up to {MAX_SIZE}, "
                              f"got {self.latent_types}")
        for key in ("dropout_embedding", "dropout_lstm", "dropout_attention"):
            dropout_rate(f"model.{key}", getattr(self, key))
        if self.typed_markers and not self.entity_markers:
            raise ConfigError("model.typed_markers: typed tags are entity markers; set model.entity_markers: true too")
        if not 0.0 < self.negative_weight <= 1.0:
            raise ConfigError(f"model.negative_weight: expected a weight in (0, 1] for the negative label's examples, "
                              f"got {self.negative_weight}")


@dataclass(frozen=True)
class RelationTrainConfig(TrainSettings):
    """AdaDelta (lr 1.0) with L2 regularisation as in Lee et al. (2019) §4, no learning-rate decay, no
    clipping; early stopping on dev macro-F1. The fields are :class:`seqlab.core.config.TrainSettings`'s."""

    optimizer: str = "adadelta"
    lr: float = 1.0
    momentum: float = 0.0
    lr_decay: float = 1.0
    weight_decay: float = 1e-5
    batch_size: int = 20
    clip: float = 0.0
    epochs: int = 30
    patience: int = 6
    device: str = "cpu"
    eval_batch_size: int = 200
    threads: int = 1


@dataclass(frozen=True)
class RelationConfig:
    """A whole relation-classification experiment."""

    data: RelationDataConfig
    task: str = TASK
    model: RelationModelConfig = field(default_factory=RelationModelConfig)
    train: RelationTrainConfig = field(default_factory=RelationTrainConfig)

    def __post_init__(self) -> None:
        choice("task", self.task, (TASK,))
        check_fine_tune(self.model.transformer, self.train)
        if self.model.negative_weight != 1.0 and self.data.negative_label is None:
            raise ConfigError("model.negative_weight: weights the examples of data.negative_label, which is null; "
                              "name the negative label (no_relation) or leave the weight at 1.0")


def load_relation_config(path: str | Path, overrides: Sequence[str] = ()) -> RelationConfig:
    """Read a relation config strictly (see :mod:`seqlab.core.strict`)."""
    return load_strict(path, overrides, root=RelationConfig)
