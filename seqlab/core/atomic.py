"""Atomic file writes for seqlab: :func:`atomic_open` and :func:`atomic_torch_save`.

One implementation serves seqlab and ``features/`` (see :mod:`features.atomic`): a temporary file
in the same folder, flushed to disk and renamed into place, so a crash never leaves a half-written
checkpoint, model or prediction file.
"""
from __future__ import annotations

import io
import os
from typing import Any

from features.atomic import atomic_open, atomic_path

__all__ = ["atomic_open", "atomic_path", "atomic_torch_save"]


def atomic_torch_save(obj: Any, path: str | os.PathLike[str]) -> None:
    """``torch.save`` to ``path`` atomically.

    The object is serialized in memory first: torch's zip writer turns a failed write (a full disk)
    into an opaque ``RuntimeError``, while writing the bytes ourselves lets the ``OSError`` through."""
    import torch

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    with atomic_open(path, "wb") as handle:
        handle.write(buffer.getbuffer())
