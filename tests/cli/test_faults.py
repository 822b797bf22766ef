"""Faults a user meets without meaning to: a full disk, a file where a folder is expected, a run directory
used by two trainings, a config.yaml from another run. Each is one ``seqlab: error:`` line (exit 2), and
the files written before the fault stay intact."""
from __future__ import annotations

import builtins
import contextlib
import errno
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch

import features.atomic
from seqlab.cli import main
from seqlab.core import rundir
from tests.conftest import forget_new_log_handlers

NER = Path(__file__).parents[1] / "fixtures" / "ner"
TINY = NER / "tiny.yaml"
FAST = ["--set", "train.epochs=1", "--set", "train.threads=1", "--quiet"]


@pytest.fixture(scope="module", autouse=True)
def data_env():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SEQLAB_DATA", str(NER))
        yield NER


@pytest.fixture(autouse=True)
def _no_leaked_handlers():
    with forget_new_log_handlers():
        yield


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, data_env) -> Path:
    run = tmp_path_factory.mktemp("faults") / "run"
    with forget_new_log_handlers(), contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", str(TINY), *FAST, "--output", str(run)]) == 0
    return run


def one_error_line(err: str) -> str:
    assert "Traceback" not in err and "Logging error" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("seqlab: error: "), err
    return lines[0]


class _FullDisk:
    """A file opened for writing on a full disk: every write fails with ENOSPC (and names no file)."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def __enter__(self) -> "_FullDisk":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.handle.close()

    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self.handle.fileno()


def disk_full_for(monkeypatch, name: str, after: int = 0) -> None:
    """Let the atomic writes of the file called ``name`` succeed ``after`` times, then fail as on a full disk."""
    calls = {"n": 0}

    def fake_open(path, mode="r", *args, **kwargs):
        handle = builtins.open(path, mode, *args, **kwargs)
        if Path(path).name.startswith(f".{name}.") and "w" in mode:
            calls["n"] += 1
            if calls["n"] > after:
                return _FullDisk(handle)
        return handle

    monkeypatch.setattr(features.atomic, "open", fake_open, raising=False)


# ---------------------------------------------------------------- a full disk


def test_a_full_disk_during_training_keeps_the_last_good_checkpoint(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    disk_full_for(monkeypatch, "checkpoint.pt", after=1)  # epoch 1's checkpoint is written, epoch 2's is not
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["train", str(TINY), "--set", "train.epochs=3", "--set", "train.threads=1", "--quiet",
                     "--output", str(run)])
    assert code == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"{run / 'checkpoint.pt'}: No space left on device" in line
    assert json.loads(rundir.load_checkpoint(run)["state"])["epoch"] == 1
    assert not list(run.glob(".*.tmp"))
    monkeypatch.undo()
    assert main(["train", "--resume", str(run), "--quiet"]) == 0  # the run goes on from epoch 1
    assert json.loads((run / "metrics.json").read_text())["epochs"] == 3


def test_a_full_disk_while_writing_train_log_is_one_line(tmp_path, monkeypatch, capsys):
    real_emit = rundir._RunLogHandler.emit

    def emit(self, record):
        if "epoch 1:" in record.getMessage():
            self.stream = _FullDisk(self.stream)
        real_emit(self, record)

    monkeypatch.setattr(rundir._RunLogHandler, "emit", emit)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", str(TINY), *FAST, "--output", str(tmp_path / "run")]) == 2
    assert "No space left on device" in one_error_line(capsys.readouterr().err)


def test_a_full_disk_during_eval_output_leaves_no_partial_file(run_dir, tmp_path, monkeypatch, capsys):
    out = tmp_path / "pred.txt"
    out.write_text("older predictions\n")
    disk_full_for(monkeypatch, "pred.txt")
    assert main(["eval", str(run_dir), str(NER / "dev.txt"), "--output", str(out)]) == 2
    assert f"{out}: No space left on device" in one_error_line(capsys.readouterr().err)
    assert out.read_text() == "older predictions\n"
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_full_disk_under_tag_output_is_one_line(run_dir, monkeypatch, capsys):
    class FullStdout(io.StringIO):
        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(sys, "stdout", FullStdout())
    assert main(["tag", str(run_dir), str(NER / "dev.txt")]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        "seqlab: error: standard output: No space left on device; nothing was half-written: files are written "
        "whole or not at all")


def test_a_full_disk_during_features_brown_out(tmp_path, monkeypatch, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat . the dog sat on the log .\n", encoding="utf-8")
    out = tmp_path / "paths.txt"
    disk_full_for(monkeypatch, "paths.txt")
    assert main(["features", "brown", "--corpus", str(corpus), "--clusters", "2", "--out", str(out), "--quiet"]) == 2
    assert f"{out}: No space left on device" in one_error_line(capsys.readouterr().err)
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))


def test_a_torch_save_on_a_full_disk_raises_the_os_error_not_torchs_runtime_error(tmp_path, monkeypatch):
    disk_full_for(monkeypatch, "model.pt")
    with pytest.raises(OSError) as err:
        rundir.save_weights(tmp_path, torch.nn.Linear(2, 2))
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(tmp_path / "model.pt")


# ---------------------------------------------------------------- files where folders are expected, and back


def test_train_output_naming_a_file(tmp_path, capsys):
    existing = tmp_path / "notes.txt"
    existing.write_text("keep me")
    assert main(["train", str(TINY), *FAST, "--output", str(existing)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"--output {existing}: a file, not a run directory" in line
    assert existing.read_text() == "keep me"


def test_eval_output_naming_a_folder(run_dir, tmp_path, capsys):
    assert main(["eval", str(run_dir), str(NER / "dev.txt"), "--output", str(tmp_path)]) == 2
    assert f"{tmp_path}: a folder; expected the name of a file to write" in one_error_line(capsys.readouterr().err)
    assert not list(tmp_path.parent.glob(".*.tmp"))


# ---------------------------------------------------------------- a config.yaml from another run


def test_resume_with_a_config_from_another_run(run_dir, tmp_path, capsys):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    config = (copy / "config.yaml").read_text().replace("hidden: 16", "hidden: 32")
    (copy / "config.yaml").write_text(config)
    assert main(["train", "--resume", str(copy), "--quiet"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"{copy / 'checkpoint.pt'}: the saved model does not fit the model {copy / 'config.yaml'} describes" in line
    assert "is config.yaml from another run" in line and "size mismatch for" in line
    assert main(["tag", str(copy), str(NER / "dev.txt")]) == 2
    assert f"{copy / 'model.pt'}: the saved model does not fit" in one_error_line(capsys.readouterr().err)


# ---------------------------------------------------------------- one training per run directory


def test_a_second_training_on_a_locked_run_directory_is_refused(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time\n"
         f"fd = os.open({str(run / rundir.LOCK)!r}, os.O_RDWR | os.O_CREAT)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX); os.ftruncate(fd, 0); os.pwrite(fd, b'%d\\n' % os.getpid(), 0)\n"
         "print('locked', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    try:
        assert main(["train", str(TINY), *FAST, "--output", str(run)]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert f"{run} is in use by another seqlab training (pid {holder.pid})" in line
        assert not (run / "config.yaml").exists()
    finally:
        holder.communicate("")
    assert main(["train", str(TINY), *FAST, "--output", str(run)]) == 0  # the lock went with its process


def test_a_failed_run_leaves_the_run_another_training_started_in_the_parent_they_share(tmp_path, monkeypatch,
                                                                                       capsys):
    """Two trainings whose --output folders share a new parent: while the first one is reading its (bad) data, the
    second makes its run directory in that parent and writes to it. The first one's clean-up removes its own run
    directory only."""
    from seqlab.core import trainer

    ours, theirs = tmp_path / "runs" / "a", tmp_path / "runs" / "b"
    real = trainer.Trainer

    def other_training_starts_meanwhile(*args: Any, **kwargs: Any) -> Any:
        theirs.mkdir(parents=True)
        (theirs / "config.yaml").write_text("data: {train: train.txt}\n", encoding="utf-8")
        return real(*args, **kwargs)

    monkeypatch.setattr(trainer, "Trainer", other_training_starts_meanwhile)
    assert main(["train", str(TINY), *FAST, "--set", "data.train=missing.txt", "--output", str(ours)]) == 2
    assert "missing.txt" in one_error_line(capsys.readouterr().err)
    assert not ours.exists()
    assert (theirs / "config.yaml").is_file()


def test_a_failed_run_keeps_a_run_directory_it_did_not_make(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert main(["train", str(TINY), *FAST, "--set", "data.train=missing.txt", "--output", str(out)]) == 2
    assert "missing.txt" in one_error_line(capsys.readouterr().err)
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_two_trainings_in_one_process_on_one_directory(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    with rundir.run_lock(run):
        pass  # re-entrant and released: a later run may take it
    with rundir.run_lock(run), rundir.run_lock(run):
        assert (run / rundir.LOCK).read_text() == f"{os.getpid()}\n"


def test_stale_temporary_files_are_removed_on_the_next_start(run_dir, tmp_path, caplog):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    (copy / "metrics.json").unlink()
    for name in (".checkpoint.pt.abc123.tmp", ".model.pt.xyz.tmp"):
        (copy / name).write_bytes(b"\0" * 1000)
    (copy / "notes.tmp").write_text("not ours")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", "--resume", str(copy), "--quiet"]) == 0
    assert not list(copy.glob(".*.tmp")) and (copy / "notes.tmp").exists()
    assert "removed 0.0 MB of temporary files" in caplog.text


# ---------------------------------------------------------------- kill -9 and resume


def _train_process(run: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "SEQLAB_DATA": str(NER), "PYTHONPATH": str(Path(__file__).parents[2])}
    return subprocess.Popen([sys.executable, "-m", "seqlab.cli", "train", *extra, "--quiet"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow  # three training processes: most of a minute on a busy machine
def test_a_training_killed_mid_run_resumes_to_the_uninterrupted_result(tmp_path):
    """kill -9 while the second epoch's checkpoint may be being written; the resumed run clears the
    temporary file and ends bit-identical to a run never interrupted."""
    settings = ["--set", "train.epochs=6", "--set", "train.threads=1", "--set", "train.batch_size=1"]
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert _train_process(whole, str(TINY), *settings, "--output", str(whole)).wait() == 0
    process = _train_process(killed, str(TINY), *settings, "--output", str(killed))
    while not (killed / rundir.CHECKPOINT).exists() and process.poll() is None:
        time.sleep(0.005)  # kill it as soon as the first epoch is checkpointed: it is writing the next one
    process.kill()
    process.wait()
    (killed / ".checkpoint.pt.left-by-a-kill.tmp").write_bytes(b"\0" * 100)
    resumed = _train_process(killed, "--resume", str(killed))
    assert resumed.wait() == 0, resumed.stderr.read()
    assert not list(killed.glob(".*.tmp"))
    a, b = json.loads((whole / "metrics.json").read_text()), json.loads((killed / "metrics.json").read_text())
    assert [e["loss"] for e in a["history"]] == [e["loss"] for e in b["history"]]
    wa, wb = rundir.load_weights(whole), rundir.load_weights(killed)
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


# ---------------------------------------------------------------- Ctrl-C and SIGTERM

def _interrupt_in_epoch(monkeypatch, epoch: int) -> None:
    """Ctrl-C during the training of ``epoch``."""
    from seqlab.core.trainer import Trainer

    real = Trainer.train_epoch

    def train_epoch(self: Trainer, number: int) -> dict:
        if number == epoch:
            raise KeyboardInterrupt
        return real(self, number)

    monkeypatch.setattr(Trainer, "train_epoch", train_epoch)


def test_an_interrupt_after_a_saved_epoch_says_how_to_resume(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    _interrupt_in_epoch(monkeypatch, 2)
    assert main(["train", str(TINY), "--set", "train.epochs=3", "--quiet", "--output", str(run)]) == 130
    assert capsys.readouterr().err.strip() == (
        f"seqlab: interrupted by SIGINT in epoch 2 of 3: its partial epoch is lost; the run is saved after epoch 1; "
        f"seqlab train --resume {run} continues it")
    monkeypatch.undo()
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", "--resume", str(run), "--quiet"]) == 0
    assert json.loads((run / "metrics.json").read_text())["epochs"] == 3


def test_an_interrupt_before_an_epoch_was_saved_says_to_start_again(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    _interrupt_in_epoch(monkeypatch, 1)
    assert main(["train", str(TINY), *FAST, "--output", str(run)]) == 130
    assert capsys.readouterr().err.strip() == ("seqlab: interrupted by SIGINT in epoch 1 of 1, before an epoch was "
                                               "saved: nothing to resume; run the same command again")


def test_sigterm_during_training_is_one_line_saying_how_to_resume(tmp_path):
    run = tmp_path / "run"
    process = _train_process(run, str(TINY), "--set", "train.epochs=100000", "--set", "train.patience=100000",
                             "--output", str(run))
    deadline = time.monotonic() + 120
    while not (run / rundir.CHECKPOINT).exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.terminate()  # SIGTERM, as `kill` and job schedulers send it
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + 15, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("seqlab: interrupted by SIGTERM in epoch ") and ": its partial epoch is lost" in last
    assert last.endswith(f"seqlab train --resume {run} continues it")
