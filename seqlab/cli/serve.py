"""``seqlab serve [MODEL]``: a model behind a JSON-over-HTTP service (:mod:`seqlab.serve`, the ``serve`` extra)."""
from __future__ import annotations

import argparse
import logging
from typing import Any

from seqlab.cli._util import (add_backend_option, add_device_option, add_threads_option, load_model, model_device,
                              positive_int, use_threads)
from seqlab.core.errors import SeqlabError

log = logging.getLogger("seqlab")


def _manifest(source: str | None) -> dict[str, Any] | None:
    """The manifest of a ``.seqlab`` file or installed model (None for a run directory)."""
    from seqlab.apps.model_file import read_manifest
    from seqlab.apps.installed import model_path

    path = model_path(source)
    return read_manifest(path) if path.is_file() else None


def cmd_serve(args: argparse.Namespace) -> int:
    from seqlab.serve import make_server, require_framework

    require_framework()  # before the model loads: a missing extra is said at once
    use_threads(args.threads)
    model = load_model(args.model, backend=args.backend, device=model_device(args.device, args.workers))
    try:
        server = make_server(model, args.model or "en-ner-conll03", host=args.host, port=args.port,
                             max_bytes=args.max_bytes, max_tokens=args.max_tokens,
                             batch_wait=args.batch_wait_ms / 1000, max_batch=args.max_batch,
                             manifest=_manifest(args.model), workers=args.workers)
    except OSError as err:
        raise SeqlabError(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}") from None
    host, port = server.server_address
    log.info("serving %s on http://%s:%d (GET /health, GET /model, POST %s; %d worker process%s); Ctrl-C stops",
             model, host, port, server.service.path, args.workers, "" if args.workers == 1 else "es")
    server.serve_forever()  # SIGINT/SIGTERM: stop accepting, finish the requests in flight, then return
    log.info("stopped")
    return 0


def _non_negative(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value!r}") from None
    if not number >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return number


def add_parsers(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("serve", help="serve a model over HTTP: POST /tag {\"text\": ...} or /classify")
    s.add_argument("model", nargs="?", help="a run directory, .seqlab file or installed name (default en-ner-conll03)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=int, default=8080)
    s.add_argument("--max-bytes", type=positive_int, default=1_000_000, help="largest request body accepted (413)")
    s.add_argument("--max-tokens", type=positive_int, default=20_000,
                   help="most tokens in one request (422): raw text counts the tokens seqlab's tokenizer makes of it "
                        "(punctuation apart), pre-tokenised sentences their tokens")
    s.add_argument("--batch-wait-ms", type=_non_negative, default=5.0,
                   help="collect concurrent requests for at most this long and run the model on them together "
                        "(sooner once the clients of the last batch are back; 0: no waiting, requests that arrive "
                        "while the model is busy still go together)")
    s.add_argument("--max-batch", type=positive_int, default=256,
                   help="stop collecting once this many texts are waiting")
    s.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes answering on the one port, each running the model with --threads "
                        "threads and micro-batching its own requests (forked after loading: the model's memory "
                        "is shared)")
    add_device_option(s, workers=True)
    add_threads_option(s)
    add_backend_option(s)
    s.set_defaults(func=cmd_serve)
