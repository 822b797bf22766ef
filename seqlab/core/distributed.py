"""Data-parallel training across processes with ``torch.distributed`` (launched by ``torchrun``).

``torchrun --nproc_per_node 2 -m seqlab train CONFIG --output DIR`` (or ``seqlab train CONFIG --nproc 2``)
starts one process per rank; the trainer (:mod:`seqlab.core.trainer`) then

* wraps the model's loss in ``DistributedDataParallel`` (gloo on CPU, NCCL on GPU), so gradients are
  averaged over ranks after every backward pass;
* gives every rank the same shuffled, length-bucketed order of global batches (one seeded generator) of
  ``batch_size × world`` sentences, and each rank every ``world``-th sentence of each in length order
  (:func:`seqlab.data.batching.bucketed_batches`), so the ranks of a step hold sentences of nearly the
  same lengths and none waits long at the all-reduce: ``train.batch_size`` is **per process**, and the
  learning rate is left as configured (scale it yourself when the world size changes);
* scores dev on rank 0 only and broadcasts the score, so every rank takes the same early-stopping decision;
* writes the run directory from rank 0 only; a checkpoint records the world size, and ``--resume`` with
  another number of processes is refused.

A failing rank ends the job: torchrun stops the other ranks, and every collective has a timeout
(``SEQLAB_DIST_TIMEOUT`` seconds, default 600), so nothing waits forever. Multi-node runs use torchrun's
rendezvous flags (``--nnodes 2 --node_rank 0 --rdzv_endpoint HOST:PORT``).
"""
from __future__ import annotations

import contextlib
import datetime
import os
from dataclasses import dataclass
from typing import Any, Iterator

import torch
import torch.distributed as dist
from torch import nn

from seqlab.core.errors import SeqlabError

TIMEOUT_ENV = "SEQLAB_DIST_TIMEOUT"


@dataclass(frozen=True)
class World:
    """This process's place among the training processes (rank 0 of 1 when not distributed)."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1

    @property
    def shard(self) -> tuple[int, int]:
        """``(rank, size)``: which part of each step's batch this process trains on."""
        return self.rank, self.size


def init_world(device: torch.device) -> World:
    """Join the process group torchrun describes in the environment (``WORLD_SIZE`` > 1), or none."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World()
    if not dist.is_initialized():
        timeout = datetime.timedelta(seconds=float(os.environ.get(TIMEOUT_ENV, "600")))
        backend = "nccl" if device.type == "cuda" else "gloo"
        try:
            dist.init_process_group(backend, timeout=timeout)
        except (RuntimeError, ValueError) as err:
            raise SeqlabError(f"cannot join the process group (rank {os.environ.get('RANK')} of {size}): {err}") from None
    return World(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))


def rank_device(device: torch.device, world: World) -> torch.device:
    """A rank's own GPU (``cuda:LOCAL_RANK``) when training on GPUs; the CPU stays the CPU."""
    return torch.device("cuda", world.local_rank) if device.type == "cuda" and world.distributed else device


def broadcast_float(value: float, world: World) -> float:
    """Rank 0's ``value``, on every rank."""
    if not world.distributed:
        return value
    box = torch.tensor([value], dtype=torch.float64)
    dist.broadcast(box, src=0)
    return float(box.item())


def barrier(world: World) -> None:
    if world.distributed:
        dist.barrier()


class LossModule(nn.Module):
    """The task's training loss as a module's ``forward``, so ``DistributedDataParallel`` can wrap it
    (its gradient hooks are armed by ``forward``): ``forward(batch)`` → the loss; the last
    :class:`seqlab.core.task.BatchLoss` stays in ``last``."""

    def __init__(self, model: nn.Module, task: Any) -> None:
        super().__init__()
        self.model = model  # registers the parameters DDP synchronises
        object.__setattr__(self, "task", task)  # not a submodule
        self.last: Any = None

    def forward(self, batch: Any) -> torch.Tensor:
        self.last = self.task.loss(batch)
        return self.last.loss


def data_parallel(model: nn.Module, task: Any, world: World, device: torch.device) -> LossModule | nn.Module:
    """The module whose ``forward(batch)`` gives the training loss: DDP-wrapped across ranks when distributed."""
    module = LossModule(model, task)
    if not world.distributed:
        return module
    from torch.nn.parallel import DistributedDataParallel

    ids = [device.index] if device.type == "cuda" else None
    # Buffers are not broadcast before every forward (a collective, and a wait for the other ranks, per
    # step): seqlab's buffers are constants (the CRF's transition masks), equal on every rank. Gradients
    # live in DDP's all-reduce buckets instead of being copied into and out of them.
    return DistributedDataParallel(module, device_ids=ids, broadcast_buffers=False, gradient_as_bucket_view=True)


@contextlib.contextmanager
def peers_lost(world: World) -> Iterator[None]:
    """A collective that fails because another rank died or timed out becomes a one-line error (the launcher
    names the rank that failed first); any other exception passes unchanged."""
    try:
        yield
    except RuntimeError as err:  # gloo raises plain RuntimeErrors; NCCL and the store raise DistError subclasses
        text = str(err)
        lost = isinstance(err, dist.DistError) or any(word in text for word in ("gloo", "NCCL", "Connection"))
        if not world.distributed or not lost:
            raise
        raise SeqlabError(f"lost another training process: {text.splitlines()[0][:300]}") from None


def shutdown(world: World) -> None:
    if world.distributed and dist.is_initialized():
        dist.destroy_process_group()
