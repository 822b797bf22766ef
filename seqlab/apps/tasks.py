"""The task table: a config's top-level ``task`` key (``tagging`` when absent) picks its schema, its
trainer task and its loader. ``seqlab train``, ``seqlab.load`` (:mod:`seqlab.apps.loader`) and the CLI
dispatch through it."""
from __future__ import annotations


from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from seqlab.core.errors import SeqlabError
from seqlab.core.registry import Registry
from seqlab.core.strict import apply_override, from_tree, read_config_tree
from seqlab.core.trainer import Prepare
from seqlab.core.trainer import train as train_task

DEFAULT_TASK = "tagging"


@dataclass(frozen=True)
class TaskSpec:
    """One task: its config dataclass, how the trainer prepares it, how a trained model is loaded, and the words
    a run knows, which ``seqlab package`` cuts its feature tables down to (None: the tables are copied whole)."""

    config: type
    prepare: Prepare | None  # None: the task trains by its own `train`
    load: Callable[[Path, "torch.device | str"], Any]
    words: Callable[[Path], set[str]] | None = None
    train: Callable[..., dict[str, Any]] | None = None  # a task that trains otherwise than one trainer run


def _tagging() -> TaskSpec:
    from seqlab.tagging.api import SequenceTagger
    from seqlab.tagging.config import Config
    from seqlab.tagging.prune import run_words
    from seqlab.tagging.task import prepare

    return TaskSpec(Config, prepare, SequenceTagger.load, run_words)


def _relation() -> TaskSpec:
    from seqlab.relation.api import RelationModel
    from seqlab.relation.config import RelationConfig
    from seqlab.relation.task import prepare

    return TaskSpec(RelationConfig, prepare, RelationModel.load)


def _extraction() -> TaskSpec:
    from seqlab.extraction.config import ExtractionConfig
    from seqlab.extraction.model import ExtractionModel
    from seqlab.extraction.train import train as train_extraction

    return TaskSpec(ExtractionConfig, None, ExtractionModel.load, train=train_extraction)


TASKS: Registry[Callable[[], TaskSpec]] = Registry("task")
TASKS.add("tagging", _tagging)
TASKS.add("relation", _relation)
TASKS.add("extraction", _extraction)


def task_of(tree: dict[str, Any], source: str | Path) -> TaskSpec:
    """The spec of a config tree's ``task`` (a clear error naming ``source`` for an unknown one)."""
    name = tree.get("task", DEFAULT_TASK)
    if not isinstance(name, str):
        raise SeqlabError(f"{source}: task: expected one of {list(TASKS.names())}, got {name!r}")
    return TASKS.get(name, f"{source}: task")()


def read_config(path: str | Path, overrides: Sequence[str] = ()) -> Any:
    """Read any seqlab config once (its ``base:`` chain resolved): its ``task`` picks the schema; ``a.b=c``
    overrides are checked against it."""
    tree = read_config_tree(path, lambda merged: task_of(merged, path).config)
    spec = task_of(tree, path)
    for item in overrides:
        apply_override(tree, item, root=spec.config)
    return from_tree(spec.config, tree, prefix="")


def train(config: Any, out_dir: str | Path, *, resume: bool = False, progress: bool = True) -> dict[str, Any]:
    """Train ``config`` (any task's) into ``out_dir``; with ``resume``, continue the run already there.
    Returns the run's metrics (also written to ``out_dir/metrics.json``)."""
    spec = TASKS.get(config.task, "task")()
    if spec.train is not None:
        return spec.train(config, out_dir, resume=resume, progress=progress)
    return train_task(spec.prepare, config, out_dir, resume=resume, progress=progress)
