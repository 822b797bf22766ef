"""Load any trained model: a run directory, a ``.seqlab`` file, an installed model's short name or a folder that
``seqlab export`` wrote. The backend named picks how (:mod:`seqlab.apps.backends`), the config's ``task`` the
task's loader (:mod:`seqlab.apps.tasks`); :func:`seqlab.load` is this function."""
from __future__ import annotations

from pathlib import Path

import torch

from seqlab.apps.backends import BACKENDS
from seqlab.apps.installed import DEFAULT_MODEL, check_requirements, model_path
from seqlab.core.loaded import DEFAULT_BACKEND, LoadedModel


def load(path: str | Path | None = None, device: torch.device | str = "auto", backend: str = DEFAULT_BACKEND
         ) -> LoadedModel:
    """A trained model of any task: a run directory, a ``.seqlab`` file, an installed model's short name or
    a folder that ``seqlab export`` wrote (see :func:`seqlab.load`), loaded by the ``backend`` of that name
    (:data:`seqlab.apps.backends.BACKENDS`): ``torch``, or ``onnx`` (an export folder only), which computes a
    tagger's emissions with onnxruntime. A ``.seqlab`` file (alone or in an export folder) is checked and unpacked
    by the backend (:func:`seqlab.apps.model_cache.unpacked`: with the cache off, its temporary copy is removed once
    loaded)."""
    check_requirements(path)
    loader, where, given = BACKENDS.get(backend, "backend").load, model_path(path), str(path or DEFAULT_MODEL)
    return loader(where, device, backend, given)
