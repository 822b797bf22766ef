"""``seqlab serve``: a loaded model behind a JSON-over-HTTP service (Starlette under uvicorn, the ``serve`` extra).

Endpoints:

* ``GET /`` → a demo page (:mod:`seqlab.serve.demo`): text typed there is sent to ``POST /tag`` (or ``/classify``)
  and drawn as :mod:`seqlab.render.html` draws it, beside the model's card;
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
not JSON, 413 for a body over ``max_bytes``, 422 for a field of the wrong shape, a string that is not valid Unicode
(a lone surrogate) or a request over ``max_tokens`` tokens (for raw text: the tokens the tokenizer makes of it).
Every request is checked alone before it is batched, and a batch that fails anyway is run again request by
request, so one client's bad request fails only its own. Concurrent requests are micro-batched
(:class:`MicroBatcher`): the requests that arrive within ``batch_wait`` seconds (up to ``max_batch`` texts), or
while the model is busy, go together to one worker thread, which runs the model once on all of them and answers
each with its own part; the event loop only parses, validates and encodes, and never waits on the model. On
SIGINT or SIGTERM uvicorn stops accepting connections and finishes the requests in flight, then the batcher's
worker is stopped. The POST endpoints skip Starlette's routing and request objects (a lean ASGI handler; JSON by
orjson when installed); with ``workers`` > 1, that many forked processes answer on the one port.
"""
from __future__ import annotations

from seqlab.serve.app import INSTALL_HINT, make_app, require_framework
from seqlab.serve.batcher import MicroBatcher
from seqlab.serve.service import MAX_BYTES, MAX_TOKENS, BadRequest, ModelService
from seqlab.serve.supervisor import Server, make_server

__all__ = ["INSTALL_HINT", "MAX_BYTES", "MAX_TOKENS", "BadRequest", "MicroBatcher", "ModelService", "Server",
           "make_app", "make_server", "require_framework"]
