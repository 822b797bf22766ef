"""``GET /`` of seqlab serve: the demo page, its card and its strict Content-Security-Policy."""
from __future__ import annotations

import re
import urllib.request

import pytest

from seqlab.serve.demo import card_html, demo_page, policy
from tests.serve.conftest import serve

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


def _get(url: str) -> tuple[int, dict[str, str], str]:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return answer.status, dict(answer.headers), answer.read().decode("utf-8")


@pytest.mark.parametrize("kind, path", [("tagger", "/tag"), ("relation", "/classify")])
def test_the_demo_page_names_its_endpoint_under_a_nonce_policy(trained, kind, path):
    import seqlab

    server, url = serve(seqlab.load(trained[kind], "cpu"))
    try:
        status, headers, page = _get(url + "/")
        _, again, _ = _get(url + "/")
    finally:
        server.shutdown()
    csp = headers["content-security-policy"]
    nonce = re.search(r"'nonce-([^']+)'", csp).group(1)
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert csp.startswith("default-src 'self'; script-src 'nonce-") and "'unsafe-inline'" not in csp
    assert again["content-security-policy"] != csp  # a fresh nonce for each answer
    assert page.count(f'nonce="{nonce}"') == 2 and f"const path = \"{path}\"" in page
    assert not re.search(r"(src|href)\s*=|https?://", page)


def test_the_card_and_the_title_are_escaped():
    described = {"model": "<b>m</b>", "task": "tagging", "labels": ["PER", "<i>"],
                 "config": {"data": {"language": "en"}},
                 "manifest": {"scores": {"dev": 94.612, "test": 90.46}, "best_epoch": 43}}
    page = demo_page(described, "/tag", "abc")
    assert "<b>m</b>" not in page and "&lt;b&gt;m&lt;/b&gt;" in page and "<i>" not in page
    card = card_html(described)
    for shown in ("dev score</th><td>94.61", "test score</th><td>90.46", "best epoch</th><td>43",
                  "language</th><td>en"):
        assert shown in card


def test_the_policy_allows_only_this_origin_and_the_nonce():
    assert policy("n1") == ("default-src 'self'; script-src 'nonce-n1'; style-src 'nonce-n1'; img-src 'self' data:; "
                            "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
                            "frame-ancestors 'none'")


@pytest.mark.parametrize("config, attributes", [
    ({"data": {"language": "ar"}}, 'lang="ar" dir="rtl"'), ({"data": {"language": "fr"}}, 'lang="fr"'),
    ({"task": "relation"}, 'lang="und"'),
])
def test_the_text_box_and_the_answers_are_in_the_model_language(config, attributes):
    """The page's own words (card, form, status) are English; what is typed and what comes back is the model's."""
    described = {"model": "m", "task": "tagging", "labels": ["PER"], "config": config}
    page = demo_page(described, "/tag", "abc")
    assert page.startswith('<!DOCTYPE html>\n<html lang="en"><head>')
    assert f'<textarea id="text" rows="5" {attributes}></textarea>' in page
    assert f'<div id="out" {attributes}></div>' in page
