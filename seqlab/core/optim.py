"""The optimizer table, shared by every task: ``train.optimizer`` names one of these builders.

Each builder takes the parameters (or parameter groups) to train and the run's
:class:`seqlab.core.config.TrainSettings`, and reads only the settings it uses
(``momentum`` for SGD, ``rho`` and ``eps`` for AdaDelta).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from seqlab.core.registry import Registry

if TYPE_CHECKING:  # torch is imported when an optimizer is built, so reading a config does not load it
    import torch

OptimizerBuilder = Callable[[list[Any], Any], "torch.optim.Optimizer"]
OPTIMIZERS: Registry[OptimizerBuilder] = Registry("train.optimizer")


@OPTIMIZERS.register("sgd")
def _sgd(params: list[Any], t: Any) -> "torch.optim.Optimizer":
    import torch

    return torch.optim.SGD(params, lr=t.lr, momentum=t.momentum, weight_decay=t.weight_decay)


@OPTIMIZERS.register("adam")
def _adam(params: list[Any], t: Any) -> "torch.optim.Optimizer":
    import torch

    return torch.optim.Adam(params, lr=t.lr, weight_decay=t.weight_decay)


@OPTIMIZERS.register("nadam")
def _nadam(params: list[Any], t: Any) -> "torch.optim.Optimizer":
    import torch

    return torch.optim.NAdam(params, lr=t.lr, weight_decay=t.weight_decay)


@OPTIMIZERS.register("adadelta")
def _adadelta(params: list[Any], t: Any) -> "torch.optim.Optimizer":
    import torch

    return torch.optim.Adadelta(params, lr=t.lr, rho=t.rho, eps=t.eps, weight_decay=t.weight_decay)


def build_optimizer(groups: list[Any], t: Any) -> tuple["torch.optim.Optimizer",
                                                        "torch.optim.lr_scheduler.LRScheduler | None"]:
    """The optimizer ``t.optimizer`` names over ``groups``, and per-epoch exponential decay of the
    learning rate by ``t.lr_decay`` (no scheduler when it is 1: the rate stays as it is)."""
    import torch

    optimizer = OPTIMIZERS.get(t.optimizer, "train.optimizer")(groups, t)
    if t.lr_decay == 1.0:
        return optimizer, None
    return optimizer, torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=t.lr_decay)
