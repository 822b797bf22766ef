"""The tagging API's argument checks: one-line errors naming the argument."""
from __future__ import annotations

import pytest

from seqlab.core.errors import SeqlabError
from seqlab.tagging.inputs import check_positive, check_text, check_token_sentences


@pytest.mark.parametrize("value", [0, -1, 1.5, "3", True, None])
def test_sizes_are_positive_integers(value) -> None:
    with pytest.raises(SeqlabError, match=r"batch_size: expected a positive integer"):
        check_positive("batch_size", value)


def test_a_lone_surrogate_is_refused_with_its_position() -> None:
    assert check_text("Angela Merkel", "text 1") == "Angela Merkel"
    with pytest.raises(SeqlabError, match=r"text 2: character 3 is a lone surrogate"):
        check_text("ab\ud800c", "text 2")
    with pytest.raises(SeqlabError, match="expected a string, got bytes"):
        check_text(b"abc", "text 1")


@pytest.mark.parametrize("sentences, message", [
    ("a string", r"expected a list of sentences.*got str"),
    ([["EU", 3]], r"sentence 1, token 2: expected a token string, got int 3"),
    ([["EU"], "rejects"], r"sentence 2: expected a list of token strings, got str"),
    ([["EU", "\ud800"]], r"sentence 1, token 2: character 1 is a lone surrogate"),
    (None, r"expected a list of sentences"),
])
def test_token_sentences_are_lists_of_strings(sentences, message) -> None:
    with pytest.raises(SeqlabError, match=message):
        check_token_sentences(sentences)


def test_empty_sentences_pass_through() -> None:
    assert check_token_sentences([[], ("EU", "rejects")]) == [[], ["EU", "rejects"]]


def test_empty_and_space_tokens_are_tokens_as_in_a_file_eval_reads() -> None:
    assert check_token_sentences([["EU", "", " "]]) == [["EU", "", " "]]


def test_the_installed_model_tags_an_empty_token_as_eval_reads_one() -> None:
    import seqlab

    sentence = seqlab.load(device="cpu").tag_tokens([["Paris", "", "London"]])[0]
    assert sentence.tokens == ["Paris", "", "London"] and len(sentence.labels) == 3
    assert sentence.offsets[1] == (6, 6)


@pytest.mark.parametrize("call, message", [
    (lambda t: list(t.tag_many("Paris is nice")), r"tag_many: expected a list \(or other iterable\) of texts, got str"),
    (lambda t: t.tag("a\ud800"), r"tag: text: character 2 is a lone surrogate"),
    (lambda t: t.tag_tokens("EU rejects"), r"tag_tokens: expected a list of sentences"),
    (lambda t: list(t.tag_many(["x"], batch_size=0)), r"batch_size: expected a positive integer, got 0"),
])
def test_the_installed_model_refuses_bad_arguments_in_one_line(call, message) -> None:
    import seqlab

    with pytest.raises(SeqlabError, match=message):
        call(seqlab.load(device="cpu"))
