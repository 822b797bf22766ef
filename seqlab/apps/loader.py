"""Load any trained model: a run directory, a ``.seqlab`` file, an installed model's short name or a folder that
``seqlab export`` wrote. The config's ``task`` picks the loader (:mod:`seqlab.apps.tasks`); :func:`seqlab.load`
is this function."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from seqlab.apps.installed import DEFAULT_MODEL, MODELS, model_path
from seqlab.apps.tasks import task_of
from seqlab.core import rundir
from seqlab.core.errors import SeqlabError
from seqlab.core.strict import read_mapping

#: Where a tagger's emissions are computed: torch (the trained modules) or onnxruntime (``seqlab export``).
BACKENDS = ("torch", "onnx")


def load(path: str | Path | None = None, device: torch.device | str = "auto", backend: str = "torch") -> Any:
    """A trained model of any task: a run directory, a ``.seqlab`` file, an installed model's short name or
    a folder that ``seqlab export`` wrote (see :func:`seqlab.load`); ``backend="onnx"`` (an export folder
    only) computes a tagger's emissions with onnxruntime."""
    from seqlab.apps.onnx_runtime import MANIFEST, PACKAGE
    from seqlab.apps.package import unpack

    if backend not in BACKENDS:
        raise SeqlabError(f"backend: expected one of {list(BACKENDS)}, got {backend!r}")
    run_dir = model_path(path)
    if (run_dir / MANIFEST).is_file():  # an export folder: its graph, or its model file for torch
        if backend == "onnx":
            from seqlab.apps.onnx_runtime import load_onnx

            return load_onnx(run_dir, device)
        run_dir = run_dir / PACKAGE
    elif backend == "onnx":
        raise SeqlabError(f"{run_dir}: no ONNX graph here; write one with `seqlab export {path or DEFAULT_MODEL} "
                          "--format onnx --out DIR` and load DIR")
    if run_dir.is_file():
        run_dir = unpack(run_dir)
    if not (run_dir / rundir.CONFIG).is_file():
        raise SeqlabError(f"{run_dir}: not a seqlab model (no {rundir.CONFIG}); pass the --output folder of a "
                          f"training run, a .seqlab file, or one of the installed models {sorted(MODELS)}")
    spec = task_of(read_mapping(run_dir / rundir.CONFIG), run_dir / rundir.CONFIG)
    return spec.load(run_dir, device)
