"""A bounded load test of ``seqlab serve`` on 127.0.0.1: throughput and latency percentiles, printed as JSON.

    python benchmarks/serve_load.py --requests 400 --concurrency 1 8 32 --threads 1

For each micro-batching setting (``--batch-wait-ms`` of 5 and 0, i.e. on and off) the script starts
``python -m seqlab serve MODEL`` as its own process (whole-process: what a client gets) on a free loopback port,
waits for ``GET /health``, then for each concurrency sends ``--requests`` POST /tag requests of one sentence
each (CoNLL-2003-style news sentences, cycled) from that many client threads, and records wall time,
requests/s, sentences/s and p50/p95/p99 latency, plus the server's RSS before and after. Every request is bounded
(``--timeout``) and the whole run by ``--time-cap``; failed requests are counted, never retried. Beside it, the
in-process figure: ``tag_many`` over the same sentences at batch 100 in this process, same threads.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import threading
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _start(model: str | None, port: int, wait_ms: float, threads: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "seqlab", "serve", *([model] if model else []), "--port", str(port),
               "--batch-wait-ms", str(wait_ms)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return server
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the server did not answer /health within 120 s")


def _load(url: str, requests: int, concurrency: int, timeout: float, cap: float) -> dict:
    latencies: list[float] = []
    failures = [0]
    counter = iter(range(requests))
    lock = threading.Lock()
    stop = time.monotonic() + cap

    def client() -> None:
        while time.monotonic() < stop:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            body = json.dumps({"text": SENTENCES[i % len(SENTENCES)]}).encode()
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=timeout) as answer:
                    answer.read()
                with lock:
                    latencies.append(time.perf_counter() - start)
            except (urllib.error.URLError, OSError):
                with lock:
                    failures[0] += 1

    start = time.perf_counter()
    workers = [threading.Thread(target=client) for _ in range(concurrency)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - start
    ordered = sorted(latencies)
    pct = lambda q: round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else None  # noqa: E731
    return {"concurrency": concurrency, "requests": len(latencies), "failed": failures[0], "wall_s": round(wall, 3),
            "requests_per_s": round(len(latencies) / wall, 1), "p50_ms": pct(0.50), "p95_ms": pct(0.95),
            "p99_ms": pct(0.99)}


def _in_process(model: str | None, threads: int, sentences: int) -> dict:
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="a run directory or .seqlab file (default: the installed model)")
    p.add_argument("--requests", type=int, default=400, help="requests per concurrency setting")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    p.add_argument("--threads", type=int, default=1, help="torch threads of the server and of the in-process run")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds one request may take")
    p.add_argument("--time-cap", type=float, default=120.0, help="seconds one concurrency setting may take")
    args = p.parse_args(argv)
    runs = []
    for wait_ms in (5.0, 0.0):
        port = _free_port()
        server = _start(args.model, port, wait_ms, args.threads)
        try:
            rss_start = _rss_mb(server.pid)
            for concurrency in args.concurrency:
                result = _load(f"http://127.0.0.1:{port}/tag", args.requests, concurrency, args.timeout, args.time_cap)
                runs.append({"batch_wait_ms": wait_ms, **result})
            runs[-1]["server_rss_mb_start_end"] = [round(rss_start, 1), round(_rss_mb(server.pid), 1)]
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(json.dumps({"benchmark": "serve_load", "model": args.model or "en-ner-conll03", "threads": args.threads,
                      "runs": runs, "in_process_tag_many_batch_100": _in_process(args.model, args.threads, 2000),
                      "load_average": os.getloadavg(), "machine": platform.machine(), "cpus": os.cpu_count(),
                      "command": " ".join(sys.argv)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
