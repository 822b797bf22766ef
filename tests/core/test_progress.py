"""seqlab.core.progress: the time left at the pace of recent epochs, and what an interrupt lost."""
from __future__ import annotations

import os
import signal

import pytest

from seqlab.core.progress import Interrupted, Pace, duration, lost, signal_of, sigterm_interrupts


def test_nothing_is_said_before_anything_is_timed():
    assert Pace(10).seconds_left(1, 0.0, 0.0) is None
    assert Pace(10).left(1, 0.0, 0.0) == ""


def test_the_first_epoch_in_progress_already_gives_the_time_left():
    # a quarter of epoch 1 took 30 s: 90 s for the rest of it, then 9 epochs of 120 s (no dev time known yet)
    assert Pace(10).seconds_left(1, 0.25, 30.0) == pytest.approx(90 + 9 * 120)


def test_a_run_resumed_at_another_speed_is_timed_at_the_new_one():
    history = [{"train_seconds": 10.0, "dev_seconds": 2.0}] * 5  # before the resume: 12 s an epoch
    pace = Pace(10, history)
    # epoch 6 now runs 4 times slower: half of it in 20 s; dev is guessed 4 times slower too (8 s)
    assert pace.seconds_left(6, 0.5, 20.0) == pytest.approx(20 + 8 + 4 * 48)
    for _ in range(3):
        pace.epoch_done(40.0, 8.0)
    assert pace.seconds_left(9) == pytest.approx(48)


def test_only_the_last_epochs_set_the_pace():
    pace = Pace(20)
    for seconds in (100.0, 100.0, 100.0, 10.0, 10.0, 10.0):  # the machine got faster after three epochs
        pace.epoch_done(seconds, 0.0)
    assert pace.seconds_left(6) == pytest.approx(14 * 10)
    assert pace.seconds_left(6, 0.5, 5.0) == pytest.approx(5 + 14 * 10)
    assert pace.seconds_left(20) == 0.0
    assert pace.left(6) == "about 2 min left"


@pytest.mark.parametrize("seconds, text", [(0.4, "0 s"), (89, "89 s"), (90, "2 min"), (3000, "50 min"),
                                           (5400, "1.5 h"), (36000, "10.0 h")])
def test_duration(seconds, text):
    assert duration(seconds) == text


@pytest.mark.parametrize("checkpoint, kwargs, message", [
    (True, {"running": 4, "epochs": 50, "saved_epoch": 3},
     "interrupted by SIGTERM in epoch 4 of 50: its partial epoch is lost; the run is saved after epoch 3; "
     "seqlab train --resume RUN continues it"),
    (False, {"running": 1, "epochs": 50},
     "interrupted by SIGTERM in epoch 1 of 50, before an epoch was saved: nothing to resume; run the same command "
     "again"),
    (False, {}, "interrupted by SIGTERM, before an epoch was saved: nothing to resume; run the same command again"),
    (True, {}, "interrupted by SIGTERM: any epoch in progress is lost; seqlab train --resume RUN continues from the "
               "last saved one"),
    (True, {"scoring": True}, "interrupted by SIGTERM while scoring the best model on dev and test: every epoch is "
                              "saved; seqlab train --resume RUN scores it again"),
])
def test_what_an_interrupt_lost_and_how_to_go_on(tmp_path, checkpoint, kwargs, message):
    if checkpoint:
        (tmp_path / "checkpoint.pt").write_bytes(b"")
    assert lost(tmp_path, signal.SIGTERM, **kwargs) == message.replace("RUN", str(tmp_path))


def test_sigterm_interrupts_like_ctrl_c_while_inside():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt) as err:
        with sigterm_interrupts():
            os.kill(os.getpid(), signal.SIGTERM)
            signal.sigtimedwait([], 1)  # let the handler run
    assert signal_of(err.value) == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before
    assert signal_of(KeyboardInterrupt()) == signal.SIGINT
    assert signal_of(Interrupted("stopped", signal.SIGTERM)) == signal.SIGTERM
