"""seqlab's HTML pages in a real browser (headless Chromium): the tagged-text view, ``seqlab serve``'s demo page
(a sentence typed in and its answer drawn) and a run's training report; each fetches nothing from the network."""
from __future__ import annotations

from pathlib import Path

import pytest

import seqlab
from seqlab.render.html import documents_html
from tests.browser.chromium import Browser, chromium_path

SAMPLE = Path(__file__).parents[2] / "resources" / "sample_news.txt"
#: The DOM's marks as [label, text without the label] rows.
MARKS = ("[...document.querySelectorAll('#out mark, body > .doc mark')].map(m => [m.dataset.label || m.dataset.role, "
         "[...m.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('')])")


@pytest.fixture(scope="module")
def browser():
    opened = Browser(chromium_path())
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def ner_model():
    from seqlab.apps.installed import model_path

    try:
        model_path(None)
    except Exception as err:  # noqa: BLE001 - the installed model is optional in a source checkout
        pytest.skip(f"the installed en-ner-conll03 model is not here: {err}")
    return seqlab.load(device="cpu")


def _local_only(requests: list[str], origin: str) -> None:
    assert requests and all(url.startswith(origin) for url in requests), requests


def test_the_html_view_highlights_every_span_and_fetches_nothing(browser, ner_model, tmp_path):
    documents = list(ner_model.tag_many(SAMPLE.read_text(encoding="utf-8").splitlines(), confidences=True))
    page = tmp_path / "view.html"
    page.write_text(documents_html(documents, labels=ner_model.types), encoding="utf-8")
    browser.requests.clear()
    browser.open(page.as_uri())
    marks = browser.evaluate(MARKS)
    assert marks == [[s.label, s.text] for doc in documents for s in doc.spans] and len(marks) > 10
    titles = browser.evaluate("[...document.querySelectorAll('mark')].map(m => m.title)")
    assert titles == [f"{s.label} {s.confidence:.3f}" for doc in documents for s in doc.spans]
    _local_only(browser.requests, page.as_uri())
    assert browser.screenshot(tmp_path / "view.png").stat().st_size > 1000


def _serve(model):
    pytest.importorskip("starlette")
    from tests.serve.conftest import serve

    return serve(model)


def test_the_demo_page_tags_what_a_person_types(browser, ner_model, tmp_path):
    sentence = "Angela Merkel met <b>Emmanuel Macron</b> in Berlin on Tuesday."
    server, url = _serve(ner_model)
    try:
        browser.requests.clear()
        browser.open(url + "/")
        card = browser.evaluate("document.querySelector('table.card').textContent")
        browser.ask_demo(sentence)
        marks = browser.evaluate(MARKS)
        browser.screenshot(tmp_path / "demo.png")
    finally:
        server.shutdown()
    assert "LOC, MISC, ORG, PER" in card and "language" in card
    assert marks == [[s.label, s.text] for s in ner_model.tag(sentence).spans] and len(marks) >= 3
    assert browser.evaluate("document.querySelectorAll('#out b').length") == 0  # the typed tag stayed text
    _local_only(browser.requests, url)
    assert url + "/tag" in browser.requests


def _answer(browser, model, text: str, *scripts: str) -> list:
    """Type ``text`` into the demo page of ``model`` served here, and what each of ``scripts`` then reads off it."""
    server, url = _serve(model)
    try:
        browser.open(url + "/")
        browser.ask_demo(text)
        return [browser.evaluate(script) for script in scripts]
    finally:
        server.shutdown()


def test_the_demo_page_of_a_relation_model_names_the_relation(browser, relation_run, tmp_path):
    model = seqlab.load(relation_run, "cpu")
    sentence = "The <e1>smoke</e1> was caused by a <e2>fire</e2>."
    marks, name = _answer(browser, model, sentence, MARKS, "document.querySelector('#out .name').textContent")
    assert marks == [["e1", "smoke"], ["e2", "fire"]]
    assert name == model.classify(sentence).label


def test_the_demo_page_of_an_extraction_model_lists_the_relations_between_the_spans(browser, extraction_model_run):
    model = seqlab.load(extraction_model_run, "cpu")
    text = "John lives in Paris . IBM is based in Rome ."
    relations, = _answer(browser, model, text, "Array.from(document.querySelectorAll('#out li.rel'), li => "
                         "Array.from(li.querySelectorAll('mark'), m => m.firstChild.textContent)"
                         ".concat([li.querySelector('.name').textContent]))")
    doc = model.tag(text)
    assert doc.relations and relations == [[doc.spans[r.head].text, doc.spans[r.tail].text, f"→ {r.label} →"]
                                           for r in doc.relations]


def test_the_training_report_shows_its_plots_and_fetches_nothing(browser, tagger_run, tmp_path):
    pytest.importorskip("matplotlib")
    from seqlab.apps.report import REPORT

    page = tagger_run / REPORT
    browser.requests.clear()
    browser.open(page.as_uri())
    shown = browser.evaluate("[...document.images].map(i => [i.alt, i.complete && i.naturalWidth > 100])")
    assert [alt for alt, _ in shown][:1] == ["dev score per epoch"] and all(ok for _, ok in shown)
    assert "reliability diagram" in [alt for alt, _ in shown]
    assert all(url == page.as_uri() or url.startswith("data:image/png;base64,") for url in browser.requests)
    assert browser.screenshot(tmp_path / "report.png").stat().st_size > 1000
