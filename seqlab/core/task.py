"""The task interface: what the one trainer (:mod:`seqlab.core.trainer`) needs from a task.

A task (sequence tagging, relation classification) reads its data and builds its vocabularies,
builds its model, gives the loss of a training batch, and scores a split with its field's measure.
Everything else — epochs, early stopping, atomic checkpoints, resume, progress, the run directory —
is the trainer's, and is the same for every task.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Protocol

import torch
from torch import nn


@dataclass
class Score:
    """A split scored with the task's measure: the number model selection reads (percent), the full
    report as data (for ``metrics.json``) and as the text the field's scorer prints."""

    value: float
    details: dict[str, Any] = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True)
class BatchLoss:
    """The loss of one training batch, with how many sentences and tokens it covered."""

    loss: torch.Tensor
    sentences: int
    tokens: int


class Task(Protocol):
    """One experiment's data and model, as the trainer drives it.

    Made by the task's ``prepare(config, run_dir, device)``: read the data and build (or, for a resumed
    run, load from ``run_dir``) the vocabularies; the model is built only in :meth:`build_model`, which
    the trainer calls right after seeding torch, so a seed gives the same initial weights.
    """

    config: Any  # the task's frozen config; ``config.train`` is a seqlab.core.config.TrainSettings
    measure: str  # the name of the model-selection score, e.g. "F1" or "macro-F1"

    def build_model(self, *, progress: bool = True) -> nn.Module:
        """Build the model (on the task's device) and keep it: later calls train and score it. ``progress``:
        whether long preparation (a frozen transformer's vectors) may show a progress bar."""

    def parameter_groups(self) -> list[Any]:
        """The trainable parameters (or parameter groups with their own learning rates)."""

    def save_run_files(self, run_dir: Path) -> None:
        """Write what loading the model needs besides config.yaml and the weights (vocabularies, fitted features)."""

    def training_batches(self, generator: torch.Generator, shard: tuple[int, int] = (0, 1)) -> Iterator[Any]:
        """One epoch of shuffled training batches, drawn with ``generator``; with ``shard`` = (rank, ranks),
        this data-parallel rank's part of each step's ``batch_size × ranks`` sentences (every rank draws
        the same steps and builds only its own part)."""

    def loss(self, batch: Any) -> BatchLoss:
        """The training loss of ``batch`` under the current model (in training mode)."""

    def evaluate(self, model: nn.Module, split: str, out_dir: Path | None = None) -> Score:
        """Score ``model`` on ``split`` ("dev" or "test"); with ``out_dir``, also write its predictions there."""

    def split_sizes(self) -> dict[str, int]:
        """Sentences per split, for the log; ``train``: the sentences of one epoch."""

    def training_record(self) -> dict[str, Any]:
        """What ``metrics.json`` records of the training data beyond the splits' sizes (a tagger's teacher-labelled
        sentences); ``{}`` when there is nothing more to say."""

    def calibrate(self, model: nn.Module, run_dir: Path) -> dict[str, Any] | None:
        """Once trained: fit what makes the model's confidences calibrated on dev data and store it in
        ``run_dir``; returns what was stored (None when the task's confidences are not calibrated)."""
