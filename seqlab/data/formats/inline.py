"""Inline text (``seqlab tag --format inline``): each input line with its entities marked ``[LABEL words]``;
written only, never read."""
from __future__ import annotations

from typing import Any

from seqlab.data.formats.format import Format


def render_inline(number: int, document: Any, token_labels: bool = False) -> str:
    """The document's text with every span marked (:meth:`seqlab.tagging.document.Document.inline`), or a token-label
    model's words each with its tag, ``word/TAG`` (:meth:`~seqlab.tagging.document.Document.tagged_words`)."""
    return (document.tagged_words() if token_labels else document.inline()) + "\n"


FORMAT = Format("inline", None, None, render=render_inline, output="inline")
