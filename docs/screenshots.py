"""Make the README's screenshots of seqlab's HTML pages in headless Chromium (apt-get install chromium):

    python docs/screenshots.py

writes docs/html_view.png (``seqlab tag --format html`` of resources/sample_news.txt by the installed
en-ner-conll03 model), docs/serve_demo.png (``seqlab serve``'s demo page with a sentence typed in) and
docs/report.png (the report of a run trained for two epochs on the tiny test fixture).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import seqlab  # noqa: E402
from seqlab.render.html import documents_html  # noqa: E402
from tests.browser.chromium import Browser, chromium_path  # noqa: E402
from tests.serve.conftest import serve  # noqa: E402

DOCS = ROOT / "docs"
SENTENCE = "German Chancellor Angela Merkel met French President Emmanuel Macron in Berlin on Tuesday."


def html_view(browser: Browser, tagger: seqlab.SequenceTagger, folder: Path) -> Path:
    lines = (ROOT / "resources" / "sample_news.txt").read_text(encoding="utf-8").splitlines()[:4]
    page = folder / "view.html"
    page.write_text(documents_html(tagger.tag_many(lines, confidences=True), title="seqlab tag --format html",
                                   labels=tagger.types), encoding="utf-8")
    browser.open(page.as_uri())
    return browser.screenshot(DOCS / "html_view.png", whole=False)


def serve_demo(browser: Browser, tagger: seqlab.SequenceTagger) -> Path:
    server, url = serve(tagger)
    try:
        browser.open(url + "/")
        browser.ask_demo(SENTENCE)
        return browser.screenshot(DOCS / "serve_demo.png", whole=False)
    finally:
        server.shutdown()


def report(browser: Browser, folder: Path) -> Path:
    fixtures = ROOT / "tests" / "fixtures" / "ner"
    os.environ["SEQLAB_DATA"] = str(fixtures)
    seqlab.train(fixtures / "tiny.yaml", folder / "run", overrides=("train.threads=1", "train.epochs=4"),
                 progress=False)
    browser.open((folder / "run" / "report.html").as_uri())
    return browser.screenshot(DOCS / "report.png", whole=False)


def main() -> None:
    tagger = seqlab.load(device="cpu")
    browser = Browser(chromium_path())
    try:
        with tempfile.TemporaryDirectory() as folder:
            for path in (html_view(browser, tagger, Path(folder)), serve_demo(browser, tagger),
                         report(browser, Path(folder))):
                print(path)
    finally:
        browser.close()


if __name__ == "__main__":
    main()
