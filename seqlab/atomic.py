"""Atomic file writes: a file appears at its path complete, or not at all.

Checkpoints, models and prediction files are written to a temporary file in the
same folder and renamed into place, so a crash never leaves a half-written file.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, TextIO


class atomic_open:
    """Open a text file for writing that appears at ``path`` only when closed without error."""

    def __init__(self, path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8") -> None:
        self.path = Path(path)
        self.mode = mode
        self.encoding = None if "b" in mode else encoding
        self._tmp: str | None = None
        self._handle: TextIO | None = None

    def __enter__(self):  # type: ignore[no-untyped-def]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        self._handle = os.fdopen(fd, self.mode, encoding=self.encoding)
        return self._handle

    def __exit__(self, exc_type, exc, tb) -> None:  # type: ignore[no-untyped-def]
        if self._handle is None or self._tmp is None:
            return
        if exc_type is None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            os.replace(self._tmp, self.path)
        else:
            self._handle.close()
            os.unlink(self._tmp)


def atomic_torch_save(obj: Any, path: str | os.PathLike[str]) -> None:
    """``torch.save`` to ``path`` atomically."""
    import torch

    with atomic_open(path, "wb") as handle:
        torch.save(obj, handle)
