"""The task table: a config's top-level ``task`` key (``tagging`` when absent) picks its schema, its
trainer task and its loader. ``seqlab train``, ``seqlab.load`` and the CLI dispatch through it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from seqlab.core import archive
from seqlab.core.errors import SeqlabError
from seqlab.core.installed import DEFAULT_MODEL, MODELS, model_path  # noqa: F401  (public here too)
from seqlab.core.registry import Registry
from seqlab.core.strict import apply_override, from_tree, read_mapping
from seqlab.core.trainer import Prepare
from seqlab.core.trainer import train as train_task

DEFAULT_TASK = "tagging"


@dataclass(frozen=True)
class TaskSpec:
    """One task: its config dataclass, how the trainer prepares it, and how a trained model is loaded."""

    config: type
    prepare: Prepare
    load: Callable[[Path, "torch.device | str"], Any]


def _tagging() -> TaskSpec:
    from seqlab.tagging.api import SequenceTagger
    from seqlab.tagging.config import Config
    from seqlab.tagging.task import prepare

    return TaskSpec(Config, prepare, SequenceTagger.load)


def _relation() -> TaskSpec:
    from seqlab.relation.api import RelationModel
    from seqlab.relation.config import RelationConfig
    from seqlab.relation.task import prepare

    return TaskSpec(RelationConfig, prepare, RelationModel.load)


TASKS: Registry[Callable[[], TaskSpec]] = Registry("task")
TASKS.add("tagging", _tagging)
TASKS.add("relation", _relation)


def task_of(tree: dict[str, Any], source: str | Path) -> TaskSpec:
    """The spec of a config tree's ``task`` (a clear error naming ``source`` for an unknown one)."""
    name = tree.get("task", DEFAULT_TASK)
    if not isinstance(name, str):
        raise SeqlabError(f"{source}: task: expected one of {list(TASKS.names())}, got {name!r}")
    return TASKS.get(name, f"{source}: task")()


def read_config(path: str | Path, overrides: Sequence[str] = ()) -> Any:
    """Read any seqlab config once: its ``task`` picks the schema; ``a.b=c`` overrides are checked against it."""
    tree = read_mapping(path)
    spec = task_of(tree, path)
    for item in overrides:
        apply_override(tree, item, root=spec.config)
    return from_tree(spec.config, tree, prefix="")


def train(config: Any, out_dir: str | Path, *, resume: bool = False, progress: bool = True) -> dict[str, Any]:
    """Train ``config`` (any task's) into ``out_dir``; with ``resume``, continue the run already there.
    Returns the run's metrics (also written to ``out_dir/metrics.json``)."""
    return train_task(TASKS.get(config.task, "task")().prepare, config, out_dir, resume=resume, progress=progress)


#: Where a tagger's emissions are computed: torch (the trained modules) or onnxruntime (``seqlab export``).
BACKENDS = ("torch", "onnx")


def load(path: str | Path | None = None, device: torch.device | str = "auto", backend: str = "torch") -> Any:
    """A trained model of any task: a run directory, a ``.seqlab`` file, an installed model's short name or
    a folder that ``seqlab export`` wrote (see :func:`seqlab.load`); ``backend="onnx"`` (an export folder
    only) computes a tagger's emissions with onnxruntime."""
    from seqlab.core.package import unpack
    from seqlab.tagging.onnx_export import MANIFEST, PACKAGE

    if backend not in BACKENDS:
        raise SeqlabError(f"backend: expected one of {list(BACKENDS)}, got {backend!r}")
    run_dir = model_path(path)
    if (run_dir / MANIFEST).is_file():  # an export folder: its graph, or its model file for torch
        if backend == "onnx":
            from seqlab.tagging.onnx_runtime import load_onnx

            return load_onnx(run_dir, device)
        run_dir = run_dir / PACKAGE
    elif backend == "onnx":
        raise SeqlabError(f"{run_dir}: no ONNX graph here; write one with `seqlab export {path or DEFAULT_MODEL} "
                          "--format onnx --out DIR` and load DIR")
    if run_dir.is_file():
        run_dir = unpack(run_dir)
    if not (run_dir / archive.CONFIG).is_file():
        raise SeqlabError(f"{run_dir}: not a seqlab model (no {archive.CONFIG}); pass the --output folder of a "
                          f"training run, a .seqlab file, or one of the installed models {sorted(MODELS)}")
    spec = task_of(read_mapping(run_dir / archive.CONFIG), run_dir / archive.CONFIG)
    return spec.load(run_dir, device)
