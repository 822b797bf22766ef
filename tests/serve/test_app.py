"""seqlab.serve's HTTP layer and service: a trained model behind HTTP on this machine (loopback only), good and bad
requests, answers in the one JSON schema, micro-batched concurrent requests."""
from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("starlette", reason="seqlab serve needs the serve extra: pip install 'seqlab[serve]'")
pytest.importorskip("uvicorn", reason="seqlab serve needs the serve extra: pip install 'seqlab[serve]'")

import seqlab  # noqa: E402
from seqlab.core.errors import SeqlabError  # noqa: E402
from seqlab.serve import make_server  # noqa: E402
from tests.serve.conftest import post, serve, span_rows  # noqa: E402


def test_tag_answers_what_the_python_api_gives(tagger):
    server, url = serve(tagger, manifest={"format": "seqlab-model"})
    try:
        with urllib.request.urlopen(url + "/health", timeout=30) as answer:
            assert json.loads(answer.read()) == {"status": "ok", "model": "test", "task": "tagging"}
        with urllib.request.urlopen(url + "/model", timeout=30) as answer:
            described = json.loads(answer.read())
        assert described["labels"] == tagger.types and described["config"]["model"]["decoder"] == "crf"
        assert described["manifest"] == {"format": "seqlab-model"}
        text = "EU rejects German call to boycott British lamb."
        status, body = post(url + "/tag", json.dumps({"texts": [text, ""]}).encode())
        assert status == 200 and len(body["documents"]) == 2 and body["documents"][1]["spans"] == []
        expected = tagger.tag(text)
        assert span_rows(body["documents"][0]["spans"]) == span_rows(expected.spans)
        assert body["documents"][0] == expected.to_dict()  # the one schema (seqlab.core.schema), field for field
        assert body["documents"][0]["sentences"][0]["labels"] == expected.sentences[0].labels
        status, body = post(url + "/tag", json.dumps({"text": text}).encode())
        assert status == 200 and span_rows(body["documents"][0]["spans"]) == span_rows(expected.spans)
    finally:
        server.shutdown()


def test_pre_tokenized_sentences_are_tagged_as_given(tagger):
    server, url = serve(tagger)
    tokens = [["EU", "rejects", "German", "call", "."], ["Peter", "Blackburn"]]
    try:
        status, body = post(url + "/tag", json.dumps({"tokens": tokens}).encode())
    finally:
        server.shutdown()
    expected = tagger.tag_tokens(tokens)
    assert status == 200 and [s["tokens"] for s in body["sentences"]] == tokens
    assert [s["labels"] for s in body["sentences"]] == [s.labels for s in expected]
    assert [span_rows(s["spans"]) for s in body["sentences"]] == [span_rows(s.spans) for s in expected]


def test_one_sentence_may_be_given_as_its_tokens(tagger):
    server, url = serve(tagger)
    try:
        status, body = post(url + "/tag", json.dumps({"tokens": ["EU", "rejects", "German", "call"]}).encode())
    finally:
        server.shutdown()
    assert status == 200 and [s["tokens"] for s in body["sentences"]] == [["EU", "rejects", "German", "call"]]


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
    ("POST", "/tag", b'{"text": "' + b"a," * 40 + b'"}', 422, "text: 80 tokens in this request; at most 50"),
    ("POST", "/tag", b'{"texts": ["ok", "ab\\ud800"]}', 422, "texts[1]: character 3 is a lone surrogate"),
    ("POST", "/tag", b'{"tokens": [["ok", "\\udfff"]]}', 422, "tokens[0][1]: character 1 is a lone surrogate"),
    ("POST", "/tag", b'{"text": ' + b"[" * 3000 + b"]" * 3000 + b"}", 400, "JSON nested deeper than 64 levels"),
    ("POST", "/classify", b'{"sentences": []}', 404, "answers POST /tag"),
    ("POST", "/tag", b'{"text": "' + b"x" * 20_000 + b'"}', 413, "the body: 20012 bytes; at most 10000"),
    ("GET", "/tag", None, 405, "GET /tag: this service answers"),
    ("GET", "/nowhere", None, 404, "GET /nowhere: this service answers"),
])
def test_bad_requests_get_a_clear_error_naming_the_field_and_the_service_stays_up(tagger, method, path, body, status,
                                                                                  message):
    server, url = serve(tagger, max_tokens=50)
    try:
        request = urllib.request.Request(url + path, data=body, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                got, answer = answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as err:
            got, answer = err.code, json.loads(err.read())
        assert got == status and message in answer["error"], answer
        assert post(url + "/tag", b'{"text": "Peter Blackburn"}')[0] == 200
    finally:
        server.shutdown()


def test_a_chunked_body_over_the_limit_is_refused(tagger):
    import http.client

    server, url = serve(tagger)
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
    server, url = serve(tagger, batch_wait=0.05)
    texts = [f"Peter Blackburn visited Brussels {i} times." if i % 2 else "EU rejects German call." for i in range(16)]
    try:
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda t: post(url + "/tag", json.dumps({"text": t}).encode()), texts))
    finally:
        server.shutdown()
        del tagger.tag_many
    assert sum(sizes) == 16 and max(sizes) > 1  # some requests were tagged together
    for text, (status, body) in zip(texts, answers):
        assert status == 200 and body["documents"][0]["text"] == text
        assert span_rows(body["documents"][0]["spans"]) == span_rows(tagger.tag(text).spans)


def test_under_concurrent_load_bad_requests_fail_alone_and_every_good_one_gets_its_own_answer(tagger, caplog):
    """48 clients at once, micro-batched: one in six sends a lone surrogate (refused before batching, 422), and
    one text makes the model itself fail (its batch is run again request by request: only it gets a 500)."""
    tag_many = tagger.tag_many

    def failing_on_boom(texts, **options):
        if any("BOOM" in text for text in texts):
            raise RuntimeError("the model failed")
        return tag_many(texts, **options)

    texts = [f"Peter Blackburn visited Brussels {i} times." if i % 3 else f"EU rejects German call {i}."
             for i in range(48)]
    bodies = [b'{"text": "bad \\ud800 text"}' if i % 6 == 5 else json.dumps({"text": t}).encode()
              for i, t in enumerate(texts)]
    bodies[7] = json.dumps({"text": "BOOM goes the model"}).encode()
    alone = {t: tagger.tag(t).to_dict() for t in texts}
    tagger.tag_many = failing_on_boom
    server, url = serve(tagger, batch_wait=0.05)
    try:
        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda b: post(url + "/tag", b), bodies))
    finally:
        server.shutdown()
        del tagger.tag_many
    for i, (text, (status, body)) in enumerate(zip(texts, answers)):
        if i == 7:
            assert status == 500 and body == {"error": "internal error: RuntimeError"}
        elif i % 6 == 5:
            assert status == 422 and "text: character 5 is a lone surrogate" in body["error"], body
        else:
            assert status == 200 and body["documents"] == [alone[text]], (i, status, body)
    assert "the model failed on a batch of 1 requests" in caplog.text


def test_a_model_error_fails_only_its_batch_and_the_service_goes_on(tagger, caplog):
    tag_many, calls = tagger.tag_many, []

    def failing_once(texts, **options):
        calls.append(texts)
        if len(calls) == 1:
            raise RuntimeError("out of memory")
        return tag_many(texts, **options)

    tagger.tag_many = failing_once
    server, url = serve(tagger)
    try:
        status, body = post(url + "/tag", b'{"text": "Peter Blackburn"}')
        assert status == 500 and body == {"error": "internal error: RuntimeError"}
        assert post(url + "/tag", b'{"text": "Peter Blackburn"}')[0] == 200
    finally:
        server.shutdown()
        del tagger.tag_many
    assert "the model failed on a batch of 1 requests" in caplog.text


def test_without_orjson_the_standard_library_gives_the_same_json(monkeypatch):
    from seqlab.serve import app

    payload = {"documents": [{"text": "Zürich €", "spans": [{"confidence": 0.9946987628936768, "start": 0}]}]}
    fast = app._dumps(payload) if app.orjson is not None else None
    monkeypatch.setattr(app, "orjson", None)
    assert json.loads(app._dumps(payload)) == payload and (fast is None or app._dumps(payload) == fast)
    assert app._loads('{"text": "Zürich"}'.encode()) == {"text": "Zürich"}
    with pytest.raises(app.BadRequest, match="not UTF-8 JSON: Expecting property name"):
        app._loads(b"{not json")
    with pytest.raises(app.BadRequest, match="the body: JSON nested deeper than 64 levels"):
        app._loads(b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")  # json alone: a RecursionError


def test_a_missing_extra_fails_with_an_install_hint(tagger, monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now raises ImportError
    with pytest.raises(SeqlabError, match=r"uvicorn is not installed\): pip install 'seqlab\[serve\]'"):
        make_server(tagger, "test", port=0)


def test_classify_serves_a_relation_model_and_a_bad_sentence_fails_only_its_request(trained):
    model = seqlab.load(trained["relation"], "cpu")
    server, url = serve(model, batch_wait=0.2)
    good = "The <e1>smoke</e1> was caused by a <e2>fire</e2> in the kitchen."
    try:
        with ThreadPoolExecutor(2) as pool:  # batched together: the bad one must not fail the good one
            answers = list(pool.map(lambda s: post(url + "/classify", json.dumps({"sentences": [s]}).encode()),
                                    [good, "no markers here"]))
        with urllib.request.urlopen(url + "/model", timeout=30) as answer:
            assert json.loads(answer.read())["labels"] == model.labels
    finally:
        server.shutdown()
    (status, body), (bad_status, bad_body) = answers
    assert status == 200 and body["relations"][0]["label"] == model.classify(good).label
    assert bad_status == 422 and "sentences" in bad_body["error"]
