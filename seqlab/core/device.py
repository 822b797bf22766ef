"""Where a model runs: ``auto`` picks the GPU when there is one."""
from __future__ import annotations

import torch

from seqlab.core.errors import SeqlabError


def resolve_device(name: str) -> torch.device:
    """``auto`` → the GPU when one is present, else the CPU; ``cuda`` without a GPU is a clear error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SeqlabError(f"train.device: {name!r} was asked for, but no CUDA GPU is available; use auto or cpu")
    return device
