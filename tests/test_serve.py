"""seqlab.serve: a trained model behind HTTP on this machine (loopback only), good and bad requests, micro-batching
and a graceful stop."""
from __future__ import annotations

import json
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="seqlab serve needs the serve extra: pip install 'seqlab[serve]'")
pytest.importorskip("uvicorn", reason="seqlab serve needs the serve extra: pip install 'seqlab[serve]'")

import seqlab  # noqa: E402
from seqlab.core.errors import SeqlabError  # noqa: E402
from seqlab.serve import make_server  # noqa: E402
from tests.conftest import FIXTURES, forget_new_log_handlers  # noqa: E402

NER, SEMEVAL = FIXTURES / "ner", FIXTURES / "semeval"


def _serve(model, **options):
    server = make_server(model, "test", port=0, **{"max_bytes": 10_000, **options})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    deadline = time.monotonic() + 30
    while not server.uvicorn.started and time.monotonic() < deadline:
        time.sleep(0.01)
    return server, url


def _post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _spans(spans) -> list[list]:
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


def test_tag_answers_what_the_python_api_gives(tagger):
    server, url = _serve(tagger, manifest={"format": "seqlab-model"})
    try:
        with urllib.request.urlopen(url + "/health", timeout=30) as answer:
            assert json.loads(answer.read()) == {"status": "ok", "model": "test", "task": "tagging"}
        with urllib.request.urlopen(url + "/model", timeout=30) as answer:
            described = json.loads(answer.read())
        assert described["labels"] == tagger.types and described["config"]["model"]["decoder"] == "crf"
        assert described["manifest"] == {"format": "seqlab-model"}
        text = "EU rejects German call to boycott British lamb."
        status, body = _post(url + "/tag", json.dumps({"texts": [text, ""]}).encode())
        assert status == 200 and len(body["documents"]) == 2 and body["documents"][1]["spans"] == []
        expected = tagger.tag(text)
        assert _spans(body["documents"][0]["spans"]) == _spans(expected.spans)
        assert body["documents"][0] == expected.to_dict()  # the one schema (seqlab.core.schema), field for field
        assert body["documents"][0]["sentences"][0]["labels"] == expected.sentences[0].labels
        status, body = _post(url + "/tag", json.dumps({"text": text}).encode())
        assert status == 200 and _spans(body["documents"][0]["spans"]) == _spans(expected.spans)
    finally:
        server.shutdown()


def test_pre_tokenized_sentences_are_tagged_as_given(tagger):
    server, url = _serve(tagger)
    tokens = [["EU", "rejects", "German", "call", "."], ["Peter", "Blackburn"]]
    try:
        status, body = _post(url + "/tag", json.dumps({"tokens": tokens}).encode())
    finally:
        server.shutdown()
    expected = tagger.tag_tokens(tokens)
    assert status == 200 and [s["tokens"] for s in body["sentences"]] == tokens
    assert [s["labels"] for s in body["sentences"]] == [s.labels for s in expected]
    assert [_spans(s["spans"]) for s in body["sentences"]] == [_spans(s.spans) for s in expected]


@pytest.mark.parametrize("method, path, body, status, message", [
    ("POST", "/tag", b"{not json", 400, "not UTF-8 JSON"),
    ("POST", "/tag", b"\xff\xfe", 400, "not UTF-8 JSON"),
    ("POST", "/tag", b'["a list"]', 422, "the body: expected a JSON object, got list"),
    ("POST", "/tag", b'{"texts": ["ok", 2]}', 422, "texts[1]: expected a string, got int"),
    ("POST", "/tag", b'{"text": 7}', 422, "text: expected a string, got int"),
    ("POST", "/tag", b'{"tokens": [["a"], "b c"]}', 422, "tokens[1]: expected a list of strings, got str"),
    ("POST", "/tag", b'{"tokens": [[]]}', 422, "tokens[0]: an empty sentence"),
    ("POST", "/tag", b'{"txt": "a"}', 422, "unknown field 'txt'"),
    ("POST", "/tag", b'{"text": "a", "texts": ["b"]}', 422, "got 2 of them"),
    ("POST", "/tag", b'{"text": "' + b"x " * 60 + b'"}', 422, "text: 60 tokens in this request; at most 50"),
    ("POST", "/tag", b'{"tokens": [' + b'["x"],' * 50 + b'["x"]]}', 422, "tokens: 51 tokens"),
    ("POST", "/classify", b'{"sentences": []}', 404, "answers POST /tag"),
    ("POST", "/tag", b'{"text": "' + b"x" * 20_000 + b'"}', 413, "the body: 20012 bytes; at most 10000"),
    ("GET", "/tag", None, 405, "GET /tag: this service answers"),
    ("GET", "/nowhere", None, 404, "GET /nowhere: this service answers"),
])
def test_bad_requests_get_a_clear_error_naming_the_field_and_the_service_stays_up(tagger, method, path, body, status,
                                                                                  message):
    server, url = _serve(tagger, max_tokens=50)
    try:
        request = urllib.request.Request(url + path, data=body, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                got, answer = answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as err:
            got, answer = err.code, json.loads(err.read())
        assert got == status and message in answer["error"], answer
        assert _post(url + "/tag", b'{"text": "Peter Blackburn"}')[0] == 200
    finally:
        server.shutdown()


def test_a_chunked_body_over_the_limit_is_refused(tagger):
    import http.client

    server, url = _serve(tagger)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        chunks = (b'{"text": "' + b"x" * 4_000 + b'"}' for _ in range(3))  # no Content-Length: sent chunked
        connection.request("POST", "/tag", body=chunks, encode_chunked=True)
        answer = connection.getresponse()
        assert answer.status == 413 and "more than 10000 bytes" in json.loads(answer.read())["error"]
    finally:
        server.shutdown()


def test_concurrent_requests_are_batched_and_each_gets_its_own_answer(tagger):
    sizes, tag_many = [], tagger.tag_many

    def counting(texts, **options):
        sizes.append(len(texts))
        return tag_many(texts, **options)

    tagger.tag_many = counting
    server, url = _serve(tagger, batch_wait=0.05)
    texts = [f"Peter Blackburn visited Brussels {i} times." if i % 2 else "EU rejects German call." for i in range(16)]
    try:
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda t: _post(url + "/tag", json.dumps({"text": t}).encode()), texts))
    finally:
        server.shutdown()
        del tagger.tag_many
    assert sum(sizes) == 16 and max(sizes) > 1  # some requests were tagged together
    for text, (status, body) in zip(texts, answers):
        assert status == 200 and body["documents"][0]["text"] == text
        assert _spans(body["documents"][0]["spans"]) == _spans(tagger.tag(text).spans)


def test_the_batcher_waits_for_the_clients_it_just_answered_instead_of_running_a_batch_of_one():
    import asyncio

    from seqlab.serve import MicroBatcher

    sizes = []

    def run(kind, items):
        sizes.append(len(items))
        time.sleep(0.3)
        return items

    async def client(start: float, rounds: int) -> list:
        await asyncio.sleep(start)
        return [await batcher.submit("texts", [f"{start} {i}"]) for i in range(rounds)]

    async def main() -> list:  # 7 clients, and an 8th that comes while the model runs their first batch
        return await asyncio.gather(*[client(0, 3) for _ in range(7)], client(0.3, 3))

    batcher = MicroBatcher(run, wait=0.2)
    try:
        answers = asyncio.run(main())
    finally:
        batcher.close(timeout=10)
    assert answers[-1] == [["0.3 0"], ["0.3 1"], ["0.3 2"]]
    # the 8th alone the moment the model is free, then the 7 (batches of 1 and 7 alternating), were the old way
    assert sizes == [7, 8, 8, 1]


def test_the_batcher_keeps_a_model_saturated_by_independent_senders_busy():
    import asyncio

    from seqlab.serve import MicroBatcher

    runs = []

    def run(kind, items):
        start = time.monotonic()
        time.sleep(0.05)
        runs.append((start, time.monotonic()))
        return items

    async def main() -> list:  # a request every 10 ms, none waiting for an answer before the next
        tasks = []
        for i in range(150):
            tasks.append(asyncio.ensure_future(batcher.submit("texts", [str(i)])))
            await asyncio.sleep(0.01)
        return await asyncio.gather(*tasks)

    batcher = MicroBatcher(run, wait=0.25)
    try:
        answers = asyncio.run(main())
    finally:
        batcher.close(timeout=10)
    assert answers == [[str(i)] for i in range(150)]
    idle = [start - end for (_, end), (start, _) in zip(runs, runs[1:])]
    # it may wait for clients to come back at first, not on and on: batches of 28 with a 0.25 s wait each were
    # the way before
    assert len(runs) > 10 and max(idle[len(idle) // 2:]) < 0.2, idle


def test_shutdown_finishes_the_requests_in_flight_and_stops_the_batcher(tagger):
    server, url = _serve(tagger, batch_wait=0.5)  # a request waits half a second in the batcher
    with ThreadPoolExecutor(4) as pool:
        pending = [pool.submit(_post, url + "/tag", json.dumps({"text": f"Peter Blackburn {i}"}).encode())
                   for i in range(4)]
        time.sleep(0.2)  # the requests are in the batcher now
        server.shutdown()
        answers = [p.result() for p in pending]
    assert [status for status, _ in answers] == [200] * 4
    assert server.stopped.is_set() and not server.service.batcher.worker.is_alive()
    with pytest.raises(urllib.error.URLError):  # no longer listening
        urllib.request.urlopen(url + "/health", timeout=5)


def test_a_model_error_fails_only_its_batch_and_the_service_goes_on(tagger, caplog):
    tag_many, calls = tagger.tag_many, []

    def failing_once(texts, **options):
        calls.append(texts)
        if len(calls) == 1:
            raise RuntimeError("out of memory")
        return tag_many(texts, **options)

    tagger.tag_many = failing_once
    server, url = _serve(tagger)
    try:
        status, body = _post(url + "/tag", b'{"text": "Peter Blackburn"}')
        assert status == 500 and body == {"error": "internal error: RuntimeError"}
        assert _post(url + "/tag", b'{"text": "Peter Blackburn"}')[0] == 200
    finally:
        server.shutdown()
        del tagger.tag_many
    assert "the model failed on a batch of 1 requests" in caplog.text


def test_without_orjson_the_standard_library_gives_the_same_json(monkeypatch):
    from seqlab import serve

    payload = {"documents": [{"text": "Zürich €", "spans": [{"confidence": 0.9946987628936768, "start": 0}]}]}
    fast = serve._dumps(payload) if serve.orjson is not None else None
    monkeypatch.setattr(serve, "orjson", None)
    assert json.loads(serve._dumps(payload)) == payload and (fast is None or serve._dumps(payload) == fast)
    assert serve._loads('{"text": "Zürich"}'.encode()) == {"text": "Zürich"}
    with pytest.raises(serve.BadRequest, match="not UTF-8 JSON: Expecting property name"):
        serve._loads(b"{not json")


def test_a_missing_extra_fails_with_an_install_hint(tagger, monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now raises ImportError
    with pytest.raises(SeqlabError, match=r"uvicorn is not installed\): pip install 'seqlab\[serve\]'"):
        make_server(tagger, "test", port=0)


def test_classify_serves_a_relation_model_and_a_bad_sentence_fails_only_its_request(trained):
    model = seqlab.load(trained["relation"], "cpu")
    server, url = _serve(model, batch_wait=0.2)
    good = "The <e1>smoke</e1> was caused by a <e2>fire</e2> in the kitchen."
    try:
        with ThreadPoolExecutor(2) as pool:  # batched together: the bad one must not fail the good one
            answers = list(pool.map(lambda s: _post(url + "/classify", json.dumps({"sentences": [s]}).encode()),
                                    [good, "no markers here"]))
        with urllib.request.urlopen(url + "/model", timeout=30) as answer:
            assert json.loads(answer.read())["labels"] == model.labels
    finally:
        server.shutdown()
    (status, body), (bad_status, bad_body) = answers
    assert status == 200 and body["relations"][0]["label"] == model.classify(good).label
    assert bad_status == 422 and "sentences" in bad_body["error"]


def _cli_server(model: str, tmp_path: Path, *options: str) -> tuple["subprocess.Popen[str]", str, list[str]]:
    """``seqlab serve MODEL --port 0 OPTIONS`` in a subprocess, once it has said where it listens: (process, url,
    the lines it printed up to that)."""
    import os
    import re
    import subprocess

    env = {**os.environ, "SEQLAB_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    server = subprocess.Popen([sys.executable, "-m", "seqlab", "serve", model, "--port", "0", *options],
                              stderr=subprocess.PIPE, text=True, env=env)
    lines: list[str] = []
    while not (found := re.search(r"on http://127\.0\.0\.1:(\d+)", lines[-1] if lines else "")):
        line = server.stderr.readline()
        if not line:
            server.kill()
            server.wait()
            raise AssertionError("".join(lines))
        lines.append(line)
    return server, f"http://127.0.0.1:{found.group(1)}", lines


@pytest.mark.parametrize("workers", [1, 2])
def test_the_cli_serves_a_model_file_with_its_manifest_and_stops_gracefully_on_sigterm(trained, tmp_path, workers):
    import signal

    from seqlab.apps.package import package

    manifest = package(trained["tagger"], tmp_path / "tiny.seqlab")
    server, url, lines = _cli_server(str(tmp_path / "tiny.seqlab"), tmp_path, "--batch-wait-ms", "500",
                                     "--workers", str(workers))
    try:
        assert f"{workers} worker process" in lines[-1]
        with urllib.request.urlopen(url + "/model", timeout=30) as answer:
            assert json.loads(answer.read())["manifest"]["members"] == manifest["members"]
        texts = [f"Peter Blackburn {i}" for i in range(8)]
        with ThreadPoolExecutor(8) as pool:  # with 2 workers: on whichever process accepted each connection
            pending = [pool.submit(_post, url + "/tag", json.dumps({"text": t}).encode()) for t in texts]
            time.sleep(0.2)  # the requests wait in the batchers (500 ms) when the signal comes
            server.send_signal(signal.SIGTERM)
            answers = [p.result() for p in pending]
        assert [(status, body["documents"][0]["text"]) for status, body in answers] == [(200, t) for t in texts]
        assert server.wait(timeout=60) == 0
        assert "stopped" in server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_serve_workers_replace_a_worker_that_dies(trained, tmp_path):
    import os
    import re
    import signal

    server, url, _ = _cli_server(str(trained["tagger"]), tmp_path, "--workers", "2")

    def children() -> set[int]:
        with open(f"/proc/{server.pid}/task/{server.pid}/children", encoding="ascii") as handle:
            return {int(pid) for pid in handle.read().split()}

    try:
        deadline = time.monotonic() + 30  # the address is printed before the workers are forked
        while len(first := children()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(first) == 2
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        said = []  # the workers' own log lines come first
        while not re.search(rf"worker {victim} died \(status -9\); started worker \d+ in its place",
                            said[-1] if said else ""):
            said.append(server.stderr.readline())
            assert said[-1] and len(said) < 50, "".join(said)
        now = children()
        assert len(now) == 2 and victim not in now
        for i in range(6):  # whichever worker accepts, each answers
            status, body = _post(url + "/tag", json.dumps({"text": f"Peter Blackburn {i}"}).encode())
            assert status == 200 and body["documents"][0]["text"] == f"Peter Blackburn {i}"
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_serve_workers_that_keep_dying_stop_the_server_with_an_error(tagger, monkeypatch):
    import os

    from seqlab import serve

    monkeypatch.setattr(serve, "RESTARTS", 1)
    server = make_server(tagger, "test", port=0, workers=2)
    server.uvicorn.run = lambda sockets: os._exit(3)  # each worker (a fork of this process) dies at once
    with pytest.raises(SeqlabError, match=r"workers keep dying \(3 in 60 s, the last with status 3\); stopped"):
        server.serve_forever()
    assert server.pids == [] and server.stopped.is_set()
