"""The optimizer table, shared by every task: ``train.optimizer`` names one of these builders.

Each builder takes the parameters (or parameter groups) to train and the run's
:class:`seqlab.core.config.TrainSettings`, and reads only the settings it uses
(``momentum`` for SGD, ``rho`` and ``eps`` for AdaDelta).
"""
from __future__ import annotations

from typing import Any, Callable

import torch

from seqlab.core.registry import Registry

OptimizerBuilder = Callable[[list[Any], Any], torch.optim.Optimizer]

OPTIMIZERS: Registry[OptimizerBuilder] = Registry("train.optimizer")
OPTIMIZERS.add("sgd", lambda ps, t: torch.optim.SGD(ps, lr=t.lr, momentum=t.momentum, weight_decay=t.weight_decay))
OPTIMIZERS.add("adam", lambda ps, t: torch.optim.Adam(ps, lr=t.lr, weight_decay=t.weight_decay))
OPTIMIZERS.add("nadam", lambda ps, t: torch.optim.NAdam(ps, lr=t.lr, weight_decay=t.weight_decay))
OPTIMIZERS.add("adadelta", lambda ps, t: torch.optim.Adadelta(ps, lr=t.lr, rho=t.rho, eps=t.eps,
                                                              weight_decay=t.weight_decay))


def build_optimizer(groups: list[Any], t: Any) -> tuple[torch.optim.Optimizer,
                                                        torch.optim.lr_scheduler.LRScheduler | None]:
    """The optimizer ``t.optimizer`` names over ``groups``, and per-epoch exponential decay of the
    learning rate by ``t.lr_decay`` (no scheduler when it is 1: the rate stays as it is)."""
    optimizer = OPTIMIZERS.get(t.optimizer, "train.optimizer")(groups, t)
    if t.lr_decay == 1.0:
        return optimizer, None
    return optimizer, torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=t.lr_decay)
