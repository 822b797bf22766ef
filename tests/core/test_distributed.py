"""Data-parallel training (seqlab.core.distributed) with 2 gloo processes on the CPU."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

import seqlab
from seqlab.data.batching import make_batch
from tests.conftest import FIXTURES
from tests.helpers import tagger_trainer

NER = FIXTURES / "ner"
ROOT = Path(__file__).parents[2]
ROWS = [0, 1, 2, 3]  # the global batch; rank r of 2 takes ROWS[2r:2r+2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _config():
    return seqlab.read_config(NER / "tiny.yaml", ("train.threads=1",))


def _one_step(rank: int, port: int, out: str, touched_rows_min: int) -> None:
    """Rank ``rank`` of 2: one DDP step on its half of the global batch; rank 0 saves the parameters."""
    from seqlab.core import distributed
    from seqlab.core.distributed import init_world

    distributed.TOUCHED_ROWS_MIN = touched_rows_min
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE="2",
                      LOCAL_RANK=str(rank), SEQLAB_DATA=str(NER), SEQLAB_DIST_TIMEOUT="60")
    world = init_world(torch.device("cpu"))
    trainer = tagger_trainer(_config(), Path(out) / f"rank{rank}", world=world)
    assert (trainer.touched_rows is not None) == (touched_rows_min == 1)  # the tiny word table has < 1000 rows
    rows = torch.tensor(ROWS[2 * rank: 2 * rank + 2])
    trainer.model.train()
    params = [p for p in trainer.model.parameters() if p.requires_grad]
    trainer.step(make_batch(trainer.task.encoded["train"], rows), params, "test")
    if rank == 0:
        torch.save(trainer.model.state_dict(), Path(out) / "ddp.pt")
    torch.distributed.destroy_process_group()


@pytest.mark.parametrize("touched_rows_min", [1, 1000], ids=["word-table-by-touched-rows", "all-in-ddp"])
def test_one_ddp_step_equals_one_step_on_the_global_batch(tmp_path, monkeypatch, touched_rows_min):
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    single = tagger_trainer(_config(), tmp_path / "single")
    single.model.train()
    params = [p for p in single.model.parameters() if p.requires_grad]
    single.step(make_batch(single.task.encoded["train"], torch.tensor(ROWS)), params, "test")
    mp.start_processes(_one_step, args=(_free_port(), str(tmp_path), touched_rows_min), nprocs=2, start_method="spawn")
    ddp = torch.load(tmp_path / "ddp.pt", weights_only=True)
    for name, value in single.model.state_dict().items():
        assert torch.allclose(value, ddp[name], atol=1e-6), name


def _torchrun(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               "-m", "seqlab", "train", *argv, "--quiet"]
    env = {**os.environ, "SEQLAB_DATA": str(NER), "SEQLAB_DIST_TIMEOUT": "60", "OMP_NUM_THREADS": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)


def _why(done: subprocess.CompletedProcess) -> str:
    """A failed torchrun's story: every rank's error lines (a C++ abort names its exception only early in the
    output, before the launcher's summary) and the end of the output."""
    errors = [line for line in done.stderr.splitlines()
              if any(word in line for word in ("terminate", "what()", "Error", "error", "Enforce", "Signal"))]
    return "\n".join(errors[:40]) + "\n...\n" + done.stderr[-1500:]


def test_two_processes_train_resume_and_match_an_uninterrupted_run(tmp_path):
    tiny = str(NER / "tiny.yaml")
    whole = _torchrun(tiny, "--set", "train.epochs=3", "--set", "train.threads=1", "--output", str(tmp_path / "whole"))
    assert whole.returncode == 0, _why(whole)
    first = _torchrun(tiny, "--set", "train.epochs=2", "--set", "train.threads=1", "--output", str(tmp_path / "cut"))
    assert first.returncode == 0, _why(first)
    again = _torchrun("--resume", str(tmp_path / "cut"), "--set", "train.epochs=3")
    assert again.returncode == 0, _why(again)
    a, b = (json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("whole", "cut"))
    assert [h["loss"] for h in a["history"]] == [h["loss"] for h in b["history"]]
    assert a["test"] == b["test"]
    single = subprocess.run([sys.executable, "-m", "seqlab", "train", "--resume", str(tmp_path / "cut"), "--set",
                             "train.epochs=4"], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "SEQLAB_DATA": str(NER)})
    assert single.returncode == 2 and "trained by 2 process(es), and this is 1" in single.stderr


def _rank_one_pids(marker: str) -> list[int]:
    """Worker processes of rank 1 whose command line names ``marker`` (read from /proc; the launching
    process's own environment has no RANK)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            environ = (entry / "environ").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if marker in cmdline and b"RANK=1" in environ and "torch.distributed.run" not in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds the worker through /proc (Linux)")
def test_a_rank_that_dies_ends_the_job_in_bounded_time(tmp_path):
    out = tmp_path / "crash"
    command = [sys.executable, "-m", "seqlab", "train", str(NER / "tiny.yaml"), "--nproc", "2", "--set",
               "train.epochs=500", "--set", "train.patience=500", "--set", "train.threads=1", "--output", str(out),
               "--quiet"]
    env = {**os.environ, "SEQLAB_DATA": str(NER), "SEQLAB_DIST_TIMEOUT": "30", "OMP_NUM_THREADS": "1"}
    job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while not (out / "checkpoint.pt").exists() and time.monotonic() < deadline and job.poll() is None:
            time.sleep(0.5)
        victims = _rank_one_pids(str(out))
        assert victims, "rank 1 was not found running"
        os.kill(victims[0], signal.SIGKILL)
        started = time.monotonic()
        job.wait(timeout=90)
        assert job.returncode == 2 and time.monotonic() - started < 90
        error = job.stderr.read().decode()
        assert f"training process rank 1 of 2 was killed by SIGKILL (pid {victims[0]})" in error
        assert "Traceback" not in error
    finally:
        if job.poll() is None:
            job.kill()
        job.stderr.close()


def test_an_error_on_a_rank_names_the_rank(tmp_path, monkeypatch, capsys):
    from seqlab.cli import main

    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert main(["train", str(tmp_path / "missing.yaml"), "--output", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err.startswith("seqlab: error: rank 1 of 2: ")


@pytest.fixture
def one_process_group(tmp_path):
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'group'}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_touched_rows_average_the_rows_lookups_read(one_process_group):
    from seqlab.core.distributed import TouchedRows, World

    torch.manual_seed(0)
    table = torch.nn.Embedding(12, 3)
    rows = TouchedRows([table], World(0, 2))  # world size 2: each row's gradient halved, as the SUM of 2 ranks
    table(torch.tensor([[1, 4], [4, 9]])).pow(2).sum().backward()
    expected = table.weight.grad.clone() / 2
    rows()  # no start(): the rows are all-reduced then, synchronously
    assert torch.equal(table.weight.grad, expected)
    assert rows.steps == 1 and rows.seconds > 0  # what the trainer reports as row_average_ms
    table.eval()
    table(torch.tensor([5]))  # no mark outside training
    assert not rows.read[0].any()


def test_touched_rows_refuse_a_table_whose_gradient_reaches_rows_no_lookup_read(one_process_group):
    from seqlab.core.distributed import TouchedRows, World
    from seqlab.core.errors import SeqlabError

    table = torch.nn.Embedding(12, 3)
    rows = TouchedRows([table], World(0, 2))
    (table(torch.tensor([1, 2])).sum() + table.weight[7].sum()).backward()  # row 7 read without a lookup
    rows.start()
    with pytest.raises(SeqlabError, match="no lookup read"):
        rows()
