"""The HTML view of tagged documents and classified relations: marks, labels, confidences, escaping."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from seqlab.cli import main
from seqlab.data.semeval import RelationExample
from seqlab.render.html import documents_html, label_css, page, relation_html
from seqlab.tagging.document import Document, Sentence, Span, SpanRelation

TEXT = "<script>alert(1)</script> Angela Merkel visited Paris & Rome"


def _document() -> Document:
    tokens = TEXT.split(" ")
    offsets, cursor = [], 0
    for token in tokens:
        offsets.append((cursor, cursor + len(token)))
        cursor += len(token) + 1
    spans = [Span(text, label, TEXT.index(text), TEXT.index(text) + len(text), confidence, start, end)
             for text, label, confidence, start, end in (("Angela Merkel", "PER", 0.91, 1, 3),
                                                          ("Paris", "LOC", 0.5, 4, 5), ("Rome", "LOC", 1.0, 6, 7))]
    labels = ["O", "B-PER", "I-PER", "O", "B-LOC", "O", "B-LOC"]
    return Document(TEXT, [Sentence(tokens, offsets, labels, spans)])


class _Marks(HTMLParser):
    """The marks of a page, (label, title, text without the label), and every text node."""

    def __init__(self) -> None:
        super().__init__()
        self.marks: list[list[str]] = []
        self.depth, self.texts, self.in_label = 0, [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "mark":
            self.marks.append([attrs.get("data-label") or attrs.get("data-role"), attrs["title"], ""])
            self.depth += 1
        self.in_label = tag == "span" and attrs.get("class") == "lab"

    def handle_endtag(self, tag):
        self.depth -= tag == "mark"
        self.in_label = False

    def handle_data(self, data):
        self.texts.append(data)
        if self.depth and not self.in_label:
            self.marks[-1][2] += data


def _parse(text: str) -> _Marks:
    parser = _Marks()
    parser.feed(text)
    return parser


def test_every_span_is_marked_with_its_label_and_confidence_and_the_text_stays_text():
    view = _document().to_html(title="a <b> title")
    marks = _parse(view).marks
    assert marks == [["PER", "PER 0.910", "Angela Merkel"], ["LOC", "LOC 0.500", "Paris"], ["LOC", "LOC 1.000", "Rome"]]
    assert "<script>" not in view and "&lt;script&gt;alert(1)&lt;/script&gt;" in view and "&amp; " in view
    assert "<title>a &lt;b&gt; title</title>" in view


def test_the_page_loads_nothing_and_colours_each_type():
    view = documents_html([_document()], labels=["PER", "LOC", "ORG"])
    assert not re.search(r"(src|href)\s*=|url\(|@import|https?:", view.replace("http-equiv", ""))
    assert "default-src 'none'" in view.replace("&#x27;", "'")
    rules = dict(re.findall(r'mark\[data-label="([^"]+)"\]\{background:(#\w+)\}', view))
    assert sorted(rules) == ["LOC", "ORG", "PER"] and len(set(rules.values())) == 3


def test_a_label_cannot_end_the_style_element():
    assert "</style>" not in label_css(['x"]</style><script>'])


def test_token_labels_stand_under_their_words():
    view = _document().to_html(token_labels=True)
    tags = re.findall(r'<span class="tag">([^<]*)</span>', view)
    assert tags == _document().sentences[0].labels and "<mark" not in view


def test_a_relation_shows_its_two_entities_and_the_relation():
    example = RelationExample("7", ["The", "<smoke>", "came", "from", "a", "kitchen", "fire"], (1, 1), (5, 6))
    relation = {"label": "Entity-Origin(e1,e2)", "confidence": 0.8125, "e1": "<smoke>", "e2": "kitchen fire"}
    view = page(relation_html(example, relation), title="r")
    parsed = _parse(view)
    assert "&lt;smoke&gt;" in view and "<smoke>" not in view
    assert parsed.marks == [["e1", "e1: <smoke>", "<smoke>"],
                            ["e2", "e2: kitchen fire", "kitchen fire"]]
    assert "Entity-Origin(e1,e2)" in parsed.texts and "0.812" in "".join(parsed.texts)


def test_an_extraction_document_lists_its_relations_between_its_marked_spans():
    doc = _document()
    related = Document(doc.text, doc.sentences, [SpanRelation(0, 2, "Live<In>", 0.75)])
    view = related.to_html()
    parsed = _parse(view)
    assert parsed.marks[3:] == [["PER", "PER 0.910", "Angela Merkel"], ["LOC", "LOC 1.000", "Rome"]]
    assert "→ Live&lt;In&gt; →" in view and "0.750" in "".join(parsed.texts)
    assert 'class="rels"' not in doc.to_html()  # a tagger's document shows no relation list


def test_tag_html_shows_every_span_jsonl_gives(capsys, tmp_path):
    from seqlab.apps.installed import model_path

    try:
        model_path(None)
    except Exception as err:  # noqa: BLE001 - the installed model is optional here
        pytest.skip(f"the installed en-ner-conll03 model is not here: {err}")
    from pathlib import Path

    sample = Path(__file__).parents[2] / "resources" / "sample_news.txt"
    assert main(["tag", "en-ner-conll03", str(sample), "--format", "jsonl"]) == 0
    spans = [[s["label"], s["text"]] for line in capsys.readouterr().out.splitlines()
             for s in json.loads(line)["spans"]]
    assert main(["tag", "en-ner-conll03", str(sample), "--format", "html"]) == 0
    marks = [[label, text] for label, _, text in _parse(capsys.readouterr().out).marks]
    assert marks == spans and len(spans) > 10


def test_tag_html_writes_one_page(capsys):
    with pytest.raises(SystemExit):
        main(["tag", "m", "f", "--format", "nope"])
    assert main(["tag", "en-ner-conll03", "-", "--format", "html", "--workers", "2"]) == 2
    assert "--format html writes one page" in capsys.readouterr().err


@pytest.mark.parametrize("language, attributes", [
    ("en", 'lang="en"'), ("fr", 'lang="fr"'), ("ar", 'lang="ar" dir="rtl"'), ("he", 'lang="he" dir="rtl"'),
    ("fa", 'lang="fa" dir="rtl"'), ("ur", 'lang="ur" dir="rtl"'), ("fas", 'lang="fas" dir="rtl"'),
    (None, 'lang="und"'), ('x"><script>', 'lang="x&quot;&gt;&lt;script&gt;"'),
])
def test_a_page_is_in_its_language_and_right_to_left_where_that_is_written_so(language, attributes):
    from seqlab.render.html import language_attributes

    assert language_attributes(language) == attributes
    assert page("b", title="t", language=language).startswith(f"<!DOCTYPE html>\n<html {attributes}><head>")
    assert documents_html([_document()], language=language).startswith(f"<!DOCTYPE html>\n<html {attributes}>")
    assert _document().to_html(language=language).startswith(f"<!DOCTYPE html>\n<html {attributes}>")


def test_every_right_to_left_code_is_a_language_code_and_labels_sit_at_the_inline_start():
    from seqlab.data.encoding import LANGUAGE_CODE
    from seqlab.render.html import CSS, RTL_LANGUAGES

    assert all(LANGUAGE_CODE.fullmatch(code) for code in RTL_LANGUAGES) and {"ar", "he", "fa", "ur"} <= RTL_LANGUAGES
    assert "margin-left" not in CSS  # the label and the relation's name follow the text, in either direction


@pytest.mark.parametrize("config, language", [
    ({"data": {"language": "ar"}}, "ar"), ({"data": {"train": "x"}}, None), ({"task": "relation"}, None),
    (None, None), ({"data": None}, None), ({"data": {"language": ""}}, None),
])
def test_the_language_of_a_model_is_its_config_data_language(config, language):
    from seqlab.render.html import config_language

    assert config_language(config) == language


def test_tag_html_is_in_the_model_language(capsys, tmp_path, monkeypatch):
    """The installed English model's page is lang="en"; a copy of it whose config says Hebrew is right to left."""
    import shutil

    from seqlab.apps.installed import model_path
    from seqlab.apps.model_cache import unpacked

    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    text = tmp_path / "in.txt"
    text.write_text("שלום עולם\nEU rejects German call .\n", encoding="utf-8")
    assert main(["tag", "en-ner-conll03", str(text), "--tokenized", "--format", "html"]) == 0
    assert capsys.readouterr().out.startswith('<!DOCTYPE html>\n<html lang="en"><head>')
    with unpacked(model_path(None)) as run:
        shutil.copytree(run, tmp_path / "he")
    config = tmp_path / "he" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("data:\n", "data:\n  language: he\n", 1),
                      encoding="utf-8")
    assert main(["tag", str(tmp_path / "he"), str(text), "--tokenized", "--format", "html"]) == 0
    view = capsys.readouterr().out
    assert view.startswith('<!DOCTYPE html>\n<html lang="he" dir="rtl"><head>') and "שלום" in view
