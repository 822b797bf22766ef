"""seqlab.serve.supervisor: the server stops gracefully (the requests in flight finish), and with --workers its
fork supervisor replaces a worker that dies and stops on a crash loop."""
from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="seqlab serve needs the serve extra: pip install 'seqlab[serve]'")
pytest.importorskip("uvicorn", reason="seqlab serve needs the serve extra: pip install 'seqlab[serve]'")

from seqlab.core.errors import SeqlabError  # noqa: E402
from seqlab.serve import make_server  # noqa: E402
from tests.serve.conftest import post, serve  # noqa: E402


def test_shutdown_finishes_the_requests_in_flight_and_stops_the_batcher(tagger):
    server, url = serve(tagger, batch_wait=0.5)  # a request waits half a second in the batcher
    with ThreadPoolExecutor(4) as pool:
        pending = [pool.submit(post, url + "/tag", json.dumps({"text": f"Peter Blackburn {i}"}).encode())
                   for i in range(4)]
        time.sleep(0.2)  # the requests are in the batcher now
        server.shutdown()
        answers = [p.result() for p in pending]
    assert [status for status, _ in answers] == [200] * 4
    assert server.stopped.is_set() and not server.service.batcher.worker.is_alive()
    with pytest.raises(urllib.error.URLError):  # no longer listening
        urllib.request.urlopen(url + "/health", timeout=5)


def _cli_server(model: str, tmp_path: Path, *options: str) -> tuple["subprocess.Popen[str]", str, list[str]]:
    """``seqlab serve MODEL --port 0 OPTIONS`` in a subprocess, once it has said where it listens: (process, url,
    the lines it printed up to that)."""
    import os
    import re
    import subprocess

    env = {**os.environ, "SEQLAB_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")])}
    server = subprocess.Popen([sys.executable, "-m", "seqlab", "serve", model, "--port", "0", *options],
                              stderr=subprocess.PIPE, text=True, env=env)
    lines: list[str] = []
    while not (found := re.search(r"on http://127\.0\.0\.1:(\d+)", lines[-1] if lines else "")):
        line = server.stderr.readline()
        if not line:
            server.kill()
            server.wait()
            raise AssertionError("".join(lines))
        lines.append(line)
    return server, f"http://127.0.0.1:{found.group(1)}", lines


@pytest.mark.parametrize("workers", [1, 2])
def test_the_cli_serves_a_model_file_with_its_manifest_and_stops_gracefully_on_sigterm(trained, tmp_path, workers):
    import signal

    from seqlab.apps.package import package

    manifest = package(trained["tagger"], tmp_path / "tiny.seqlab")
    server, url, lines = _cli_server(str(tmp_path / "tiny.seqlab"), tmp_path, "--batch-wait-ms", "500",
                                     "--workers", str(workers))
    try:
        assert f"{workers} worker process" in lines[-1]
        with urllib.request.urlopen(url + "/model", timeout=30) as answer:
            assert json.loads(answer.read())["manifest"]["members"] == manifest["members"]
        texts = [f"Peter Blackburn {i}" for i in range(8)]
        with ThreadPoolExecutor(8) as pool:  # with 2 workers: on whichever process accepted each connection
            pending = [pool.submit(post, url + "/tag", json.dumps({"text": t}).encode()) for t in texts]
            time.sleep(0.2)  # the requests wait in the batchers (500 ms) when the signal comes
            server.send_signal(signal.SIGTERM)
            answers = [p.result() for p in pending]
        assert [(status, body["documents"][0]["text"]) for status, body in answers] == [(200, t) for t in texts]
        assert server.wait(timeout=60) == 0
        assert "stopped" in server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_serve_workers_replace_a_worker_that_dies(trained, tmp_path):
    import os
    import re
    import signal

    server, url, _ = _cli_server(str(trained["tagger"]), tmp_path, "--workers", "2")

    def children() -> set[int]:
        with open(f"/proc/{server.pid}/task/{server.pid}/children", encoding="ascii") as handle:
            return {int(pid) for pid in handle.read().split()}

    try:
        deadline = time.monotonic() + 30  # the address is printed before the workers are forked
        while len(first := children()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(first) == 2
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        said = []  # the workers' own log lines come first
        while not re.search(rf"worker {victim} died \(status -9\); started worker \d+ in its place",
                            said[-1] if said else ""):
            said.append(server.stderr.readline())
            assert said[-1] and len(said) < 50, "".join(said)
        now = children()
        assert len(now) == 2 and victim not in now
        for i in range(6):  # whichever worker accepts, each answers
            status, body = post(url + "/tag", json.dumps({"text": f"Peter Blackburn {i}"}).encode())
            assert status == 200 and body["documents"][0]["text"] == f"Peter Blackburn {i}"
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_serve_workers_that_keep_dying_stop_the_server_with_an_error(tagger, monkeypatch):
    import os

    from seqlab.serve import supervisor

    monkeypatch.setattr(supervisor, "RESTARTS", 1)
    server = make_server(tagger, "test", port=0, workers=2)
    server.uvicorn.run = lambda sockets: os._exit(3)  # each worker (a fork of this process) dies at once
    with pytest.raises(SeqlabError, match=r"workers keep dying \(3 in 60 s, the last with status 3\); stopped"):
        server.serve_forever()
    assert server.pids == [] and server.stopped.is_set()
