"""Tokenizer and sentence splitter chosen by the language: English unchanged, others by spaCy's rules."""
from __future__ import annotations

import pytest

from features.tokenize import sentence_tokens
from seqlab.core.errors import SeqlabError
from seqlab.text.pipeline import TextPipeline
from seqlab.text.tokenizers import split_sentences, word_spans

pytest.importorskip("spacy", reason="the languages extra (spaCy) is not installed")


def _words(language: str, text: str) -> list[list[str]]:
    return [s.words for s in TextPipeline(language).sentences(text)]


def test_english_is_the_conll_tokenizer_unchanged() -> None:
    text = "Mr. Smith didn't go to the U.S. He stayed."
    assert TextPipeline("en").sentences(text) == sentence_tokens(text)


def test_french_clitics_are_split_by_spacy_rules() -> None:
    assert _words("fr", "L'Agence qu'elle n'a pas vue.") == [["L'", "Agence", "qu'", "elle", "n'", "a", "pas",
                                                             "vue", "."]]


def test_spanish_opening_marks_and_sentences() -> None:
    assert _words("es", "¿Qué pasa? ¡Hola! Bien.") == [["¿", "Qué", "pasa", "?"], ["¡", "Hola", "!"], ["Bien", "."]]


def test_greek_question_mark_ends_a_sentence() -> None:
    assert _words("el", "Πού πας; Στο σπίτι.") == [["Πού", "πας", ";"], ["Στο", "σπίτι", "."]]


@pytest.mark.parametrize("text, expected", [
    ('Il a dit « oui. » Puis il part.', [["Il", "a", "dit", "«", "oui", ".", "»"], ["Puis", "il", "part", "."]]),
    ("Attends… Non.", [["Attends", "…"], ["Non", "."]]),
    ("Un\n\nDeux", [["Un"], ["Deux"]]),
])
def test_sentence_ends_keep_closers_and_blank_lines_split(text: str, expected: list[list[str]]) -> None:
    assert _words("fr", text) == expected


def test_offsets_are_into_the_text() -> None:
    text = "  Le  chat."
    (sentence,) = TextPipeline("fr").sentences(text)
    assert [text[s:e] for s, e in zip(sentence.starts, sentence.ends)] == sentence.words


def test_split_sentences_on_spans() -> None:
    text = "Oui. Non"
    assert split_sentences(text, word_spans(text, "fr"), "fr") == [[(0, 3), (3, 4)], [(5, 8)]]


def test_an_unknown_language_is_a_one_line_error() -> None:
    with pytest.raises(SeqlabError, match="'qqq'.*no tokenizer"):
        TextPipeline("qqq").sentences("a b")
