"""Documents: surface tokens over words (multiword tokens share offsets) and ``word/TAG`` inline output."""
from __future__ import annotations

from seqlab.tagging.document import Document, Sentence, SurfaceToken, render

#: French ``du`` is one surface token over the words ``de`` and ``le``.
DOC = Document("Il vient du port.", [Sentence(["Il", "vient", "de", "le", "port", "."],
                                             [(0, 2), (3, 8), (9, 11), (9, 11), (12, 16), (16, 17)],
                                             ["PRON", "VERB", "ADP", "DET", "NOUN", "PUNCT"], [])])


def test_surface_tokens_group_the_words_of_a_multiword_token() -> None:
    (tokens,) = DOC.surface_tokens()
    assert [t.text for t in tokens] == ["Il", "vient", "du", "port", "."]
    assert tokens[2] == SurfaceToken("du", 9, 11, 2, 4)


def test_inline_for_token_labels_is_word_slash_tag() -> None:
    assert render([(1, DOC)], "inline", token_labels=True) == "Il/PRON vient/VERB de/ADP le/DET port/NOUN ./PUNCT\n"
    assert render([(1, DOC)], "inline") == "Il vient du port.\n"


def test_conllu_writes_the_range_line_then_the_words() -> None:
    rows = [line.split("\t") for line in render([(1, DOC)], "conllu", token_labels=True).splitlines()
            if line and not line.startswith("#")]
    assert [(r[0], r[1], r[3], r[9]) for r in rows] == [
        ("1", "Il", "PRON", "_"), ("2", "vient", "VERB", "_"), ("3-4", "du", "_", "_"), ("3", "de", "ADP", "_"),
        ("4", "le", "DET", "_"), ("5", "port", "NOUN", "SpaceAfter=No"), ("6", ".", "PUNCT", "_")]
