"""What the tests of seqlab.serve share: a tiny tagger and relation model trained once, and a server on a free
loopback port."""
from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import seqlab
from tests.conftest import FIXTURES, forget_new_log_handlers

NER, SEMEVAL = FIXTURES / "ner", FIXTURES / "semeval"


def serve(model, **options):
    """``model`` served on a free loopback port in a thread: (server, its URL), once it answers."""
    from seqlab.serve import make_server

    server = make_server(model, "test", port=0, **{"max_bytes": 10_000, **options})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    deadline = time.monotonic() + 30
    while not server.uvicorn.started and time.monotonic() < deadline:
        time.sleep(0.01)
    return server, url


def post(url: str, body: bytes) -> tuple[int, dict]:
    """POST ``body`` to ``url``: (status, parsed JSON answer), an HTTP error's too."""
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def span_rows(spans) -> list[list]:
    """Spans (served JSON or Python objects) as [text, label, start, end] rows, to compare."""
    return [[s["text"], s["label"], s["start"], s["end"]] if isinstance(s, dict) else [s.text, s.label, s.start, s.end]
            for s in spans]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("serve")
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(NER))
        seqlab.train(NER / "tiny.yaml", out / "tagger", overrides=("train.threads=1",), progress=False)
        mp.setenv("SEQLAB_DATA", str(SEMEVAL))
        seqlab.train(SEMEVAL / "tiny.yaml", out / "relation", progress=False)
    return {"tagger": out / "tagger", "relation": out / "relation"}


@pytest.fixture(scope="module")
def tagger(trained):
    return seqlab.load(trained["tagger"], "cpu")
