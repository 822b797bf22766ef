"""The HTTP layer of ``seqlab serve``: the ASGI application (Starlette for the routes, a lean handler for the POST
hot path) and JSON in and out (orjson when installed)."""
from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Callable

from seqlab.core.json_limits import MAX_JSON_DEPTH, too_deep
from seqlab.core.errors import SeqlabError
from seqlab.serve.service import PATHS, BadRequest, ModelService

try:
    import orjson
except ImportError:  # the standard library's json then: the same answers, slower
    orjson = None

log = logging.getLogger("seqlab.serve")
INSTALL_HINT = "pip install 'seqlab[serve]'"


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
    """The parsed JSON body, once a linear scan has found it nested at most :data:`MAX_JSON_DEPTH` deep (a request
    is 3 deep; ``json`` recurses into a RecursionError on 100,000); a body orjson refuses is parsed again by
    ``json`` for its error message (or its lone surrogates, which the service refuses naming the field)."""
    if too_deep(raw):
        raise BadRequest(400, f"the body: JSON nested deeper than {MAX_JSON_DEPTH} levels")
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
    share of a batch of 32); Starlette serves the rest (``GET /``, the demo page, ``GET /health``, ``GET /model``,
    404 and 405 answers) and the lifespan, whose shutdown drains the batcher."""
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Route

    from seqlab.serve.demo import demo_page, new_nonce, policy

    described = service.describe()  # once: the demo page's card

    def respond(status: int, payload: dict[str, Any]) -> Response:
        return Response(_dumps(payload), status_code=status, media_type="application/json")

    async def health(request: Request) -> Response:
        return respond(200, service.health())

    async def describe(request: Request) -> Response:
        return respond(200, service.describe())

    async def demo(request: Request) -> Response:
        """``GET /``: the demo page (:mod:`seqlab.serve.demo`), under its own strict Content-Security-Policy."""
        nonce = new_nonce()
        # a tagger's labelling says whether its labels are a POS tagger's (a relation model has none)
        token_labels = bool(getattr(getattr(service.model, "labelling", None), "conllu_upos", False))
        headers = {"Content-Security-Policy": policy(nonce), "X-Content-Type-Options": "nosniff",
                   "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}
        return HTMLResponse(demo_page(described, service.path, nonce, token_labels=token_labels), headers=headers)

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
                       {"error": f"{request.method} {request.url.path}: this service answers GET / (a demo page), "
                                 f"GET /health, GET /model and POST {service.path}"})

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        yield
        await asyncio.get_running_loop().run_in_executor(None, service.batcher.close)

    routes = [Route("/", demo, methods=["GET"]), Route("/health", health, methods=["GET"]),
              Route("/model", describe, methods=["GET"]),
              *(Route(path, _Asgi(post), methods=["POST"]) for path in dict.fromkeys(PATHS.values()))]
    framework = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: not_found, 405: not_found})
    hot = {("POST", path) for path in PATHS.values()}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and (scope["method"], scope["path"]) in hot:
            await post(scope, receive, send)
        else:
            await framework(scope, receive, send)

    return app
