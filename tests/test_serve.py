"""seqlab.serve: a trained model behind HTTP on this machine (loopback only), good and bad requests."""
from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import seqlab
from seqlab.serve import make_server
from tests.conftest import FIXTURES, forget_new_log_handlers

NER, SEMEVAL = FIXTURES / "ner", FIXTURES / "semeval"


def _serve(model):
    server = make_server(model, "test", port=0, max_bytes=10_000)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("serve")
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(NER))
        seqlab.train(NER / "tiny.yaml", out / "tagger", overrides=("train.threads=1",), progress=False)
        mp.setenv("SEQLAB_DATA", str(SEMEVAL))
        seqlab.train(SEMEVAL / "tiny.yaml", out / "relation", progress=False)
    return {"tagger": out / "tagger", "relation": out / "relation"}


def test_tag_answers_what_the_python_api_gives(trained):
    model = seqlab.load(trained["tagger"], "cpu")
    server, url = _serve(model)
    try:
        with urllib.request.urlopen(url + "/health", timeout=30) as answer:
            assert json.loads(answer.read()) == {"status": "ok", "model": "test", "task": "tagging"}
        with urllib.request.urlopen(url + "/model", timeout=30) as answer:
            described = json.loads(answer.read())
            assert described["labels"] == model.types and described["config"]["model"]["decoder"] == "crf"
        text = "EU rejects German call to boycott British lamb."
        status, body = _post(url + "/tag", json.dumps({"texts": [text, ""]}).encode())
        assert status == 200 and len(body["documents"]) == 2
        expected = [[s.text, s.label, s.start, s.end] for s in model.tag(text).spans]
        assert [[s["text"], s["label"], s["start"], s["end"]] for s in body["documents"][0]["spans"]] == expected
    finally:
        server.shutdown()


@pytest.mark.parametrize("path, body, status, message", [
    ("/tag", b"{not json", 400, "not UTF-8 JSON"),
    ("/tag", b"\xff\xfe", 400, "not UTF-8 JSON"),
    ("/tag", b'["a list"]', 400, "expected a JSON object"),
    ("/tag", b'{"texts": [1, 2]}', 400, "expected {\"text\""),
    ("/classify", b'{"sentences": []}', 404, "answers POST /tag"),
    ("/tag", b'{"text": "' + b"x" * 20_000 + b'"}', 413, "at most 10000"),
])
def test_bad_requests_get_a_clear_error_and_the_service_stays_up(trained, path, body, status, message):
    server, url = _serve(seqlab.load(trained["tagger"], "cpu"))
    try:
        got, answer = _post(url + path, body)
        assert got == status and message in answer["error"]
        assert _post(url + "/tag", b'{"text": "Peter Blackburn"}')[0] == 200
    finally:
        server.shutdown()


def test_concurrent_requests_are_batched_and_each_gets_its_own_answer(trained):
    from concurrent.futures import ThreadPoolExecutor

    model = seqlab.load(trained["tagger"], "cpu")
    sizes, tag_many = [], model.tag_many
    model.tag_many = lambda texts, **kw: (sizes.append(len(texts)), tag_many(texts, **kw))[1]
    server = make_server(model, "test", port=0, batch_wait=0.05)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/tag"
    texts = [f"Peter Blackburn visited Brussels {i} times." if i % 2 else "EU rejects German call." for i in range(16)]
    try:
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda t: _post(url, json.dumps({"text": t}).encode()), texts))
    finally:
        server.shutdown()
        server.server_close()
    assert sum(sizes) == 16 and max(sizes) > 1  # some requests were tagged together
    for text, (status, body) in zip(texts, answers):
        expected = [[s.text, s.label, s.start, s.end] for s in tag_many([text]).__next__().spans]
        assert status == 200 and body["documents"][0]["text"] == text
        assert [[s["text"], s["label"], s["start"], s["end"]] for s in body["documents"][0]["spans"]] == expected


def test_classify_serves_a_relation_model_and_names_a_bad_sentence(trained):
    model = seqlab.load(trained["relation"], "cpu")
    server, url = _serve(model)
    try:
        sentence = "The <e1>smoke</e1> was caused by a <e2>fire</e2> in the kitchen."
        status, body = _post(url + "/classify", json.dumps({"sentences": [sentence]}).encode())
        assert status == 200 and body["relations"][0]["label"] == model.classify(sentence).label
        status, body = _post(url + "/classify", json.dumps({"sentences": ["no markers here"]}).encode())
        assert status == 400 and "request" in body["error"]
    finally:
        server.shutdown()
