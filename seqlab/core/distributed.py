"""Data-parallel training across processes with ``torch.distributed`` (launched by ``torchrun``).

``torchrun --nproc_per_node 2 -m seqlab train CONFIG --output DIR`` (or ``seqlab train CONFIG --nproc 2``)
starts one process per rank; the trainer (:mod:`seqlab.core.trainer`) then

* wraps the model's loss in ``DistributedDataParallel`` (gloo on CPU, NCCL on GPU), so gradients are
  averaged over ranks after every backward pass, a large word table's by the rows that the step used
  (:class:`TouchedRows`);
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
import functools
import os
import time
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


#: Embedding tables with at least this many rows are averaged over ranks by the rows a step touched
#: (:class:`TouchedRows`); smaller ones go with the other parameters into DDP's all-reduce buckets.
TOUCHED_ROWS_MIN = 1000
#: Steps on which :class:`TouchedRows` checks that no gradient reaches a row that no lookup read.
CHECKED_STEPS = 10


class TouchedRows:
    """Averages large embedding tables' gradients over ranks by the rows some rank's batch used.

    A step's batches use a few hundred rows of a word table of tens of thousands, and the other rows'
    gradients are zero on every rank, yet the table is most of a tagger's parameters: DDP would
    all-reduce it whole, zeros included. Here each table's lookups mark the rows they read (a forward
    pre-hook); :meth:`start`, called once the loss is computed, all-reduces (MAX) a byte per row while the
    backward pass runs, and :meth:`__call__`, after it, all-reduces (SUM) just the rows some rank read. The
    gradients come out as DDP's dense average would leave them (the others stay zero). A table whose
    gradient reaches rows it did not look up (used other than through its module) is refused on the first
    :data:`CHECKED_STEPS` steps, not averaged wrongly (the check costs as much as the rest: 1 ms a step).
    """

    def __init__(self, modules: list[nn.Embedding], world: World) -> None:
        self.world, self.tables, self.read = world, [], []
        seen: dict[int, torch.Tensor] = {}
        for module in modules:
            if id(module.weight) not in seen:  # one mark per table, however many modules share it
                seen[id(module.weight)] = torch.zeros(len(module.weight), dtype=torch.uint8, device=module.weight.device)
                self.tables.append(module.weight)
                self.read.append(seen[id(module.weight)])
            module.register_forward_pre_hook(functools.partial(_mark_rows, seen[id(module.weight)]))
        self.pending: tuple[torch.Tensor, Any] | None = None
        self.checks_left = CHECKED_STEPS
        self.seconds, self.steps = 0.0, 0  # time spent in __call__ (waits and row all-reduce), and its calls

    def start(self) -> None:
        """Launch the MAX all-reduce of the rows this step read (it runs during the backward pass)."""
        read = torch.cat(self.read)  # shape: (sum of rows,)
        for mark in self.read:
            mark.zero_()
        self.pending = read, dist.all_reduce(read, op=dist.ReduceOp.MAX, async_op=True)

    def __call__(self) -> None:
        began = time.perf_counter()
        if self.pending is None:
            self.start()
        self._average()
        self.seconds += time.perf_counter() - began
        self.steps += 1

    def _average(self) -> None:
        read, work = self.pending
        self.pending = None
        work.wait()
        for table in self.tables:  # every rank must join the collective, used or not
            if table.grad is None:
                table.grad = torch.zeros_like(table)
        grads = [table.grad for table in self.tables]
        rows = [part.nonzero().squeeze(1) for part in read.split([len(g) for g in grads])]
        for table, g, r in zip(self.tables, grads, rows if self.checks_left > 0 else ()):
            if int(g.count_nonzero()) != int(g[r].count_nonzero()):
                raise SeqlabError(f"distributed training: an embedding table of shape {tuple(table.shape)} got "
                                  "gradient in rows no lookup read (is its weight used other than through its "
                                  f"module?); set a larger {__name__}.TOUCHED_ROWS_MIN to average it whole")
        self.checks_left -= 1
        packed = torch.cat([g[r].flatten() for g, r in zip(grads, rows)])  # shape: (touched rows × dim,)
        dist.all_reduce(packed)
        packed.div_(self.world.size)
        for g, r, part in zip(grads, rows, packed.split([len(r) * g[0].numel() for g, r in zip(grads, rows)])):
            g.index_copy_(0, r, part.view(len(r), *g.shape[1:]))


def _mark_rows(mark: torch.Tensor, module: nn.Embedding, args: tuple[Any, ...]) -> None:
    if module.training and torch.is_grad_enabled():
        mark[args[0].reshape(-1)] = 1


def data_parallel(model: nn.Module, task: Any, world: World,
                  device: torch.device) -> tuple[LossModule | nn.Module, TouchedRows | None]:
    """The module whose ``forward(batch)`` gives the training loss, DDP-wrapped across ranks when distributed,
    and what averages the large embedding tables' gradients after each backward pass (None when DDP does it all)."""
    module = LossModule(model, task)
    if not world.distributed:
        return module, None
    from torch.nn.parallel import DistributedDataParallel

    embeddings = [m for m in module.modules()
                  if isinstance(m, nn.Embedding) and m.weight.requires_grad and m.num_embeddings >= TOUCHED_ROWS_MIN]
    large = {id(m.weight) for m in embeddings}
    trainable = [(name, p) for name, p in module.named_parameters() if p.requires_grad]
    tables = [(name, p) for name, p in trainable if id(p) in large]
    if len(tables) == len(trainable):  # DDP needs a parameter of its own
        tables = []
    for _, table in tables:  # DDP broadcasts rank 0's weights at the start, but not those it ignores
        dist.broadcast(table.data, src=0)
    DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(module, [name for name, _ in tables])
    ids = [device.index] if device.type == "cuda" else None
    # Buffers are not broadcast before every forward (a collective, and a wait for the other ranks, per
    # step): seqlab's buffers are constants (the CRF's transition masks), equal on every rank. Gradients
    # live in DDP's all-reduce buckets instead of being copied into and out of them. (One bucket for all
    # of a tagger's 1.4 MB of dense parameters was no faster: the first bucket's all-reduce no longer overlaps
    # the rest of the backward pass.)
    wrapped = DistributedDataParallel(module, device_ids=ids, forward_sync_buffers=False, gradient_as_bucket_view=True)
    return wrapped, TouchedRows(embeddings, world) if tables else None


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
