"""A bounded load test of ``seqlab serve`` on 127.0.0.1: throughput and latency percentiles, printed as JSON.

    python -m benchmarks.serve_load --requests 2000 --concurrency 1 8 32 --threads 1
    python -m benchmarks.serve_load --soak 600 --concurrency 8

For each micro-batching setting (``--batch-wait-ms``, default 5 and 0, i.e. on and off) the script starts
``python -m seqlab serve MODEL`` as its own process (whole-process: what a client gets) on a free loopback port,
waits for ``GET /health``, then for each concurrency sends ``--requests`` POST /tag requests of one sentence each
(CoNLL-2003-style news sentences, cycled) over that many keep-alive connections of one lean asyncio client, and
records wall time, requests/s and p50/p95/p99 latency, plus the server's RSS before and after (with
``--workers``: summed over its processes). Every request is bounded (``--timeout``) and each setting by
``--time-cap``; failed requests (no answer, or not 200) are counted, never retried; the server's CPU time per
request (all its processes; steadier than wall time on a busy machine) and the client's (it shares the cores) are
recorded too. Beside it, the in-process figure: ``tag_many`` over the same sentences at batch 100 in this process,
same threads, measured before and after the servers (the mean is the reference), and each run's ratio to it.

With ``--soak SECONDS`` it instead sends steady load (the first ``--concurrency``, micro-batching on) for that
long and reports the server's RSS at the start (after a warm-up), every ``--rss-every`` seconds and at the end.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

SENTENCES = [
    "German Chancellor Angela Merkel met French President Emmanuel Macron in Berlin on Tuesday.",
    "Shares of Volkswagen AG rose 3.5 percent in Frankfurt after the carmaker cut jobs in Wolfsburg.",
    "Mr. Smith, who joined Goldman Sachs in 1998, told Reuters that rates would stay on hold.",
    "Brazil beat Argentina 2-1 in a World Cup qualifier in Rio de Janeiro on Sunday.",
    "The United Nations Security Council will meet in New York next week, diplomats said.",
]
BODIES = [json.dumps({"text": s}).encode() for s in SENTENCES]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` and its descendants (shared pages of forked workers counted in each)."""
    total = 0.0
    for each in _tree(pid):
        for line in Path(f"/proc/{each}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) / 1024
    return round(total, 1)


def start_server(model: str | None, port: int, wait_ms: float, threads: int,
                 extra: tuple[str, ...] = ()) -> subprocess.Popen:
    """``python -m seqlab serve`` on ``port``, once it answers ``GET /health``."""
    command = [sys.executable, "-m", "seqlab", "serve", *([model] if model else []), "--port", str(port),
               "--batch-wait-ms", str(wait_ms), *extra]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return server
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    server.kill()
    raise SystemExit(f"the server did not answer /health within 120 s: {' '.join(command)}")


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (a server's ``--workers`` processes)."""
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in task.read_text().split():
            pids += _tree(int(child))
    return pids


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds so far of process ``pid`` and its descendants."""
    total = 0
    for each in _tree(pid):
        fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _percentiles(latencies: list[float]) -> dict:
    ordered = sorted(latencies)
    pct = lambda q: round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else None  # noqa: E731
    return {"p50_ms": pct(0.50), "p95_ms": pct(0.95), "p99_ms": pct(0.99)}


class _Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection of the load client: a request is written whole, and the answer is
    complete once its headers and ``content-length`` bytes of body have arrived (what uvicorn sends)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0 or self.waiter is None or self.waiter.done():
            return
        head = bytes(self.buffer[:end]).lower()
        at = head.find(b"content-length:")
        line_end = head.find(b"\r\n", at)
        length = int(head[at + 15: line_end if line_end >= 0 else len(head)]) if at >= 0 else 0
        if len(self.buffer) >= end + 4 + length:
            del self.buffer[:end + 4 + length]
            self.waiter.set_result(int(head[9:12]))

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("the server closed the connection"))

    async def ask(self, request: bytes, timeout: float) -> int:
        """The status of the answer to ``request`` (raises on a closed connection or after ``timeout`` s)."""
        loop = asyncio.get_running_loop()
        self.waiter = waiter = loop.create_future()
        self.transport.write(request)
        timer = loop.call_later(timeout, lambda: waiter.done() or waiter.set_exception(TimeoutError()))
        try:
            return await waiter
        finally:
            timer.cancel()


def load(port: int, requests: int, concurrency: int, timeout: float, cap: float) -> dict:
    """``requests`` POST /tag from ``concurrency`` keep-alive connections of one asyncio client (a lean one: its
    CPU shares the machine with the server's), stopping at ``cap`` seconds."""
    head = ("POST /tag HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Content-Length: {n}\r\n\r\n")
    wires = [head.format(port=port, n=len(body)).encode() + body for body in BODIES]
    latencies: list[float] = []
    failures = [0]
    counter = iter(range(requests))

    async def client(stop: float) -> None:
        loop = asyncio.get_running_loop()
        connection: _Connection | None = None
        while time.monotonic() < stop and (i := next(counter, None)) is not None:
            start = time.perf_counter()
            try:
                if connection is None:
                    _, connection = await loop.create_connection(_Connection, "127.0.0.1", port)
                ok = await connection.ask(wires[i % len(wires)], timeout) == 200
            except (OSError, TimeoutError):
                if connection is not None and connection.transport is not None:
                    connection.transport.close()
                connection, ok = None, False  # a fresh connection for the next request
            if ok:
                latencies.append(time.perf_counter() - start)
            else:
                failures[0] += 1
        if connection is not None and connection.transport is not None:
            connection.transport.close()

    async def run_all() -> None:
        stop = time.monotonic() + cap
        await asyncio.gather(*(client(stop) for _ in range(concurrency)))

    cpu, start = time.process_time(), time.perf_counter()
    loop = _new_loop()
    try:
        loop.run_until_complete(run_all())
    finally:
        loop.close()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"concurrency": concurrency, "requests": len(latencies), "failed": failures[0], "wall_s": round(wall, 3),
            "requests_per_s": round(len(latencies) / wall, 1), **_percentiles(latencies),
            "client_cpu_ms_per_request": round(1000 * cpu / max(1, len(latencies) + failures[0]), 3)}


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's event loop when installed (the serve extra has it: less client CPU per request), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def in_process(model: str | None, threads: int, sentences: int) -> dict:
    """``tag_many`` over the benchmark's sentences at batch 100 in this process."""
    import torch

    import seqlab

    torch.set_num_threads(threads)
    tagger = seqlab.load(model, "cpu")
    texts = [SENTENCES[i % len(SENTENCES)] for i in range(sentences)]
    list(tagger.tag_many(texts[:100], batch_size=100))  # warm-up
    start = time.perf_counter()
    list(tagger.tag_many(texts, batch_size=100))
    wall = time.perf_counter() - start
    return {"sentences": sentences, "wall_s": round(wall, 3), "sentences_per_s": round(sentences / wall, 1)}


def _workers(args: argparse.Namespace) -> tuple[str, ...]:
    """The server's ``--workers`` option (left out for one: a server from before the option still runs)."""
    return ("--workers", str(args.workers)) if args.workers != 1 else ()


def soak(args: argparse.Namespace) -> dict:
    """Steady load for ``args.soak`` seconds, with the server's RSS along the way."""
    port = _free_port()
    server = start_server(args.model, port, args.batch_wait_ms[0], args.threads, _workers(args))
    try:
        warm = load(port, 500, args.concurrency[0], args.timeout, 60)  # warm-up: RSS is measured after it
        rss = [[0, _rss_mb(server.pid)]]
        latencies_runs, totals, begin = [], {"requests": 0, "failed": 0}, time.monotonic()
        while (elapsed := time.monotonic() - begin) < args.soak:
            step = min(args.rss_every, args.soak - elapsed)
            run = load(port, 10**9, args.concurrency[0], args.timeout, step)
            totals["requests"] += run["requests"]
            totals["failed"] += run["failed"]
            latencies_runs.append(run)
            rss.append([round(time.monotonic() - begin), _rss_mb(server.pid)])
        wall = time.monotonic() - begin
    finally:
        server.terminate()
        server.wait(timeout=60)
    start_mb, end_mb = rss[0][1], rss[-1][1]
    return {"benchmark": "serve_soak", "model": args.model or "en-ner-conll03", "threads": args.threads,
            "workers": args.workers,
            "batch_wait_ms": args.batch_wait_ms[0], "concurrency": args.concurrency[0], "seconds": round(wall, 1),
            "warm_up": {"requests": warm["requests"], "failed": warm["failed"]}, **totals,
            "requests_per_s": round(totals["requests"] / wall, 1),
            "p99_ms_worst_interval": max(r["p99_ms"] or 0 for r in latencies_runs),
            "rss_mb_start": start_mb, "rss_mb_end": end_mb,
            "rss_growth_pct": round(100 * (end_mb - start_mb) / start_mb, 2), "rss_mb_every": rss,
            "server_exit_code": server.returncode}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="a run directory or .seqlab file (default: the installed model)")
    p.add_argument("--requests", type=int, default=2000, help="requests per concurrency setting")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    p.add_argument("--batch-wait-ms", type=float, nargs="+", default=[5.0, 0.0],
                   help="micro-batching settings to compare (0: only the requests already waiting)")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the server and of the in-process run")
    p.add_argument("--workers", type=int, default=1, help="the server's worker processes (seqlab serve --workers)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds one request may take")
    p.add_argument("--time-cap", type=float, default=60.0, help="seconds one concurrency setting may take")
    p.add_argument("--soak", type=float, metavar="SECONDS", help="steady load for this long, with RSS over time")
    p.add_argument("--rss-every", type=float, default=30.0, help="seconds between RSS samples in a soak")
    args = p.parse_args(argv)
    command = "python -m benchmarks.serve_load " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.soak:
        print(json.dumps({**soak(args), "load_average": os.getloadavg(), "cpus": os.cpu_count(),
                          "command": command}, indent=1))
        return 0
    runs, references = [], [in_process(args.model, args.threads, 2000)]
    for wait_ms in args.batch_wait_ms:
        port = _free_port()
        server = start_server(args.model, port, wait_ms, args.threads, _workers(args))
        try:
            load(port, 200, 8, args.timeout, 30)  # warm-up
            rss_start = _rss_mb(server.pid)
            for concurrency in args.concurrency:
                cpu = _cpu_s(server.pid)
                result = load(port, args.requests, concurrency, args.timeout, args.time_cap)
                cpu_ms = 1000 * (_cpu_s(server.pid) - cpu) / max(1, result["requests"])
                runs.append({"batch_wait_ms": wait_ms, **result, "server_cpu_ms_per_request": round(cpu_ms, 3)})
            runs[-1]["server_rss_mb_start_end"] = [rss_start, _rss_mb(server.pid)]
        finally:
            server.terminate()
            server.wait(timeout=60)
    references.append(in_process(args.model, args.threads, 2000))  # before and after: the machine's load drifts
    reference = {"sentences": 2000, "sentences_per_s_before_after": [r["sentences_per_s"] for r in references],
                 "sentences_per_s": round(sum(r["sentences_per_s"] for r in references) / 2, 1)}
    for run in runs:
        run["of_in_process"] = round(run["requests_per_s"] / reference["sentences_per_s"], 3)
    print(json.dumps({"benchmark": "serve_load", "model": args.model or "en-ner-conll03", "threads": args.threads,
                      "workers": args.workers,
                      "runs": runs, "in_process_tag_many_batch_100": reference, "load_average": os.getloadavg(),
                      "machine": platform.machine(), "cpus": os.cpu_count(), "command": command}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
