"""The one training loop, for every task: epochs, early stopping, atomic checkpoints, resume, progress.

``train(config, out_dir)`` can be imported and called; ``seqlab train`` is a thin layer on it. The task
(:mod:`seqlab.core.task`) says how to read data, build a model, compute a batch's loss and score a split;
the trainer owns the run directory (see :mod:`seqlab.core.rundir`). ``resume`` continues a killed run
from its last checkpoint and reaches the same result as an uninterrupted run.
"""
from __future__ import annotations

import contextlib
import logging
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from tqdm import tqdm

from seqlab.core import rundir, scores
from seqlab.core.device import resolve_device
from seqlab.core.errors import SeqlabError
from seqlab.core.optim import build_optimizer, warm_up
from seqlab.core.progress import Interrupted, Pace, duration, lost, signal_of, sigterm_interrupts
from seqlab.core.strict import dump_config
from seqlab.core.distributed import World, broadcast_float, data_parallel, init_world, rank_device
from seqlab.core.distributed import peers_lost, shutdown
from seqlab.core.task import BatchLoss, Task

log = logging.getLogger("seqlab.train")

#: Builds a task from its config: ``prepare(config, run_dir_or_None, device)`` (a run directory when resuming).
Prepare = Callable[[Any, "Path | None", torch.device], Task]
#: Off a terminal (a log file, a job's output) there is no progress bar: a line says how far the epoch is and how
#: long the run has left, at most this often, besides each epoch's own line at its end.
PROGRESS_EVERY_SECONDS = 60.0


def optimizer_step(loss: torch.Tensor, optimizer: torch.optim.Optimizer, params: list[nn.Parameter],
                   clip: float, where: str, after_backward: Callable[[], None] | None = None) -> None:
    """One update from ``loss``: refuse a non-finite loss (naming ``where``), backward (then ``after_backward``),
    clip the norm, step."""
    if not torch.isfinite(loss):
        raise SeqlabError(f"training diverged at {where}: loss is {loss.item()}; lower train.lr")
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if after_backward is not None:
        after_backward()
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(params, clip)
    optimizer.step()


#: Keys of the loop state (checkpoint.pt) and of each epoch's history entry (also in metrics.json) that runs
#: written before the model-selection score got a measure-neutral name used: old name -> today's.
OLD_KEYS = {"best_f1": "best_score", "dev_f1": "dev_score"}


def upgrade_state(state: dict[str, Any]) -> dict[str, Any]:
    """The loop state of a checkpoint with the old keys (``best_f1``, ``dev_f1`` in ``history``) read as today's
    (``best_score``, ``dev_score``), so that ``--resume`` and ``seqlab summarize`` read runs of either age."""
    def renamed(entry: dict[str, Any]) -> dict[str, Any]:
        return {(OLD_KEYS[key] if key in OLD_KEYS and OLD_KEYS[key] not in entry else key): value
                for key, value in entry.items()}

    state = renamed(state)
    if isinstance(state.get("history"), list):
        state["history"] = [renamed(h) if isinstance(h, dict) else h for h in state["history"]]
    return state


def record_epoch(state: dict[str, Any], epoch: int, score: float, stats: dict[str, Any]) -> bool:
    """Model-selection bookkeeping after ``epoch`` scored ``score`` (the task's measure) on dev; returns whether
    it is the best so far."""
    improved = score > state["best_score"]
    if improved:
        state.update(best_score=score, best_epoch=epoch, bad_epochs=0)
    else:
        state["bad_epochs"] += 1
    state["epoch"] = epoch
    state["history"].append(stats)
    return improved


class Trainer:
    """The model, optimizer and data of one run; :meth:`fit` runs epochs until done."""

    def __init__(self, prepare: Prepare, config: Any, out_dir: Path, *, resume: bool = False,
                 progress: bool = True, world: World | None = None) -> None:
        self.config, self.out_dir, self.world = config, out_dir, world or World()
        self.progress = progress and self.world.main
        t = config.train
        if t.threads:
            torch.set_num_threads(t.threads)
        self.device = rank_device(resolve_device(t.device), self.world)
        self.task = prepare(config, out_dir if resume else None, self.device)
        torch.manual_seed(t.seed)
        self.model = self.task.build_model(progress=self.progress)
        if self.world.rank > 0:  # its own dropout masks; rank 0 draws as a single process would
            torch.manual_seed(t.seed * 1000 + self.world.rank)
        self.loss_module, self.touched_rows = data_parallel(self.model, self.task, self.world, self.device)
        self.optimizer, self.scheduler = build_optimizer(self.task.parameter_groups(), t)
        # Polyak-style weight averaging: dev is scored, and the best weights saved, from the moving average.
        self.averaged = AveragedModel(self.model, multi_avg_fn=get_ema_multi_avg_fn(t.ema)) if t.ema > 0 else None
        self.generator = torch.Generator().manual_seed(t.seed)
        self.state: dict[str, Any] = {"epoch": 0, "best_score": -1.0, "best_epoch": 0, "bad_epochs": 0, "history": [],
                                      "world_size": self.world.size}
        self.pace = Pace(t.epochs)
        self.scoring = False  # every epoch is over: the best model is being scored on dev and test

    # ------------------------------------------------------------ checkpoints

    def _parts(self) -> dict[str, Any]:
        return {"model": self.model, "optimizer": self.optimizer, "scheduler": self.scheduler,
                "averaged": self.averaged}

    def save_checkpoint(self) -> None:
        rundir.save_training_state(self.out_dir, self._parts(), self.generator, self.state)

    def load_checkpoint(self) -> None:
        self.state = upgrade_state(rundir.load_training_state(self.out_dir, self._parts(), self.generator,
                                                              self.device))
        saved = self.state.setdefault("world_size", 1)
        if saved != self.world.size:
            raise SeqlabError(f"--resume {self.out_dir}: the run was trained by {saved} process(es), and this is "
                              f"{self.world.size}; resume it with {saved} (the batches each step sees depend on it)")
        log.info("resumed after epoch %d (best dev %s %.2f at epoch %d)", self.state["epoch"], self.task.measure,
                 self.state["best_score"], self.state["best_epoch"])
        self.pace = Pace(self.config.train.epochs, self.state["history"])

    # ------------------------------------------------------------ epochs

    def _bar(self, epoch: int) -> tqdm:
        total = self.task.split_sizes()["train"] // self.world.size
        return tqdm(total=total, unit="sent", desc=f"epoch {epoch}/{self.config.train.epochs}",
                    disable=not (self.progress and sys.stderr.isatty()), leave=False, mininterval=0.5)

    def train_epoch(self, epoch: int) -> dict[str, float]:
        t = self.config.train
        self.model.train()
        bar = self._bar(epoch)
        total, seen, tokens, start = 0.0, 0, 0, time.perf_counter()
        synced = (self.touched_rows.seconds, self.touched_rows.steps) if self.touched_rows is not None else None
        params = [p for p in self.model.parameters() if p.requires_grad]
        steps = math.ceil(self.task.split_sizes()["train"] / t.batch_size / self.world.size)
        share = max(self.task.split_sizes()["train"] // self.world.size, 1)  # this rank's sentences per epoch
        next_line = start + PROGRESS_EVERY_SECONDS if self.progress and bar.disable else math.inf
        for step, batch in enumerate(self.task.training_batches(self.generator, self.world.shard)):
            out = self.step(batch, params, f"epoch {epoch}, step {step}")
            if self.averaged is not None:
                self.averaged.update_parameters(self.model)
            total += out.loss.item() * out.sentences
            seen, tokens = seen + out.sentences, tokens + out.tokens
            bar.update(out.sentences)
            if step % 20 == 0 or step == steps - 1:
                now = time.perf_counter()
                left = self.pace.seconds_left(epoch, min(seen / share, 1.0), now - start)
                last = self.state["history"][-1]["dev_score"] if self.state["history"] else float("nan")
                bar.set_postfix(loss=f"{total / seen:.3f}", lr=f"{self.optimizer.param_groups[0]['lr']:.5f}",
                                last_dev=f"{last:.2f}", run_left=duration(left) if left is not None else "?",
                                refresh=False)  # drawn at tqdm's own pace
                if now >= next_line:
                    log.info("epoch %d/%d: %.0f%% (%d of %d sentences), loss %.4f, %.0f sent/s; %s", epoch, t.epochs,
                             100 * min(seen / share, 1.0), seen, share, total / seen, seen / (now - start),
                             self.pace.left(epoch, min(seen / share, 1.0), now - start))
                    next_line = now + PROGRESS_EVERY_SECONDS
        bar.close()
        elapsed = time.perf_counter() - start
        stats = {"loss": total / max(seen, 1), "train_seconds": elapsed, "sentences_per_second": seen / elapsed,
                 "tokens_per_second": tokens / elapsed}
        if synced is not None:  # mean ms per step spent averaging the large tables' touched rows over ranks
            rows = self.touched_rows
            stats["row_average_ms"] = 1000 * (rows.seconds - synced[0]) / max(rows.steps - synced[1], 1)
        return stats

    def step(self, batch: Any, params: list[nn.Parameter], where: str) -> BatchLoss:
        """One optimisation step on ``batch`` (gradients averaged over ranks when distributed)."""
        loss = self.loss_module(batch)
        if self.touched_rows is not None:  # the rows this step read, all-reduced while backward runs
            self.touched_rows.start()
        warm_up(self.optimizer)
        optimizer_step(loss, self.optimizer, params, self.config.train.clip, where, self.touched_rows)
        return getattr(self.loss_module, "module", self.loss_module).last

    @property
    def scored_model(self) -> nn.Module:
        """The weights that are evaluated and saved: the moving average when ``train.ema`` is on."""
        return self.model if self.averaged is None else self.averaged.module

    def fit(self) -> dict[str, Any]:
        """Train until ``train.epochs`` or early stopping, then :meth:`finish`. SIGINT or SIGTERM on the way (see
        :func:`train`) ends it with an :class:`Interrupted` that says what was lost and how to resume."""
        try:
            return self._fit()
        except KeyboardInterrupt as err:
            if isinstance(err, Interrupted):
                raise
            signum = signal_of(err)
            epoch = self.state["epoch"]
            raise Interrupted(lost(self.out_dir, signum, running=epoch + 1, epochs=self.config.train.epochs,
                                   saved_epoch=epoch, scoring=self.scoring), signum) from None

    def _fit(self) -> dict[str, Any]:
        t = self.config.train
        while self.state["epoch"] < t.epochs and self.state["bad_epochs"] < t.patience:
            epoch = self.state["epoch"] + 1
            stats = self.train_epoch(epoch)
            if self.scheduler is not None:
                self.scheduler.step()
            start = time.perf_counter()
            score = self.task.evaluate(self.scored_model, "dev").value if self.world.main else 0.0
            score = broadcast_float(score, self.world)  # every rank takes rank 0's early-stopping decision
            stats.update(epoch=epoch, dev_score=score, dev_seconds=time.perf_counter() - start,
                         lr=self.optimizer.param_groups[0]["lr"])
            improved = record_epoch(self.state, epoch, score, stats)
            self.pace.epoch_done(stats["train_seconds"], stats["dev_seconds"])
            if self.world.main:
                if improved:
                    rundir.save_weights(self.out_dir, self.scored_model)
                self.save_checkpoint()
            log.info("epoch %d: loss %.4f, dev %s %.2f%s, %.0f sent/s, %.1f s, lr %.5f%s", epoch, stats["loss"],
                     self.task.measure, score, " (best)" if improved else "", stats["sentences_per_second"],
                     stats["train_seconds"], stats["lr"], self._time_left(epoch))
        if self.state["bad_epochs"] >= t.patience:
            log.info("early stopping: no dev %s gain for %d epochs", self.task.measure, t.patience)
        self.scoring = True
        return self.finish() if self.world.main else {}

    def _time_left(self, epoch: int) -> str:
        """``; about N min left (E of M epochs done)``, at the pace of the last epochs (:class:`Pace`)."""
        if epoch >= self.config.train.epochs:
            return ""
        return f"; {self.pace.left(epoch)} ({epoch} of {self.config.train.epochs} epochs done)"

    def finish(self) -> dict[str, Any]:
        """Reload the best weights, score dev and test once, write their predictions, metrics.json and the report."""
        self.model.load_state_dict(rundir.load_weights(self.out_dir, self.device))
        metrics: dict[str, Any] = {"best_epoch": self.state["best_epoch"], "epochs": self.state["epoch"],
                                   "selected_on": "dev", "measure": self.task.measure, "history": self.state["history"],
                                   **self.task.training_record()}
        sizes, metrics["speed"] = self.task.split_sizes(), {}
        for name in ("dev", "test"):
            if name not in sizes:
                continue
            start = time.perf_counter()
            score = self.task.evaluate(self.model, name, self.out_dir)
            seconds = time.perf_counter() - start
            metrics[name] = scores.record(score.value, self.task.measure, score.details)
            metrics["speed"][name] = {"sentences": sizes[name], "seconds": seconds,
                                      "sentences_per_second": sizes[name] / max(seconds, 1e-9)}
            log.info("%s: %s %.2f (%d sentences, %.0f sent/s)\n%s", name, self.task.measure, score.value,
                     sizes[name], sizes[name] / max(seconds, 1e-9), score.text)
        calibration = self.task.calibrate(self.model, self.out_dir)
        if calibration is not None:
            metrics["calibration"] = calibration
            log.info("confidences calibrated on dev: temperature %.3f, expected calibration error %.4f -> %.4f",
                     calibration["temperature"], calibration["ece_before"], calibration["ece_after"])
        rundir.save_metrics(self.out_dir, metrics)
        return metrics


def train(prepare: Prepare, config: Any, out_dir: str | Path, *, resume: bool = False,
          progress: bool = True) -> dict[str, Any]:
    """Train the task ``prepare`` makes of ``config`` into ``out_dir``; with ``resume``, continue the run there.

    Everything building reports (such as pretrained-vector coverage) goes to ``out_dir/train.log`` too. A
    resumed run restores its checkpoint; a new one first writes what loading the model needs. A run
    directory this call made and whose trainer cannot be built (bad data, a missing file) is removed again
    (never its parents), so the same ``--output`` can be used once the problem is fixed. The run directory's
    lock (:func:`rundir.run_lock`) is held throughout, so a second training there is refused; temporary files
    that killed writes left behind are removed first. While it runs, SIGTERM stops it as Ctrl-C does: either ends
    it with an :class:`Interrupted` whose text says what was lost and how to resume.
    """
    out_dir = Path(out_dir)
    rundir.check_output(out_dir, resume)
    world = init_world(resolve_device(config.train.device))
    try:
        with peers_lost(world), sigterm_interrupts():
            if not world.main:
                return _train_other_rank(prepare, config, out_dir, resume, world)
            return _train_main(prepare, config, out_dir, resume, progress, world)
    except KeyboardInterrupt as err:  # before the epochs began (Trainer.fit says more once they have)
        if isinstance(err, Interrupted):
            raise
        raise Interrupted(lost(out_dir, signal_of(err)), signal_of(err)) from None
    finally:
        shutdown(world)


def _train_other_rank(prepare: Prepare, config: Any, out_dir: Path, resume: bool, world: World) -> dict[str, Any]:
    """A rank other than 0 trains its share and writes nothing, and logs only errors: rank 0 says the rest, once."""
    logging.disable(logging.WARNING)  # every logger: features/ logs the vectors it loads under its own names
    try:
        trainer = Trainer(prepare, config, out_dir, resume=resume, progress=False, world=world)
        if resume:
            trainer.load_checkpoint()
        return trainer.fit()
    finally:
        logging.disable(logging.NOTSET)


def _train_main(prepare: Prepare, config: Any, out_dir: Path, resume: bool, progress: bool,
                world: World) -> dict[str, Any]:
    """Rank 0 (or the one process): builds the run directory and writes everything in it."""
    made = _make_run_dir(out_dir)
    with rundir.run_lock(out_dir):
        rundir.check_output(out_dir, resume)  # again: another run may have written a checkpoint meanwhile
        freed = rundir.remove_stale_temp_files(out_dir)
        try:
            with rundir.run_log(out_dir):
                log.info("run directory %s", out_dir)
                if freed:
                    log.info("removed %.1f MB of temporary files that interrupted writes left behind", freed / 1e6)
                trainer = Trainer(prepare, config, out_dir, resume=resume, progress=progress, world=world)
        except BaseException:
            if made:
                _remove_failed_run_dir(out_dir)
            raise
        return _run(trainer, config, out_dir, resume)


def _make_run_dir(out_dir: Path) -> bool:
    """Make ``out_dir`` and any missing parents; whether this call made ``out_dir`` itself (not another process)."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        out_dir.mkdir()
    except FileExistsError:
        return False
    return True


def _remove_failed_run_dir(out_dir: Path) -> None:
    """Undo :func:`_make_run_dir` for a run that could not start, so the same ``--output`` can be used again:
    remove the files this run wrote there (its log and lock), then the folder if nothing else is in it. The
    parents stay, even those this run made: another training may be starting in one of them by now."""
    for name in (rundir.LOG, rundir.LOCK):
        with contextlib.suppress(FileNotFoundError):
            (out_dir / name).unlink()
    with contextlib.suppress(OSError):  # not empty: something else is using it
        out_dir.rmdir()


def _run(trainer: Trainer, config: Any, out_dir: Path, resume: bool) -> dict[str, Any]:
    """Restore the checkpoint (or write what loading a new run needs), then train to the end."""
    with rundir.run_log(out_dir):
        if resume:
            trainer.load_checkpoint()
        else:
            rundir.save_config(out_dir, dump_config(config))
            trainer.task.save_run_files(out_dir)
        n_params = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
        sizes = "/".join(f"{n} {name}" for name, n in trainer.task.split_sizes().items())
        log.info("device %s, %d trainable parameters, %s sentences%s", trainer.device, n_params, sizes,
                 f", {trainer.world.size} processes" if trainer.world.distributed else "")
        return trainer.fit()
