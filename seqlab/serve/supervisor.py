"""The server of ``seqlab serve``: uvicorn on a listening socket, stopped gracefully by SIGINT/SIGTERM, and with
``workers`` > 1 the fork supervisor that starts worker processes and replaces one that dies."""
from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import socket
import threading
import time
from collections import deque
from typing import Any, Callable, Iterator

from seqlab.core.errors import SeqlabError
from seqlab.core.loaded import LoadedModel
from seqlab.serve.app import make_app, require_framework
from seqlab.serve.service import MAX_BYTES, MAX_TOKENS, ModelService

log = logging.getLogger("seqlab.serve")


_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _handling_signals(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """SIGINT and SIGTERM go to ``handler`` inside the block (only the main thread can set handlers; elsewhere
    the block runs with the handlers as they are), and the previous handlers come back after it."""
    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, handler) for sig in _SIGNALS} if main else {}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


#: ``serve --workers``: a worker that dies is replaced, unless more than this many per worker died within
#: :data:`RESTART_WINDOW` seconds (a crash loop: the server stops with an error instead).
RESTARTS = 5
RESTART_WINDOW = 60.0


def _ignore(signum: int, frame: Any) -> None:
    log.info("stopped by signal %d", signum)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=2048)


class Server:
    """A model's HTTP service, listening (its port known) but not yet answering: :meth:`serve_forever` answers
    until SIGINT/SIGTERM (in the main thread) or :meth:`shutdown`; either way the requests in flight finish.
    With ``workers`` > 1 it forks that many worker processes (after the model is loaded, so they share its
    memory), each with its own event loop and micro-batcher, all accepting on the one listening socket: the
    GIL no longer puts one process's HTTP and model work on a single core."""

    def __init__(self, service: ModelService, *, host: str = "127.0.0.1", port: int = 8080,
                 graceful_timeout: float = 30.0, workers: int = 1) -> None:
        import uvicorn

        if workers > 1 and not hasattr(os, "fork"):
            raise SeqlabError(f"--workers {workers}: worker processes need os.fork (not on this platform)")
        self.service, self.workers, self.pids = service, workers, []
        self.stopping, self.failed = False, ""
        self.socket = _bind(host, port)
        self.server_address = self.socket.getsockname()[:2]
        config = uvicorn.Config(make_app(service), log_config=None, access_log=False, lifespan="on",
                                timeout_graceful_shutdown=graceful_timeout, server_header=False)
        self.uvicorn = uvicorn.Server(config)
        self.stopped = threading.Event()

    def serve_forever(self) -> None:
        if self.workers > 1:
            self._supervise()
            return
        # uvicorn handles SIGINT/SIGTERM while serving (a graceful stop; a second SIGINT forces it) and raises
        # the signal again once stopped: the handlers in place then ignore it, so a graceful stop returns
        try:
            with _handling_signals(_ignore):
                self.uvicorn.run(sockets=[self.socket])
        finally:
            self.socket.close()
            self.stopped.set()

    def _fork_worker(self) -> int:
        pid = os.fork()
        if pid == 0:  # a worker: serve, then leave without the parent's clean-up
            code = 1
            try:
                self.workers, self.pids = 1, []
                self.serve_forever()
                code = 0
            finally:
                os._exit(code)
        return pid

    def _supervise(self) -> None:
        """Fork the workers, pass SIGINT/SIGTERM on to them (each stops gracefully) and wait for them all; a
        worker that dies meanwhile (killed, out of memory) is replaced by a new fork, unless workers keep dying
        (more than :data:`RESTARTS` per worker within :data:`RESTART_WINDOW` seconds): then all are stopped and
        this is an error."""
        self.stopping, restarts = False, deque()
        self.pids = [self._fork_worker() for _ in range(self.workers)]
        try:
            with _handling_signals(lambda signum, frame: self._stop_workers()):
                while self.pids:
                    pid, status = os.wait()
                    if pid not in self.pids:
                        continue
                    self.pids.remove(pid)
                    code = os.waitstatus_to_exitcode(status)
                    if self.stopping:
                        if code:
                            log.warning("worker %d stopped with status %d", pid, code)
                        continue
                    now = time.monotonic()
                    restarts.append(now)
                    while now - restarts[0] > RESTART_WINDOW:
                        restarts.popleft()
                    if len(restarts) > RESTARTS * self.workers:
                        self._stop_workers()
                        self.failed = (f"serve: workers keep dying ({len(restarts)} in {RESTART_WINDOW:.0f} s, the "
                                       f"last with status {code}); stopped")
                        continue
                    self.pids.append(self._fork_worker())
                    log.warning("worker %d died (status %d); started worker %d in its place", pid, code, self.pids[-1])
        finally:
            self.socket.close()
            self.stopped.set()
        if self.failed:
            raise SeqlabError(self.failed)

    def _stop_workers(self) -> None:
        self.stopping = True
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def shutdown(self, timeout: float | None = 60.0) -> None:
        """Stop accepting connections, finish the requests in flight and wait until the server has stopped."""
        self.uvicorn.should_exit = True
        self._stop_workers()
        self.stopped.wait(timeout)


def make_server(model: LoadedModel, name: str, *, host: str = "127.0.0.1", port: int = 8080,
                max_bytes: int = MAX_BYTES, max_tokens: int = MAX_TOKENS, batch_wait: float = 0.005,
                max_batch: int = 256, manifest: dict[str, Any] | None = None, workers: int = 1) -> Server:
    """An HTTP server for ``model`` (not yet serving: call ``serve_forever``); port 0 picks a free port.
    Concurrent requests arriving within ``batch_wait`` seconds (up to ``max_batch`` texts) are run together.
    Without the ``serve`` extra this fails with an install hint."""
    require_framework()
    # the loaded model's objects live as long as the server: leave them out of the garbage collector's full
    # collections (one over a CoNLL-2003 model's vocabularies stalls every request in flight for about 0.4 s)
    gc.collect()
    gc.freeze()
    service = ModelService(model, name, manifest=manifest, max_bytes=max_bytes, max_tokens=max_tokens,
                           batch_wait=batch_wait, max_batch=max_batch)
    return Server(service, host=host, port=port, workers=workers)
