"""Where a model runs: ``auto`` picks the GPU when there is one."""
from __future__ import annotations

import torch

from seqlab.core.errors import SeqlabError


def resolve_device(name: str, key: str = "train.device") -> torch.device:
    """``auto`` → the GPU when one is present, else the CPU; ``cuda`` without a GPU, or a name torch does not
    know, is a clear error naming ``key`` (the setting or option it came from)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise SeqlabError(f"{key}: expected auto, cpu, cuda or cuda:N, but got {name!r}") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SeqlabError(f"{key}: {name!r} was asked for, but no CUDA GPU is available; use auto or cpu")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        count = torch.cuda.device_count()
        raise SeqlabError(f"{key}: {name!r} was asked for, but this machine has {count} GPU{'s' * (count != 1)} "
                          f"(cuda:0{f' to cuda:{count - 1}' if count > 1 else ''})")
    return device
