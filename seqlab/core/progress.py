"""How a training run says where it is: the time left, and what an interrupt lost and how to go on.

Torch-free, so that the command line can name an interrupt without importing torch.
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Epochs the time left is measured on: the last few this process trained. Older ones may have run at another
#: speed (a resumed run on other threads, another machine or beside another job).
RECENT_EPOCHS = 3


class Pace:
    """The time left in a run of ``epochs`` epochs, at the pace of recent epochs.

    Before this process has finished an epoch, the pace is that of the epoch in progress so far (so that the
    first minutes of a run, or of a resumed one, already say something), with its dev scoring guessed from the
    run's last epoch before (``history``), scaled by how much faster or slower training is going now.
    """

    def __init__(self, epochs: int, history: Sequence[Mapping[str, Any]] = ()) -> None:
        self.epochs = epochs
        self.before = history[-1] if history else None
        self.recent: list[tuple[float, float]] = []  # (train, dev) seconds of each epoch this process trained

    def epoch_done(self, train_seconds: float, dev_seconds: float) -> None:
        self.recent.append((train_seconds, dev_seconds))

    def seconds_left(self, epoch: int, fraction: float = 1.0, elapsed: float = 0.0) -> float | None:
        """Seconds until the last epoch ends, when ``fraction`` of epoch ``epoch``'s training took ``elapsed``
        seconds (``fraction`` 1: the epoch is over, its dev score included); None before anything is timed."""
        recent = self.recent[-RECENT_EPOCHS:]
        if recent:
            train = sum(t for t, _ in recent) / len(recent)
            dev = sum(d for _, d in recent) / len(recent)
        elif fraction > 0:
            train = elapsed / fraction
            dev = 0.0
            if self.before is not None and self.before.get("train_seconds"):
                dev = self.before.get("dev_seconds", 0.0) * train / self.before["train_seconds"]
        else:
            return None
        current = 0.0 if fraction >= 1.0 else train * (1.0 - fraction) + dev
        return current + max(self.epochs - epoch, 0) * (train + dev)

    def left(self, epoch: int, fraction: float = 1.0, elapsed: float = 0.0) -> str:
        """``about 12 min left`` (see :meth:`seconds_left`), or ``""`` before anything is timed."""
        seconds = self.seconds_left(epoch, fraction, elapsed)
        return "" if seconds is None else f"about {duration(seconds)} left"


def duration(seconds: float) -> str:
    """``40 s``, ``12 min`` or ``3.5 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Interrupted(KeyboardInterrupt):
    """A training run stopped by SIGINT (Ctrl-C) or SIGTERM; ``str()`` says what was lost and how to go on in one
    line, and ``signum`` which signal it was (the command exits with 128 + it)."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.signum = signum


def signal_of(err: KeyboardInterrupt) -> int:
    """The signal behind ``err``: SIGTERM when :func:`sigterm_interrupts` raised it, else SIGINT (Ctrl-C)."""
    if isinstance(err, Interrupted):
        return err.signum
    return int(signal.SIGTERM) if err.args == ("SIGTERM",) else int(signal.SIGINT)


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """While inside, SIGTERM (``kill``, a job scheduler's stop) interrupts the main thread as Ctrl-C does, so that a
    training run says what it lost and how to resume instead of dying with nothing said ("Terminated")."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt("SIGTERM")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def lost(out_dir: Path, signum: int, *, running: int | None = None, epochs: int = 0, saved_epoch: int = 0,
         scoring: bool = False) -> str:
    """What an interrupt by ``signum`` of the run in ``out_dir`` lost and how to go on, in one line: ``running``
    is the epoch in progress (of ``epochs``; None: not known), ``saved_epoch`` the last one its checkpoint holds;
    ``scoring``: every epoch was over, the best model was being scored on dev and test."""
    from seqlab.core import rundir

    name = signal.Signals(signum).name
    resume = f"seqlab train --resume {out_dir}"
    if scoring:
        return (f"interrupted by {name} while scoring the best model on dev and test: every epoch is saved; "
                f"{resume} scores it again")
    if not rundir.has_checkpoint(out_dir):
        where = f" in epoch {running} of {epochs}" if running is not None else ""
        return f"interrupted by {name}{where}, before an epoch was saved: nothing to resume; run the same command again"
    if running is None:
        return f"interrupted by {name}: any epoch in progress is lost; {resume} continues from the last saved one"
    return (f"interrupted by {name} in epoch {running} of {epochs}: its partial epoch is lost; the run is saved after "
            f"epoch {saved_epoch}; {resume} continues it")
