"""The backends table: what computes a loaded model's scores, by name (``seqlab.load(..., backend=NAME)``,
``--backend NAME``). Each name is written once, here (the default, ``torch``, in :mod:`seqlab.core.loaded`).

* ``torch``: the trained torch modules of a run directory, a ``.seqlab`` file, an installed model or the model
  file inside an export folder; any task;
* ``onnx``: onnxruntime over the graph of a folder that ``seqlab export --format onnx`` wrote (taggers).

Importing this module imports neither torch nor onnxruntime (the CLI builds its ``--backend`` choices from it
before any model loads); a backend's loader imports what it needs.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from seqlab.core.errors import SeqlabError
from seqlab.core.loaded import DEFAULT_BACKEND, LoadedModel
from seqlab.core.registry import Registry


@dataclass(frozen=True)
class Backend:
    """One backend: its loader, ``load(path, device, name, given)`` (``path``: where the model is; ``name``: the
    backend's own name; ``given``: the model as the user named it, for messages), and a line of help."""

    load: Callable[[Path, Any, str, str], LoadedModel]
    help: str


def _load_torch(path: Path, device: Any, name: str, given: str) -> LoadedModel:
    """A model of any task with its torch modules: a run directory, or a ``.seqlab`` file (an export folder's
    for one) unpacked for as long as it loads (:func:`seqlab.apps.model_cache.unpacked`: with the cache off, the
    temporary copy is removed once the model is loaded)."""
    from seqlab.apps.onnx_runtime import PACKAGE, is_export
    from seqlab.apps.model_cache import unpacked

    if is_export(path):
        path = path / PACKAGE
    if not path.is_file():
        return _load_run(path, device)
    with unpacked(path) as run_dir:
        return _load_run(run_dir, device)


def _load_run(path: Path, device: Any) -> LoadedModel:
    """The model of a run directory (or an unpacked model file), by its config's task."""
    from seqlab.apps.installed import MODELS
    from seqlab.apps.tasks import task_of
    from seqlab.core import rundir
    from seqlab.core.strict import read_mapping

    if not (path / rundir.CONFIG).is_file():
        raise SeqlabError(f"{path}: not a seqlab model (no {rundir.CONFIG}); pass the --output folder of a "
                          f"training run, a .seqlab file, or one of the installed models {sorted(MODELS)}")
    return task_of(read_mapping(path / rundir.CONFIG), path / rundir.CONFIG).load(path, device)


def _load_onnx(path: Path, device: Any, name: str, given: str) -> LoadedModel:
    """A tagger whose emissions onnxruntime computes, from an export folder."""
    from seqlab.apps.onnx_runtime import is_export, load_onnx

    if not is_export(path):
        raise SeqlabError(f"{path}: no ONNX graph here; write one with `seqlab export {given} --format onnx "
                          "--out DIR` and load DIR")
    return load_onnx(path, device, backend=name)


BACKENDS: Registry[Backend] = Registry("backend")
BACKENDS.add(DEFAULT_BACKEND, Backend(_load_torch, "the trained torch modules (any model)"))
BACKENDS.add("onnx", Backend(_load_onnx, "onnxruntime over the graph of a folder that seqlab export --format onnx "
                                         "wrote (taggers; pip install 'seqlab[onnx]')"))
