"""A run directory: what a training run leaves behind and how a model is loaded back.

Layout::

    config.yaml      the fully resolved config
    vocabs.json      word, character and label vocabularies (written and read by seqlab.data.vocab)
    model.pt         the best weights (a state dict only)
    checkpoint.pt    the last epoch's weights, optimizer, RNG and loop state, for --resume
    metrics.json     dev/test scores and the per-epoch history
    features.json    the state of token features fitted on the training split (orthographic, pos, label_freq)
    encoder.json     the pretrained transformer a model reads (its path and weights' sha256), if any
    train.log        the log

Every file is written atomically. Weights load with ``torch.load(weights_only=True)``,
so a model file can never run code.
"""
from __future__ import annotations

import json
import logging
import os
import pickle
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from seqlab.core.atomic import atomic_open, atomic_torch_save
from seqlab.core.errors import SeqlabError
from seqlab.core.json_limits import read_json

from seqlab.core.runfiles import (  # noqa: F401 (the names, re-exported for rundir.X callers)
    CALIBRATION, CARD, CHECKPOINT, CONFIG, ENCODER, FEATURES, LOCK, LOG, METRICS, TEXT, VOCABS, WEIGHTS,
)

_UNSUPPORTED = re.compile(r"Unsupported global: GLOBAL ([\w.]+)")  # how torch names what it refused
_UNSUPPORTED_NEWER = re.compile(r"unsupported GLOBAL ([\w.]+)")  # torch 2.13: "load unsupported GLOBAL posix.system"
_UNPICKLER = re.compile(r"WeightsUnpickler error:\s*(.+?)\s*(?:\n|$)")


def has_checkpoint(run_dir: Path) -> bool:
    return (Path(run_dir) / CHECKPOINT).is_file()


def check_output(run_dir: Path, resume: bool) -> None:
    """``--resume`` needs a checkpoint in ``run_dir``; a new run must not overwrite one; a file is no folder."""
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        flag = "--resume" if resume else "--output"
        raise SeqlabError(f"{flag} {run_dir}: a file, not a run directory; name a new or an existing folder")
    if resume and not has_checkpoint(run_dir):
        raise SeqlabError(f"--resume {run_dir}: no checkpoint.pt there to resume from (no epoch of it ended; "
                          f"start it again: seqlab train CONFIG --output {run_dir})")
    if not resume and has_checkpoint(run_dir):
        raise SeqlabError(f"{run_dir} already holds a run; use --resume {run_dir} to continue it, or another --output")


_HELD: dict[Path, int] = {}  # run directories this process holds the lock of -> nesting depth


@contextmanager
def run_lock(run_dir: Path, what: str = "training") -> Iterator[None]:
    """Hold ``run_dir``'s advisory lock (``flock`` on its ``.lock`` file) while inside; re-entrant in a process.

    Two trainings on one run directory would interleave train.log and leave config.yaml from one run
    beside model.pt from the other, so the second is refused, naming the first one's pid. The lock goes
    with the process: a killed run leaves no stale lock behind. ``what`` names the work in the refusal (a
    teacher's labelling holds its corpus folder so)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    key = Path(run_dir).resolve()
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    fd = os.open(key / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        raise SeqlabError(f"{run_dir} is in use by another seqlab {what} (pid {holder}); wait for it to end "
                          "or stop it, or choose another --output") from None
    except OSError as err:  # a file system without flock (some network mounts): go on unlocked, and say so
        logging.getLogger("seqlab").warning("%s: cannot lock the folder (%s); make sure no other %s uses it",
                                            run_dir, err.strerror, what)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    _HELD[key] = 1
    try:
        yield
    finally:
        del _HELD[key]
        os.close(fd)  # releases the lock


def remove_stale_temp_files(run_dir: Path) -> int:
    """Remove the temporary files that interrupted atomic writes left in ``run_dir`` (``.model.pt.*.tmp``, ...).
    Call it only while holding :func:`run_lock`: then no other writer is at work there. Returns bytes freed."""
    freed = 0
    for path in Path(run_dir).glob(".*.tmp"):
        if path.is_file():
            freed += path.stat().st_size
            path.unlink(missing_ok=True)
    return freed


def save_config(run_dir: Path, text: str) -> None:
    with atomic_open(Path(run_dir) / CONFIG) as out:
        out.write(text)


def save_feature_state(run_dir: Path, state: dict[str, Any]) -> None:
    with atomic_open(Path(run_dir) / FEATURES) as out:
        json.dump(state, out)


def load_feature_state(run_dir: Path) -> dict[str, Any] | None:
    """The fitted token features' state, or None for a run made before features.json existed."""
    return _optional_json(Path(run_dir) / FEATURES)


def save_encoder_record(run_dir: Path, record: dict[str, Any]) -> None:
    save_json(run_dir, ENCODER, record)


def load_encoder_record(run_dir: Path) -> dict[str, Any] | None:
    """The record of the transformer encoder a run was trained with, or None when it reads none."""
    return _optional_json(Path(run_dir) / ENCODER)


def save_json(run_dir: Path, name: str, value: dict[str, Any]) -> None:
    """Write a run directory's JSON member ``name`` (calibration.json, card.json) atomically."""
    with atomic_open(Path(run_dir) / name) as out:
        json.dump(value, out, indent=2)


def load_json(run_dir: Path, name: str) -> dict[str, Any] | None:
    """A run directory's optional JSON member ``name`` as a mapping, or None when the run has none."""
    value = _optional_json(Path(run_dir) / name)
    if value is not None and not isinstance(value, dict):
        raise SeqlabError(f"{Path(run_dir) / name}: expected a JSON object, got {type(value).__name__}")
    return value


def _optional_json(path: Path) -> dict[str, Any] | None:
    """A run directory's JSON member, or None when the run has none; a file that is not JSON, or is nested too
    deep, is a one-line error naming it (:func:`seqlab.core.json_limits.read_json`)."""
    if not path.is_file():
        return None
    return read_json(path)


def save_weights(run_dir: Path, model: torch.nn.Module) -> None:
    atomic_torch_save(model.state_dict(), Path(run_dir) / WEIGHTS)


def _load(path: Path, device: torch.device | str) -> Any:
    if not path.is_file():
        raise SeqlabError(f"{path}: no such file (is {path.parent} a seqlab run directory?)")
    if path.stat().st_size == 0:
        raise SeqlabError(f"{path}: an empty file (0 bytes), not saved weights; a write into it was cut short, "
                          f"or it was copied incompletely")
    try:
        return torch.load(path, map_location=device, weights_only=True)
    except Exception as err:
        raise SeqlabError(f"{path}: {_why_not_loaded(err)}") from None


def _why_not_loaded(err: Exception) -> str:
    """torch.load's refusal in one line, without its advice to load the file unsafely."""
    text = str(err)
    if not (isinstance(err, pickle.UnpicklingError) and "Weights only load failed" in text):
        detail = text.strip().splitlines()[0].split(". ")[0].rstrip(".") if text.strip() else type(err).__name__
        return f"cannot load weights: not a complete seqlab model file ({detail})"  # e.g. a truncated zip archive
    found = _UNSUPPORTED.search(text) or _UNSUPPORTED_NEWER.search(text)
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
            load_state(part, ckpt.get(name), Path(run_dir) / CHECKPOINT, name)
    generator.set_state(ckpt["generator"])
    torch.set_rng_state(ckpt["torch_rng"])
    return json.loads(ckpt["state"])


def load_state(part: Any, state: Any, path: Path, name: str = "model") -> None:
    """``part.load_state_dict(state)``; a state that does not fit (a config.yaml from another run, a file
    from another seqlab version) is a one-line :class:`SeqlabError` naming ``path`` and the first mismatch."""
    if state is None:
        raise SeqlabError(f"{path}: holds no {name} state, which {path.parent / CONFIG} asks for "
                          f"(is config.yaml from another run?)")
    try:
        part.load_state_dict(state)
    except (RuntimeError, ValueError, KeyError) as err:
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        first = lines[1] if len(lines) > 1 and lines[0].startswith("Error(s) in loading") else lines[0]
        more = f" (and {len(lines) - 2} more)" if len(lines) > 2 else ""
        raise SeqlabError(f"{path}: the saved {name} does not fit the model {path.parent / CONFIG} describes "
                          f"(is config.yaml from another run, or the file from another seqlab version?): "
                          f"{first.rstrip('.')}{more}") from None


def save_metrics(run_dir: Path, metrics: dict[str, Any]) -> None:
    with atomic_open(Path(run_dir) / METRICS) as out:
        json.dump(metrics, out, indent=2)


class _RunLogHandler(logging.FileHandler):
    """A ``FileHandler`` whose failed write (a full disk) stops the run with that ``OSError``, instead of
    printing logging's "--- Logging error ---" traceback and going on."""

    def handleError(self, record: logging.LogRecord) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            raise  # noqa: PLE0704 -- re-raises the OSError that emit() is handling
        super().handleError(record)


@contextmanager
def run_log(run_dir: Path) -> Iterator[None]:
    """Send seqlab's log to ``train.log`` in the run directory (appending on resume) while inside."""
    root = logging.getLogger("seqlab")
    handler = _RunLogHandler(Path(run_dir) / LOG, encoding="utf-8")
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
