"""Tagged documents and classified relations as one self-contained HTML page: entities highlighted in a colour
per type with their label (the confidence in the ``title``, shown on hover), a token-label model's tags under
its words (as displaCy's entity view, without arcs), a relation's two entities and the predicted relation, and
under an extraction model's document the relations it found between its spans (head, relation, tail).

A page is in its model's language (``data.language``; ``und``, undetermined, for a model that states none), and
right to left (``dir="rtl"``) for a language of :data:`RTL_LANGUAGES`. Every text is escaped; the page loads
nothing (no external CSS, script or font) and says so to the browser with a Content-Security-Policy that allows
only its inline style and ``data:`` images. The same CSS and colours serve ``seqlab serve``'s demo page
(:mod:`seqlab.serve.demo`), whose script builds the same elements.
"""
from __future__ import annotations

import html
from typing import Any, Iterable, Mapping, Sequence

#: A tagged document (:class:`seqlab.tagging.document.Document`: ``text``, ``sentences``, ``spans``) and one of its
#: sentences, read by their attributes: this module sits on the data floor, below the tagging package.
Document = Any
Sentence = Any

#: Background colours of entity types, given in the order of the model's sorted labels (then around again).
PALETTE = ("#7aecec", "#bfeeb7", "#feca74", "#ff9561", "#aa9cfc", "#c887fb", "#9cc9cc", "#ffeb80", "#ff8197",
           "#f0d0ff", "#bfe1d9", "#e4e7d2")
#: The two entities of a relation.
RELATION_COLOURS = {"e1": "#7aecec", "e2": "#feca74"}
#: Languages written right to left, by the ISO 639-1 and 639-3 codes ``data.language`` takes: Arabic (and its
#: varieties), Hebrew, Persian, Urdu, Pashto, Sindhi, Uyghur, Sorani Kurdish, Dhivehi, Yiddish, Syriac, Aramaic.
RTL_LANGUAGES = frozenset({
    "ar", "fa", "he", "ur", "ps", "sd", "ug", "dv", "yi", "ckb", "arc", "syc", "syr",
    "ara", "arb", "arz", "apc", "ajp", "acm", "aeb", "ary", "fas", "pes", "prs", "heb", "hbo", "urd", "pus",
    "snd", "uig", "div", "yid", "azb", "pnb", "skr"})
#: The ``lang`` of a page whose model states no language (BCP 47: undetermined).
UNDETERMINED = "und"
#: A static page's policy: nothing is fetched, only its own style and embedded images are used.
PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """body{font-family:sans-serif;margin:2em;line-height:2.4;color:#222}
.doc{border-bottom:1px solid #ddd;padding:.4em 0;white-space:pre-wrap}
mark.ent{padding:.2em .35em;border-radius:.35em;margin:0 .1em}
mark.ent .lab{font-size:.65em;font-weight:bold;text-transform:uppercase;margin-inline-start:.4em;vertical-align:middle}
.tok{display:inline-block;text-align:center;margin:0 .25em;line-height:1.3;white-space:nowrap}
.tok .tag{display:block;font-size:.7em;color:#555;font-weight:bold}
.rel .name{font-weight:bold;margin-inline-start:.6em}.rel .conf{color:#666;font-size:.8em;margin-inline-start:.4em}
ul.rels{margin:.2em 0 .4em;padding-inline-start:1.2em}ul.rels li.rel .name{margin-inline-end:.6em}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.1em .5em;line-height:1.4;text-align:right}
.card{line-height:1.5}pre{line-height:1.3}img{max-width:100%}
table.side{table-layout:fixed;width:100%}td.side,table.side>tbody>tr>th{text-align:left;vertical-align:top;border:none;
padding:0 1em 0 0}"""


def language_attributes(language: str | None) -> str:
    """The ``lang`` attribute of an element holding text in ``language`` (None: :data:`UNDETERMINED`), with
    ``dir="rtl"`` for a language of :data:`RTL_LANGUAGES`."""
    code = language or UNDETERMINED
    return f'lang="{html.escape(code)}"' + (' dir="rtl"' if code in RTL_LANGUAGES else "")


def config_language(config: Mapping[str, Any] | None) -> str | None:
    """The language a model's resolved config states (``data.language``, as the card shows it), None where it
    states none (a relation model's); ``config`` is the plain tree of ``LoadedModel.metadata()["config"]``."""
    data = (config or {}).get("data")
    language = data.get("language") if isinstance(data, Mapping) else None
    return language if isinstance(language, str) and language else None


def label_css(labels: Iterable[str]) -> str:
    """One CSS rule per entity type, its colour by its place among the sorted ``labels``."""
    rules = [f'mark[data-label="{_css_string(label)}"]{{background:{PALETTE[i % len(PALETTE)]}}}'
             for i, label in enumerate(sorted(set(labels)))]
    rules += [f'mark[data-role="{role}"]{{background:{colour}}}' for role, colour in RELATION_COLOURS.items()]
    return "\n".join(rules)


def _css_string(text: str) -> str:
    """``text`` inside a double-quoted CSS string: backslashes, quotes and line ends escaped, ``<`` too (the
    rule sits in a ``<style>`` element, which ``</style>`` would end)."""
    return "".join(f"\\{ord(c):x} " if c in '\\"<>\n\r' else c for c in text)


def _mark(text: str, label: str, title: str, attribute: str = "data-label") -> str:
    return (f'<mark class="ent" {attribute}="{html.escape(label)}" title="{html.escape(title)}">{html.escape(text)}'
            f'<span class="lab">{html.escape(label)}</span></mark>')


def document_html(document: Document, *, token_labels: bool = False) -> str:
    """One tagged document as a ``<div>``: its spans marked, or (``token_labels``, a POS tagger's) each token with
    its label under it."""
    if token_labels:
        return f'<div class="doc">{"".join(_sentence_tokens(document.text, s) for s in document.sentences)}</div>'
    pieces, cursor = [], 0
    for span in document.spans:
        pieces.append(html.escape(document.text[cursor:span.start]))
        pieces.append(_mark(document.text[span.start:span.end], span.label, f"{span.label} {span.confidence:.3f}"))
        cursor = span.end
    pieces.append(html.escape(document.text[cursor:]))
    return f'<div class="doc">{"".join(pieces)}{_relations_html(document)}</div>'


def _relations_html(document: Document) -> str:
    """An extraction model's relations (``head`` and ``tail`` index the document's spans) as a list under its
    text: the head span, the relation and its confidence, the tail span; nothing for a tagger's document."""
    relations = getattr(document, "relations", None)
    if not relations:
        return ""
    spans = document.spans

    def marked(span: Any) -> str:
        return _mark(document.text[span.start:span.end], span.label, f"{span.label} {span.confidence:.3f}")

    items = "".join(f'<li class="rel">{marked(spans[r.head])}<span class="name">→ {html.escape(r.label)} →</span>'
                    f'{marked(spans[r.tail])}<span class="conf">{r.confidence:.3f}</span></li>' for r in relations)
    return f'<ul class="rels">{items}</ul>'


def _sentence_tokens(text: str, sentence: Sentence) -> str:
    return "".join(f'<span class="tok" title="{html.escape(label)}">{html.escape(text[start:end])}'
                   f'<span class="tag">{html.escape(label)}</span></span>'
                   for (start, end), label in zip(sentence.offsets, sentence.labels))


def relation_html(example: Any, relation: Any) -> str:
    """A classified sentence as a ``<div>``: its tokens with the two entities marked, then the predicted relation
    and its confidence (``example``: a :class:`seqlab.data.semeval.RelationExample`, entity token spans inclusive;
    ``relation``: a :class:`seqlab.relation.predict.Relation` or its JSON)."""
    get = relation.get if isinstance(relation, dict) else lambda key: getattr(relation, key)
    roles = {i: role for role, (a, b) in (("e1", example.e1), ("e2", example.e2)) for i in range(a, b + 1)}
    pieces, i = [], 0
    while i < len(example.tokens):
        role = roles.get(i)
        if role is None:
            pieces.append(html.escape(example.tokens[i]))
            i += 1
            continue
        a, b = getattr(example, role)
        pieces.append(_mark(" ".join(example.tokens[a:b + 1]), role, f"{role}: {get(role)}", "data-role"))
        i = b + 1
    return (f'<div class="doc rel">{" ".join(pieces)}<span class="name">{html.escape(get("label"))}</span>'
            f'<span class="conf">{float(get("confidence")):.3f}</span></div>')


def page(body: str, *, title: str, labels: Iterable[str] = (), policy: str = PAGE_POLICY,
         language: str | None = None) -> str:
    """A whole HTML page of ``body`` (already escaped HTML) under an escaped ``title``, with the CSS of the
    entity types ``labels`` and the Content-Security-Policy ``policy`` in a ``<meta>`` element, its text in
    ``language`` (:func:`language_attributes`)."""
    return (f'<!DOCTYPE html>\n<html {language_attributes(language)}><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">'
            f'<title>{html.escape(title)}</title><style>{CSS}\n{label_css(labels)}</style></head>\n'
            f'<body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n')


def page_parts(*, title: str, labels: Iterable[str] = (), language: str | None = None) -> tuple[str, str]:
    """:func:`page` split around its body: (head, tail), to stream documents between them."""
    head, _, tail = page("\0", title=title, labels=labels, language=language).partition("\0")
    return head, tail


def documents_html(documents: Iterable[Document], *, title: str = "seqlab", labels: Sequence[str] | None = None,
                   token_labels: bool = False, language: str | None = None) -> str:
    """Tagged documents as one page; ``labels``: the model's entity types (default: those found); ``language``:
    the documents' (the model's ``data.language``; None: undetermined)."""
    documents = list(documents)
    found = labels if labels is not None else [span.label for doc in documents for span in doc.spans]
    body = "\n".join(document_html(doc, token_labels=token_labels) for doc in documents)
    return page(body, title=title, labels=found, language=language)


def relations_html(examples: Sequence[Any], relations: Iterable[Any], *, title: str = "seqlab",
                   language: str | None = None) -> str:
    """Classified sentences (:func:`relation_html`) as one page, in ``language`` (None: undetermined)."""
    return page("\n".join(relation_html(e, r) for e, r in zip(examples, relations)), title=title, language=language)
