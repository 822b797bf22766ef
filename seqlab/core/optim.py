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


def transformer_groups(model: Any, contextual: Any, config: Any) -> list[Any]:
    """``model``'s trainable parameters; with a fine-tuned transformer embedder (``contextual``, configured by
    ``config``: :class:`seqlab.core.config.TransformerConfig`), its encoder's in a group of their own at
    ``config.lr``, warmed up linearly over ``config.warmup`` steps (:func:`warm_up`)."""
    trainable = [p for p in model.parameters() if p.requires_grad]
    if contextual is None or not contextual.fine_tune:
        return trainable
    encoder = {id(p) for p in contextual.transformer.parameters()}
    return [{"params": [p for p in trainable if id(p) not in encoder]},
            {"params": [p for p in trainable if id(p) in encoder], "lr": config.lr,
             "warmup_steps": config.warmup, "warmup_lr": config.lr, "warmup_done": 0}]


def warm_up(optimizer: "torch.optim.Optimizer") -> None:
    """Before a step: a group with ``warmup_steps`` n gets ``warmup_lr × k / n`` at its k-th step (k ≤ n), then
    keeps its rate (the epoch decay applies from there). The count lives in the group, so it is checkpointed."""
    for group in optimizer.param_groups:
        steps, done = group.get("warmup_steps", 0), group.get("warmup_done", 0)
        if steps and done < steps:
            group["lr"] = group["warmup_lr"] * (done + 1) / steps
            group["warmup_done"] = done + 1


def build_optimizer(groups: list[Any], t: Any) -> tuple["torch.optim.Optimizer",
                                                        "torch.optim.lr_scheduler.LRScheduler | None"]:
    """The optimizer ``t.optimizer`` names over ``groups``, and per-epoch exponential decay of the
    learning rate by ``t.lr_decay`` (no scheduler when it is 1: the rate stays as it is)."""
    import torch

    optimizer = OPTIMIZERS.get(t.optimizer, "train.optimizer")(groups, t)
    if t.lr_decay == 1.0:
        return optimizer, None
    return optimizer, torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=t.lr_decay)
