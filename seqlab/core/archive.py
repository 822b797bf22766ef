"""A run directory: what a training run leaves behind and how a model is loaded back.

Layout::

    config.yaml      the fully resolved config
    vocabs.json      word, character and label vocabularies
    model.pt         the best weights (a state dict only)
    checkpoint.pt    the last epoch's weights, optimizer, RNG and loop state, for --resume
    metrics.json     dev/test scores and the per-epoch history
    features.json    the state of token features fitted on the training split (orthographic, pos, label_freq)
    train.log        the log

Every file is written atomically. Weights load with ``torch.load(weights_only=True)``,
so a model file can never run code.
"""
from __future__ import annotations

import json
import logging
import pickle
import re
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from seqlab.core.atomic import atomic_open, atomic_torch_save
from seqlab.data.vocab import Vocab, load_vocabs as _load_vocabs, save_vocabs as _save_vocabs
from seqlab.core.errors import SeqlabError

CONFIG, VOCABS, WEIGHTS, CHECKPOINT, METRICS, LOG = (
    "config.yaml", "vocabs.json", "model.pt", "checkpoint.pt", "metrics.json", "train.log",
)
FEATURES = "features.json"
_UNSUPPORTED = re.compile(r"Unsupported global: GLOBAL ([\w.]+)")  # how torch names what it refused
_UNPICKLER = re.compile(r"WeightsUnpickler error:\s*(.+?)\s*(?:\n|$)")


def has_checkpoint(run_dir: Path) -> bool:
    return (Path(run_dir) / CHECKPOINT).is_file()


def check_output(run_dir: Path, resume: bool) -> None:
    """``--resume`` needs a checkpoint in ``run_dir``; a new run must not overwrite one."""
    if resume and not has_checkpoint(run_dir):
        raise SeqlabError(f"--resume {run_dir}: no checkpoint.pt there to resume from")
    if not resume and has_checkpoint(run_dir):
        raise SeqlabError(f"{run_dir} already holds a run; use --resume {run_dir} to continue it, or another --output")


def save_config(run_dir: Path, text: str) -> None:
    with atomic_open(Path(run_dir) / CONFIG) as out:
        out.write(text)


def save_vocabs(run_dir: Path, vocabs: dict[str, Vocab]) -> None:
    _save_vocabs(Path(run_dir) / VOCABS, vocabs)


def load_vocabs(run_dir: Path) -> dict[str, Vocab]:
    return _load_vocabs(Path(run_dir) / VOCABS)


def save_feature_state(run_dir: Path, state: dict[str, Any]) -> None:
    with atomic_open(Path(run_dir) / FEATURES) as out:
        json.dump(state, out)


def load_feature_state(run_dir: Path) -> dict[str, Any] | None:
    """The fitted token features' state, or None for a run made before features.json existed."""
    path = Path(run_dir) / FEATURES
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise SeqlabError(f"{path}:{err.lineno}: not valid JSON: {err.msg}") from None


def save_weights(run_dir: Path, model: torch.nn.Module) -> None:
    atomic_torch_save(model.state_dict(), Path(run_dir) / WEIGHTS)


def _load(path: Path, device: torch.device | str) -> Any:
    if not path.is_file():
        raise SeqlabError(f"{path}: no such file (is {path.parent} a seqlab run directory?)")
    try:
        return torch.load(path, map_location=device, weights_only=True)
    except Exception as err:
        raise SeqlabError(f"{path}: {_why_not_loaded(err)}") from None


def _why_not_loaded(err: Exception) -> str:
    """torch.load's refusal in one line, without its advice to load the file unsafely."""
    text = str(err)
    if not (isinstance(err, pickle.UnpicklingError) and "Weights only load failed" in text):
        return f"cannot load weights safely: {text}"  # e.g. a truncated zip archive
    found = _UNSUPPORTED.search(text)
    if found:
        return (f"refused: a seqlab model file holds only tensors and plain values, and this one holds "
                f"{found.group(1)}; it was not loaded, since loading it could run code")
    detail = _UNPICKLER.search(text)
    return f"cannot load weights: not a seqlab model file, or a corrupt one ({detail.group(1) if detail else text})"


def load_weights(run_dir: Path, device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    return _load(Path(run_dir) / WEIGHTS, device)


def save_checkpoint(run_dir: Path, state: dict[str, Any]) -> None:
    atomic_torch_save(state, Path(run_dir) / CHECKPOINT)


def load_checkpoint(run_dir: Path, device: torch.device | str = "cpu") -> dict[str, Any]:
    ckpt = _load(Path(run_dir) / CHECKPOINT, device)
    for key in ("generator", "torch_rng"):  # RNG states must stay on the CPU
        ckpt[key] = ckpt[key].cpu()
    return ckpt


def save_training_state(run_dir: Path, parts: Mapping[str, Any], generator: torch.Generator,
                        state: dict[str, Any]) -> None:
    """Checkpoint what ``--resume`` needs: each part's ``state_dict`` (model, optimizer, scheduler, ...;
    ``None`` parts are left out), both random generators, and the loop's ``state`` (as JSON, so the file
    holds only tensors and plain values and loads with ``weights_only=True``)."""
    save_checkpoint(run_dir, {**{name: part.state_dict() for name, part in parts.items() if part is not None},
                              "generator": generator.get_state(), "torch_rng": torch.get_rng_state(),
                              "state": json.dumps(state)})


def load_training_state(run_dir: Path, parts: Mapping[str, Any], generator: torch.Generator,
                        device: torch.device | str = "cpu") -> dict[str, Any]:
    """Restore what :func:`save_training_state` wrote into ``parts`` and the generators; return the loop state."""
    ckpt = load_checkpoint(run_dir, device)
    for name, part in parts.items():
        if part is not None:
            part.load_state_dict(ckpt[name])
    generator.set_state(ckpt["generator"])
    torch.set_rng_state(ckpt["torch_rng"])
    return json.loads(ckpt["state"])


def save_metrics(run_dir: Path, metrics: dict[str, Any]) -> None:
    with atomic_open(Path(run_dir) / METRICS) as out:
        json.dump(metrics, out, indent=2)


@contextmanager
def run_log(run_dir: Path) -> Iterator[None]:
    """Send seqlab's log to ``train.log`` in the run directory (appending on resume) while inside."""
    root = logging.getLogger("seqlab")
    handler = logging.FileHandler(Path(run_dir) / LOG, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()
