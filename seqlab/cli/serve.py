"""``seqlab serve [MODEL]``: a model behind a JSON-over-HTTP service (:mod:`seqlab.serve`)."""
from __future__ import annotations

import argparse
import logging

from seqlab.cli._util import add_backend_option, load_model, positive_int
from seqlab.core.errors import SeqlabError

log = logging.getLogger("seqlab")


def cmd_serve(args: argparse.Namespace) -> int:
    from seqlab.serve import make_server

    model = load_model(args.model, backend=args.backend)
    try:
        server = make_server(model, args.model or "en-ner-conll03", host=args.host, port=args.port,
                             max_bytes=args.max_bytes, batch_wait=args.batch_wait_ms / 1000)
    except OSError as err:
        raise SeqlabError(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}") from None
    host, port = server.server_address[:2]
    log.info("serving %s on http://%s:%d (GET /health, POST /tag or /classify); Ctrl-C stops", model, host, port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        log.info("stopped")
    finally:
        server.server_close()
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("serve", help="serve a model over HTTP: POST /tag {\"text\": ...} or /classify")
    s.add_argument("model", nargs="?", help="a run directory, .seqlab file or installed name (default en-ner-conll03)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=int, default=8080)
    s.add_argument("--max-bytes", type=positive_int, default=1_000_000, help="largest request body accepted")
    s.add_argument("--batch-wait-ms", type=float, default=5.0,
                   help="collect concurrent tagging requests for this long and tag them together (0: one at a time)")
    add_backend_option(s)
    s.set_defaults(func=cmd_serve)
