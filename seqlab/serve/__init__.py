"""``seqlab serve``: a loaded model behind a JSON-over-HTTP service (Starlette under uvicorn, the ``serve`` extra).

Endpoints:

* ``GET /health`` → ``{"status": "ok", "model": ..., "task": ...}``;
* ``GET /model`` → the task, labels, resolved config and, for a ``.seqlab`` file, its manifest;
* ``POST /tag`` (a tagger) with ``{"text": "..."}`` or ``{"texts": [...]}`` → ``{"documents": [...]}``, each
  document with its spans (text, label, character offsets, confidence) and sentences (tokens, offsets, labels,
  spans), as :mod:`seqlab.core.schema` writes them;
  with pre-tokenised sentences ``{"tokens": [["EU", "rejects", ...], ...]}`` → ``{"sentences": [...]}``
  (offsets into the tokens joined by single spaces);
* ``POST /classify`` (a relation model) with ``{"sentences": ["The <e1>fire</e1> ... <e2>smoke</e2>."]}`` →
  ``{"relations": [...]}``.

A bad request gets a 4xx answer ``{"error": "..."}`` naming the field, never a traceback: 400 for a body that is
not JSON, 413 for a body over ``max_bytes``, 422 for a field of the wrong shape or a request over ``max_tokens``
tokens (for raw text: its whitespace-separated words). Concurrent requests are micro-batched
(:class:`MicroBatcher`): the requests that arrive within ``batch_wait`` seconds (up to ``max_batch`` texts), or
while the model is busy, go together to one worker thread, which runs the model once on all of them and answers
each with its own part; the event loop only parses, validates and encodes, and never waits on the model. On
SIGINT or SIGTERM uvicorn stops accepting connections and finishes the requests in flight, then the batcher's
worker is stopped. The POST endpoints skip Starlette's routing and request objects (a lean ASGI handler; JSON by
orjson when installed); with ``workers`` > 1, that many forked processes answer on the one port.
"""
from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import queue
import signal
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from seqlab.core.errors import SeqlabError
from seqlab.core.schema import encode_document, encode_relation, encode_sentence

try:
    import orjson
except ImportError:  # the standard library's json then: the same answers, slower
    orjson = None

log = logging.getLogger("seqlab.serve")
MAX_BYTES = 1_000_000
MAX_TOKENS = 20_000
INSTALL_HINT = "pip install 'seqlab[serve]'"


class BadRequest(Exception):
    """A request the service refuses, with the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _Job:
    """One request's items (texts, token lists or marked sentences), waiting for the model."""

    kind: str
    items: list[Any]
    future: asyncio.Future
    arrived: float  # the event loop's clock


_Answer = tuple[_Job, Any, "BaseException | None"]


class MicroBatcher:
    """Runs a model on the items of concurrent requests together, in one worker thread, so that the event loop
    never waits on the model. The event loop collects requests, and hands them over together once the worker is
    free and either all the clients it last saw are back (the requests of its last batch and those that came
    meanwhile), or ``max_items`` items wait, or ``wait`` seconds have passed since the first of them arrived or
    the worker became free, whichever was later. (Handing over whatever waits the moment the worker is free
    alternates a batch of the one request that came in last with a batch of all the others: at concurrency 32,
    batches of 1 and 31.) Once such a wait runs out (clients that do not come back at once: independent
    senders keeping the model saturated), requests go to the worker as with ``wait`` 0 (the moment it is free),
    until, when it becomes free, three quarters of the clients expected wait already. The worker calls ``run(kind, items)`` once per kind
    of request in the batch and answers all of them with one wake-up of the event loop, each with its own
    slice. A :class:`SeqlabError` from a batch of several requests is retried request by request, so that one
    bad request does not fail the others."""

    def __init__(self, run: Callable[[str, list[Any]], list[Any]], *, wait: float = 0.005, max_items: int = 256
                 ) -> None:
        self.run, self.wait, self.max_items = run, wait, max_items
        self.pending: list[_Job] = []  # on the event loop: requests not yet handed to the worker
        self.pending_items = 0  # their items
        self.expected = 0  # the requests of the last batch and those that came meanwhile: the clients expected
        self.freed = float("-inf")  # when the worker last became free (the event loop's clock)
        self.patient = True  # wait for the clients expected (else hand over as with ``wait`` 0)
        self.busy = False  # on the event loop: a batch is with the worker
        self.timer: asyncio.TimerHandle | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.batches: queue.SimpleQueue[list[_Job] | None] = queue.SimpleQueue()
        # started by the first request, in the process that serves it (a forked worker of ``--workers``)
        self.worker = threading.Thread(target=self._serve, name="seqlab-batcher", daemon=True)

    async def submit(self, kind: str, items: list[Any]) -> list[Any]:
        """The model's results for ``items`` (awaited on the event loop; the model runs in the worker thread)."""
        if self.loop is None:
            self.worker.start()
        self.loop = asyncio.get_running_loop()
        job = _Job(kind, items, self.loop.create_future(), self.loop.time())
        self.pending.append(job)
        self.pending_items += len(items)
        if not self.busy:
            self._when_ready()
        return await job.future

    def _when_ready(self) -> None:
        """On the event loop, the worker free: hand the waiting requests over now, or once the first has waited
        ``wait`` seconds."""
        if not self.pending:
            return
        if (self.wait <= 0 or not self.patient or self.pending_items >= self.max_items
                or len(self.pending) >= self.expected > 0):
            self._dispatch()
        elif self.timer is None:
            self.timer = self.loop.call_at(max(self.pending[0].arrived, self.freed) + self.wait, self._timed_out)

    def _timed_out(self) -> None:
        if self.pending and self.pending[0].arrived <= self.freed:  # the wait began when the worker became free
            self.patient = False
        self._dispatch()

    def _dispatch(self) -> None:
        """On the event loop: hand the waiting requests (up to ``max_items`` items, at least one request) to the
        worker, unless it is busy."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.busy or not self.pending:
            return
        count = 0
        for taken, job in enumerate(self.pending):
            if taken and count + len(job.items) > self.max_items:
                break
            count += len(job.items)
        else:
            taken = len(self.pending)
        batch, self.pending = self.pending[:taken], self.pending[taken:]
        self.pending_items -= count
        self.busy = True
        self.batches.put(batch)

    def _finished(self, answers: list[_Answer]) -> None:
        """On the event loop: answer each request of a batch (a request whose client left is skipped), then
        hand the requests that arrived meanwhile to the worker (now or soon)."""
        for job, result, error in answers:
            if not job.future.done():
                if error is None:
                    job.future.set_result(result)
                else:
                    job.future.set_exception(error)
        self.busy, self.expected, self.freed = False, len(answers) + len(self.pending), self.loop.time()
        if 4 * len(self.pending) >= 3 * self.expected:  # most clients came back while the worker was busy
            self.patient = True
        self._when_ready()

    def close(self, timeout: float | None = None) -> None:
        """Stop the worker once the batch it has is done (call when no request is waiting any more)."""
        if self.worker.is_alive():
            self.batches.put(None)
            self.worker.join(timeout)

    def _serve(self) -> None:
        while (batch := self.batches.get()) is not None:
            answers: list[_Answer] = []
            for kind in dict.fromkeys(job.kind for job in batch):
                answers += self._run_group(kind, [job for job in batch if job.kind == kind])
            loop = self.loop
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(self._finished, answers)

    def _run_group(self, kind: str, jobs: list[_Job]) -> list[_Answer]:
        try:
            results = self.run(kind, [item for job in jobs for item in job.items])
        except SeqlabError as err:
            if len(jobs) > 1:  # find the request at fault: each alone
                return [answer for job in jobs for answer in self._run_group(kind, [job])]
            return [(jobs[0], None, err)]
        except Exception as err:  # every waiting request learns of it; the worker goes on
            log.exception("the model failed on a batch of %d requests", len(jobs))
            return [(job, None, err) for job in jobs]
        out, start = [], 0
        for job in jobs:
            out.append((job, results[start: start + len(job.items)], None))
            start += len(job.items)
        return out


# ------------------------------------------------------------------ requests and answers as data


def _strings(value: Any, field: str) -> list[str]:
    if not isinstance(value, list):
        raise BadRequest(422, f"{field}: expected a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise BadRequest(422, f"{field}[{i}]: expected a string, got {type(item).__name__}")
    return value


class ModelService:
    """What the HTTP layer calls: a loaded model (tagger or relation model), its name and manifest, the request
    limits and the micro-batcher that runs the model."""

    def __init__(self, model: Any, name: str, *, manifest: dict[str, Any] | None = None, max_bytes: int = MAX_BYTES,
                 max_tokens: int = MAX_TOKENS, batch_wait: float = 0.005, max_batch: int = 256) -> None:
        from seqlab.relation.api import RelationModel

        self.model, self.name, self.manifest = model, name, manifest
        self.max_bytes, self.max_tokens = max_bytes, max_tokens
        self.task = "relation" if isinstance(model, RelationModel) else "tagging"
        self.path = "/tag" if self.task == "tagging" else "/classify"
        self.batcher = MicroBatcher(self._run, wait=batch_wait, max_items=max_batch)

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "model": self.name, "task": self.task}

    def describe(self) -> dict[str, Any]:
        """``GET /model``: the task, its labels, the model's resolved config and its manifest (a ``.seqlab`` file)."""
        from seqlab.core.strict import to_tree

        labels = self.model.types if self.task == "tagging" else self.model.labels
        return {"model": self.name, "task": self.task, "labels": labels, "config": to_tree(self.model.config),
                "manifest": self.manifest}

    def _run(self, kind: str, items: list[Any]) -> list[Any]:
        """In the batcher's thread: the model on a batch, as JSON-ready data."""
        if kind == "texts":
            return [encode_document(d) for d in self.model.tag_many(items, batch_size=max(64, len(items)))]
        if kind == "tokens":
            return [encode_sentence(s) for s in self.model.tag_tokens(items, batch_size=max(64, len(items)))]
        return [encode_relation(r) for r in self.model.classify_many(items, source="sentences")]

    async def answer(self, path: str, body: Any) -> dict[str, Any]:
        """Answer a POST to ``path`` with the parsed JSON ``body``."""
        if path != self.path:
            raise BadRequest(404, f"this service answers POST {self.path} (a {self.task} model)")
        if not isinstance(body, dict):
            raise BadRequest(422, f"the body: expected a JSON object, got {type(body).__name__}")
        field, kind, items, tokens = self._parse(body)
        if tokens > self.max_tokens:
            raise BadRequest(422, f"{field}: {tokens} tokens in this request; at most {self.max_tokens}")
        try:
            results = await self.batcher.submit(kind, items) if items else []
        except SeqlabError as err:
            raise BadRequest(422, str(err)) from None
        key = {"texts": "documents", "tokens": "sentences", "sentences": "relations"}[kind]
        return {key: results}

    def _parse(self, body: dict[str, Any]) -> tuple[str, str, list[Any], int]:
        """The request's field, kind, items and token count (raw text: whitespace-separated words)."""
        expected = ['"text"', '"texts"', '"tokens"'] if self.task == "tagging" else ['"sentences"']
        given = [key for key in body if f'"{key}"' in expected]
        unknown = [key for key in body if f'"{key}"' not in expected]
        if unknown or len(given) != 1:
            what = f"unknown field {unknown[0]!r}" if unknown else f"{len(given)} of them"
            raise BadRequest(422, f"expected one of the fields {', '.join(expected)}; got {what}")
        key = given[0]
        if key == "text":
            if not isinstance(body[key], str):
                raise BadRequest(422, f"text: expected a string, got {type(body[key]).__name__}")
            return key, "texts", [body[key]], len(body[key].split())
        if key == "tokens":
            value = body[key]
            if not isinstance(value, list):
                raise BadRequest(422, f"tokens: expected a list of sentences (lists of strings), got "
                                      f"{type(value).__name__}")
            for i, sentence in enumerate(value):
                _strings(sentence, f"tokens[{i}]")
                if not sentence:
                    raise BadRequest(422, f"tokens[{i}]: an empty sentence")
            return key, "tokens", value, sum(len(s) for s in value)
        items = _strings(body[key], key)
        return key, ("texts" if key == "texts" else "sentences"), items, sum(len(t.split()) for t in items)


# ------------------------------------------------------------------ the HTTP layer


def require_framework() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as err:
        raise SeqlabError(f"seqlab serve needs Starlette and uvicorn ({err.name} is not installed): "
                          f"{INSTALL_HINT}") from None


def _dumps(payload: dict[str, Any]) -> bytes:
    """``payload`` as compact UTF-8 JSON: orjson when installed (the ``serve`` extra has it; the same bytes as
    the standard library's, which took a tenth of a millisecond for one tagged sentence), else ``json``."""
    if orjson is not None:
        return orjson.dumps(payload)
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _loads(raw: bytes) -> Any:
    """The parsed JSON body; a body orjson refuses is parsed again by ``json`` for its error message."""
    if orjson is not None:
        try:
            return orjson.loads(raw)
        except ValueError:
            pass
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise BadRequest(400, f"the body is not UTF-8 JSON: {err}") from None


class _ClientLeft(Exception):
    """The client closed its connection before its request body arrived."""


async def _read_body(scope: dict[str, Any], receive: Any, limit: int) -> bytes:
    """The request body (ASGI), refused (413) as soon as it is known to exceed ``limit`` bytes."""
    for name, value in scope["headers"]:
        if name == b"content-length" and value.isdigit() and int(value) > limit:
            raise BadRequest(413, f"the body: {int(value)} bytes; at most {limit}")
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _ClientLeft
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BadRequest(413, f"the body: more than {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _send_json(send: Any, status: int, payload: dict[str, Any]) -> None:
    data = _dumps(payload)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


class _Asgi:
    """An ASGI callable that Starlette's ``Route`` mounts as it is (a plain function it would wrap as an endpoint
    taking a ``Request``): the routed way to the hot path, for what the lean dispatch leaves to Starlette."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def make_app(service: ModelService) -> Any:
    """The ASGI application of ``service``: ``POST /tag`` and ``/classify``, the hot path, are answered by a
    lean handler (Starlette's routing, ``Request`` and ``Response`` cost more per request than the model's
    share of a batch of 32); Starlette serves the rest (``GET /health``, ``GET /model``, 404 and 405
    answers) and the lifespan, whose shutdown drains the batcher."""
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    def respond(status: int, payload: dict[str, Any]) -> Response:
        return Response(_dumps(payload), status_code=status, media_type="application/json")

    async def health(request: Request) -> Response:
        return respond(200, service.health())

    async def describe(request: Request) -> Response:
        return respond(200, service.describe())

    async def post(scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            body = _loads(await _read_body(scope, receive, service.max_bytes))
            status, payload = 200, await service.answer(scope["path"], body)
        except _ClientLeft:
            return
        except BadRequest as err:
            status, payload = err.status, {"error": str(err)}
        except Exception as err:  # the service stays up; the client learns it failed, the log says why
            log.exception("request failed")
            status, payload = 500, {"error": f"internal error: {type(err).__name__}"}
        await _send_json(send, status, payload)

    async def not_found(request: Request, exc: Exception) -> Response:
        return respond(getattr(exc, "status_code", 404),
                       {"error": f"{request.method} {request.url.path}: this service answers GET /health, "
                                 f"GET /model and POST {service.path}"})

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        yield
        await asyncio.get_running_loop().run_in_executor(None, service.batcher.close)

    routes = [Route("/health", health, methods=["GET"]), Route("/model", describe, methods=["GET"]),
              Route("/tag", _Asgi(post), methods=["POST"]), Route("/classify", _Asgi(post), methods=["POST"])]
    framework = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: not_found, 405: not_found})
    hot = {("POST", "/tag"), ("POST", "/classify")}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and (scope["method"], scope["path"]) in hot:
            await post(scope, receive, send)
        else:
            await framework(scope, receive, send)

    return app


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


def make_server(model: Any, name: str, *, host: str = "127.0.0.1", port: int = 8080, max_bytes: int = MAX_BYTES,
                max_tokens: int = MAX_TOKENS, batch_wait: float = 0.005, max_batch: int = 256,
                manifest: dict[str, Any] | None = None, workers: int = 1) -> Server:
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
