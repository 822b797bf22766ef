"""An HTML page (``seqlab tag --format html``): the tagged documents in one self-contained page, entities in a
colour per type with their label (:mod:`seqlab.render.html`); written only, never read."""
from __future__ import annotations

from typing import Any, Sequence

from seqlab.data.formats.format import Format
from seqlab.render.html import document_html, page_parts


def render_html(number: int, document: Any, token_labels: bool = False) -> str:
    """One document's block of the page: its spans marked, or a token-label model's tags under its words."""
    return document_html(document, token_labels=token_labels) + "\n"


def html_page(title: str, labels: Sequence[str], language: str | None = None) -> tuple[str, str]:
    """The page's head (title, a colour per entity type, ``lang`` and ``dir`` of the model's ``language``) and
    its end."""
    return page_parts(title=title, labels=labels, language=language)


FORMAT = Format("html", None, None, render=render_html, output="html", page=html_page)
