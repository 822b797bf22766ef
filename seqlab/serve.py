"""``seqlab serve``: a loaded model behind a small JSON-over-HTTP service (the standard library's server).

Endpoints:

* ``GET /health`` → ``{"status": "ok", "model": ..., "task": ...}``; ``GET /model`` → its labels and config;
* ``POST /tag`` (a tagger) with ``{"text": "..."}`` or ``{"texts": [...]}`` → ``{"documents": [...]}``, each
  document with its sentences (tokens, labels) and spans (text, label, character offsets, confidence);
* ``POST /classify`` (a relation model) with ``{"sentences": ["The <e1>fire</e1> ... <e2>smoke</e2>."]}`` →
  ``{"relations": [...]}``.

Bad requests get a 4xx answer with ``{"error": "..."}`` saying what was expected, never a traceback; a body
over ``max_bytes`` is refused (413). Concurrent tagging requests are micro-batched (:class:`MicroBatcher`): the
texts that arrive within a few milliseconds are tagged together by one worker thread, and each request gets its
own documents back. Closing the server waits for the requests in flight.
"""
from __future__ import annotations

import json
import logging
import queue
import threading
import time
from dataclasses import asdict, dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from seqlab.core.errors import SeqlabError

log = logging.getLogger("seqlab.serve")
MAX_BYTES = 1_000_000


class BadRequest(Exception):
    """A request the service refuses, with the HTTP status to answer."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _Job:
    """One request's texts, waiting for the batcher."""

    texts: list[str]
    done: threading.Event = field(default_factory=threading.Event)
    documents: list[Any] | None = None
    error: BaseException | None = None


class MicroBatcher:
    """Tags the texts of concurrent requests together: one worker thread takes a request, collects more for up
    to ``wait`` seconds (or until ``max_texts`` texts), tags them in one ``tag_many`` and answers each request
    with its own documents. With ``wait`` 0 each request is tagged alone, in arrival order."""

    def __init__(self, model: Any, *, wait: float = 0.005, max_texts: int = 256) -> None:
        self.model, self.wait, self.max_texts = model, wait, max_texts
        self.jobs: queue.Queue[_Job] = queue.Queue()
        threading.Thread(target=self._serve, name="seqlab-batcher", daemon=True).start()

    def tag(self, texts: list[str]) -> list[Any]:
        job = _Job(texts)
        self.jobs.put(job)
        job.done.wait()
        if job.error is not None:
            raise job.error
        return job.documents or []

    def _collect(self) -> list[_Job]:
        jobs = [self.jobs.get()]
        count, deadline = len(jobs[0].texts), time.monotonic() + self.wait
        while count < self.max_texts and (left := deadline - time.monotonic()) > 0:
            try:
                jobs.append(self.jobs.get(timeout=left))
            except queue.Empty:
                break
            count += len(jobs[-1].texts)
        return jobs

    def _serve(self) -> None:
        while True:
            jobs = self._collect()
            try:
                documents = list(self.model.tag_many([t for job in jobs for t in job.texts]))
            except BaseException as err:  # every waiting request learns of it; the worker goes on
                for job in jobs:
                    job.error = err
                    job.done.set()
                continue
            start = 0
            for job in jobs:
                job.documents, start = documents[start: start + len(job.texts)], start + len(job.texts)
                job.done.set()


class ModelService:
    """What the HTTP handler calls: a loaded model, its name, a micro-batcher (taggers) or a lock (relations)."""

    def __init__(self, model: Any, name: str, max_bytes: int = MAX_BYTES, batch_wait: float = 0.005) -> None:
        from seqlab.relation.api import RelationModel

        self.model, self.name, self.max_bytes = model, name, max_bytes
        self.task = "relation" if isinstance(model, RelationModel) else "tagging"
        self.lock = threading.Lock()
        self.batcher = MicroBatcher(model, wait=batch_wait) if self.task == "tagging" else None

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "model": self.name, "task": self.task}

    def describe(self) -> dict[str, Any]:
        """``GET /model``: the task, its labels and the model's resolved config."""
        from seqlab.core.strict import to_tree

        labels = self.model.types if self.task == "tagging" else self.model.labels
        return {"model": self.name, "task": self.task, "labels": labels, "config": to_tree(self.model.config)}

    def handle(self, path: str, body: Any) -> dict[str, Any]:
        """Answer a POST to ``path`` with the parsed JSON ``body``."""
        expected = "/tag" if self.task == "tagging" else "/classify"
        if path != expected:
            raise BadRequest(HTTPStatus.NOT_FOUND, f"this service answers POST {expected} (a {self.task} model)")
        if not isinstance(body, dict):
            raise BadRequest(HTTPStatus.BAD_REQUEST, f"expected a JSON object, got {type(body).__name__}")
        if self.task == "tagging":
            return self._tag(body)
        with self.lock:
            return self._classify(body)

    def _tag(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = [body["text"]] if "text" in body else body.get("texts")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise BadRequest(HTTPStatus.BAD_REQUEST, 'expected {"text": "..."} or {"texts": ["...", ...]}')
        docs = self.batcher.tag(texts)
        return {"documents": [{"text": d.text, "spans": [asdict(s) for s in d.spans],
                               "sentences": [s.to_dict() for s in d.sentences]} for d in docs]}

    def _classify(self, body: dict[str, Any]) -> dict[str, Any]:
        sentences = body.get("sentences")
        if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
            raise BadRequest(HTTPStatus.BAD_REQUEST, 'expected {"sentences": ["The <e1>...</e1> ... <e2>...</e2>."]}')
        try:
            return {"relations": [asdict(r) for r in self.model.classify_many(sentences, source="request")]}
        except SeqlabError as err:
            raise BadRequest(HTTPStatus.BAD_REQUEST, str(err)) from None


def _handler(service: ModelService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "seqlab"

        def _answer(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            if self.path.rstrip("/") == "/health":
                self._answer(HTTPStatus.OK, service.health())
            elif self.path.rstrip("/") == "/model":
                self._answer(HTTPStatus.OK, service.describe())
            else:
                self._answer(HTTPStatus.NOT_FOUND, {"error": "GET /health or /model, or POST /tag or /classify"})

        def do_POST(self) -> None:  # noqa: N802
            try:
                self._answer(HTTPStatus.OK, service.handle(self.path.rstrip("/"), self._body()))
            except BadRequest as err:
                self._answer(err.status, {"error": str(err)})
            except Exception as err:  # the service stays up; the client learns it failed, the log says why
                log.exception("request failed")
                self._answer(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"internal error: {type(err).__name__}"})

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            if length > service.max_bytes:
                raise BadRequest(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                                 f"request body of {length} bytes; at most {service.max_bytes}")
            raw = self.rfile.read(length)
            try:
                return json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as err:
                raise BadRequest(HTTPStatus.BAD_REQUEST, f"the body is not UTF-8 JSON: {err}") from None

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the standard library's name)
            log.info("%s %s", self.address_string(), format % args)

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() waits for the requests in flight: a graceful shutdown
    block_on_close = True
    request_queue_size = 128  # the listen backlog (the standard library's 5 makes a burst of clients wait 1 s)


def make_server(model: Any, name: str, *, host: str = "127.0.0.1", port: int = 8080, max_bytes: int = MAX_BYTES,
                batch_wait: float = 0.005) -> ThreadingHTTPServer:
    """An HTTP server for ``model`` (not yet serving: call ``serve_forever``); port 0 picks a free port.
    Concurrent tagging requests arriving within ``batch_wait`` seconds are tagged together."""
    return _Server((host, port), _handler(ModelService(model, name, max_bytes, batch_wait)))
