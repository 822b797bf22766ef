"""``seqlab serve``: a loaded model behind a small JSON-over-HTTP service (the standard library's server).

Endpoints:

* ``GET /health`` → ``{"status": "ok", "model": ..., "task": ...}``; ``GET /model`` → its labels and config;
* ``POST /tag`` (a tagger) with ``{"text": "..."}`` or ``{"texts": [...]}`` → ``{"documents": [...]}``, each
  document with its sentences (tokens, labels) and spans (text, label, character offsets, confidence);
* ``POST /classify`` (a relation model) with ``{"sentences": ["The <e1>fire</e1> ... <e2>smoke</e2>."]}`` →
  ``{"relations": [...]}``.

Bad requests get a 4xx answer with ``{"error": "..."}`` saying what was expected, never a traceback; a body
over ``max_bytes`` is refused (413). Requests are served one model call at a time (one model, one lock).
"""
from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict
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


class ModelService:
    """What the HTTP handler calls: a loaded model, its name, and one lock around it."""

    def __init__(self, model: Any, name: str, max_bytes: int = MAX_BYTES) -> None:
        from seqlab.relation.api import RelationModel

        self.model, self.name, self.max_bytes = model, name, max_bytes
        self.task = "relation" if isinstance(model, RelationModel) else "tagging"
        self.lock = threading.Lock()

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
        with self.lock:
            return self._tag(body) if self.task == "tagging" else self._classify(body)

    def _tag(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = [body["text"]] if "text" in body else body.get("texts")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise BadRequest(HTTPStatus.BAD_REQUEST, 'expected {"text": "..."} or {"texts": ["...", ...]}')
        docs = self.model.tag_many(texts)
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


def make_server(model: Any, name: str, host: str = "127.0.0.1", port: int = 8080,
                max_bytes: int = MAX_BYTES) -> ThreadingHTTPServer:
    """An HTTP server for ``model`` (not yet serving: call ``serve_forever``); port 0 picks a free port."""
    return ThreadingHTTPServer((host, port), _handler(ModelService(model, name, max_bytes)))
