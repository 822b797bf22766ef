"""features.orthographic: Turian, Bergstra & Bengio (2009) spelling features and POS one-hot vectors."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from features.base import DiscreteExtractor, Extractor, SentenceTransformer
from features.orthographic import (
    CAPITALIZATION,
    LENGTH_BUCKETS,
    NotFittedError,
    OrthographicFeatures,
    POSOneHot,
    bucket,
    capitalization,
    char_type,
    word_type,
)

TRAIN = [["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."],
         ["Label-making", "rose", "1,234.5", "pct", "(", "U.S.", ")"]]


@pytest.mark.parametrize(
    "char, kind", [("A", "A"), ("É", "A"), ("z", "a"), ("é", "a"), ("7", "n"), ("(", "("), ("-", "-")]
)
def test_char_type(char, kind):
    assert char_type(char) == kind


@pytest.mark.parametrize(
    "word, kind",
    [
        ("Label-making", "Aa-a"),
        ("U.S.", "A.A."),
        ("1,234.5", "n,n.n"),
        ("EU", "A"),
        ("rejects", "a"),
        ("(1)", "(n)"),
        ("--", "-"),
        ("Zürich", "Aa"),
        ("iPhone", "aAa"),
        ("1980s", "na"),
        ("McDonald's", "AaAa'a"),
    ],
)
def test_word_type(word, kind):
    assert word_type(word) == kind


@pytest.mark.parametrize(
    "word, pattern",
    [
        (".", "noAlphaNum"),
        ("--", "noAlphaNum"),
        ("1,234", "numeric"),
        ("-0.5", "numeric"),
        ("5%", "numeric"),
        ("1996-08-22", "numeric"),
        ("(1)", "allLower"),  # digits but not a number as written
        ("£5", "allLower"),
        ("cat", "allLower"),
        ("1980s", "allLower"),
        ("EU", "allUpper"),
        ("U.S.", "allUpper"),
        ("I", "allUpper"),
        ("Label-making", "upperFirst"),
        ("McDonald", "upperFirst"),
        ("iPhone", "upperNotFirst"),
        ("'Tis", "upperNotFirst"),
    ],
)
def test_capitalization(word, pattern):
    assert capitalization(word) == pattern
    assert pattern in CAPITALIZATION


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), min_size=1, max_size=12)
       | st.text(alphabet="aA1.-É", min_size=1, max_size=12))
def test_word_type_and_capitalization_follow_their_per_character_definitions(word):
    """ASCII words take a fast path (str.translate and regular expressions); it must agree with the
    definitions, written here character by character with str methods."""
    symbols = [char_type(c) for c in word]
    assert word_type(word) == "".join(s for i, s in enumerate(symbols) if i == 0 or symbols[i - 1] != s)
    if re.fullmatch(r"[+-]?[\d.,:/-]*\d[\d.,:/-]*%?\n?", word):
        want = "numeric"
    elif not any(c.isalnum() for c in word):
        want = "noAlphaNum"
    elif word.isupper():
        want = "allUpper"
    elif not any(c.isupper() for c in word):
        want = "allLower"
    else:
        want = "upperFirst" if word[0].isupper() else "upperNotFirst"
    assert capitalization(word) == want


@pytest.mark.parametrize(
    "n, name", [(0, "0"), (1, "1"), (4, "4"), (5, "5-6"), (6, "5-6"), (9, "7-9"), (10, "10+"), (99, "10+")]
)
def test_length_bucket(n, name):
    assert bucket(n, LENGTH_BUCKETS) == name


def test_feature_dicts_need_no_fit():
    assert OrthographicFeatures().feature_dicts(["Label-making", "(1)", "EU"]) == [
        {"first": "A", "length": "10+", "type": "Aa-a", "cap": "upperFirst"},
        {"first": "(", "length": "3", "type": "(n)", "cap": "allLower"},
        {"first": "A", "length": "2", "type": "A", "cap": "allUpper"},
    ]


def active(extractor, tokens) -> list[set[str]]:
    names = extractor.feature_names()
    return [{names[j] for j in np.flatnonzero(row)} for row in extractor(tokens)]


def test_array_one_hot_blocks():
    orth = OrthographicFeatures().fit(TRAIN)
    assert orth.first_types == ("(", ")", ".", "A", "a", "n")
    assert orth.word_types == ("(", ")", ".", "A", "A.A.", "Aa", "Aa-a", "a", "n,n.n")
    assert orth.dim == len(orth.feature_names()) == 7 + 7 + 10 + 6
    arr = orth(["Label-making", "iPhone", "£5"])
    assert arr.dtype == np.float32 and arr.shape == (3, orth.dim)
    assert set(np.unique(arr)) == {0.0, 1.0}
    assert active(orth, ["Label-making", "iPhone", "£5"]) == [
        {"first=A", "length=10+", "type=Aa-a", "cap=upperFirst"},
        {"first=a", "length=5-6", "type=<unk>", "cap=upperNotFirst"},  # aAa not seen in training
        {"first=<unk>", "length=2", "type=<unk>", "cap=allLower"},  # nor a first character £
    ]


def test_empty_sentence():
    orth = OrthographicFeatures().fit(TRAIN)
    assert orth([]).shape == (0, orth.dim)


def test_min_count_and_refit_from_state():
    orth = OrthographicFeatures().fit(TRAIN, min_count=2)
    assert orth.word_types == ("Aa", "a")  # German, British, Label-making; rejects, call, ...
    again = OrthographicFeatures(first_types=orth.first_types, word_types=orth.word_types)
    np.testing.assert_array_equal(again(TRAIN[1]), orth(TRAIN[1]))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), max_size=8))
def test_every_token_gets_one_symbol_per_block(tokens):
    orth = OrthographicFeatures().fit(TRAIN)
    arr = orth(tokens)
    assert arr.shape == (len(tokens), orth.dim) and arr.dtype == np.float32
    np.testing.assert_array_equal(arr.sum(axis=1), np.full(len(tokens), 4.0))


def test_not_fitted():
    orth = OrthographicFeatures()
    with pytest.raises(NotFittedError, match=r"not fitted: call fit\(training_sentences\) first"):
        orth(["EU"])
    assert not hasattr(orth, "dim")
    assert isinstance(OrthographicFeatures().fit(TRAIN), DiscreteExtractor)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda o: o.fit([]), ValueError, "cannot fit OrthographicFeatures on no tokens"),
        (lambda o: o.fit(TRAIN, min_count=0), ValueError, "min_count must be a positive int, but got 0"),
        (lambda o: o.feature_dicts("EU"), TypeError, "single string 'EU'"),
        (lambda o: o.feature_dicts(["EU", ""]), ValueError, "token 1 is ''"),
        (lambda o: OrthographicFeatures(word_types=["a"]), ValueError, "must be given together"),
    ],
)
def test_orthographic_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(OrthographicFeatures())


def test_sklearn_adapter_orthographic():
    orth = OrthographicFeatures().fit(TRAIN)
    pipe = Pipeline([("orth", SentenceTransformer(orth))])
    out = clone(pipe).fit_transform(TRAIN)
    np.testing.assert_array_equal(out, np.concatenate([orth(s) for s in TRAIN]))
    assert out.shape == (16, orth.dim)


TAGS = [["NNP", "VBZ", "JJ", "NN"], ["NN", "."]]


def test_pos_one_hot():
    pos = POSOneHot().fit(TAGS)
    assert pos.tags == (".", "JJ", "NN", "NNP", "VBZ")
    assert pos.dim == 6 and pos.feature_names()[0] == "pos=<unk>"
    arr = pos(["EU", "rejects", "it"], ["NNP", "VBZ", "PRP"])
    np.testing.assert_array_equal(arr, [[0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0]])
    assert arr.dtype == np.float32
    np.testing.assert_array_equal(pos([("EU", "NNP"), ("it", "PRP")]), arr[[0, 2]])
    assert pos.feature_dicts(["EU"], ["NNP"]) == [{"pos": "NNP"}]
    assert POSOneHot(tags=pos.tags)([("a", "NN")]).tolist() == [[0, 0, 0, 1, 0, 0]]
    assert isinstance(pos, Extractor)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda p: p(["EU", "x"], ["NNP"]), ValueError,
         "tags must match tokens in length, but got 1 tags and 2 tokens"),
        (lambda p: p(["EU", "x"]), TypeError, r"without tags, tokens must be \(word, tag\) pairs, but got 'EU'"),
        (lambda p: p(["EU"], "NNP"), TypeError, "single string 'NNP'"),
        (lambda p: POSOneHot()(["EU"], ["NNP"]), NotFittedError, "POSOneHot is not fitted"),
        (lambda p: POSOneHot().fit([[]]), ValueError, "cannot fit POSOneHot on no tags"),
    ],
)
def test_pos_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(POSOneHot().fit(TAGS))


def test_sklearn_adapter_pos_with_pairs():
    pos = POSOneHot().fit(TAGS)
    sentences = [[("EU", "NNP"), ("rejects", "VBZ")], [("lamb", "NN")]]
    out = SentenceTransformer(pos).fit_transform(sentences)
    np.testing.assert_array_equal(out.argmax(axis=1), [4, 5, 3])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), max_size=8))
def test_array_matches_the_feature_dicts(tokens):
    """The one-hot array is the feature dicts put in the named columns (unseen symbols in ``<unk>``)."""
    orth = OrthographicFeatures().fit(TRAIN)
    names = {name: j for j, name in enumerate(orth.feature_names())}
    expected = np.zeros((len(tokens), orth.dim), dtype=np.float32)
    for i, row in enumerate(orth.feature_dicts(tokens)):
        for key, value in row.items():
            expected[i, names.get(f"{key}={value}", names.get(f"{key}=<unk>"))] = 1.0
    np.testing.assert_array_equal(orth(tokens), expected)


def test_refit_rebuilds_the_columns():
    """The symbol -> column table is kept between calls; fitting again must replace it."""
    orth = OrthographicFeatures().fit(TRAIN)
    assert active(orth, ["u.s."]) == [{"first=a", "length=4", "type=<unk>", "cap=allLower"}]
    orth.fit([["u.s.", "lamb"]])
    assert orth.word_types == ("a", "a.a.") and orth.dim == 2 + 7 + 3 + 6
    assert active(orth, ["U.S.", "u.s."]) == [{"first=<unk>", "length=4", "type=<unk>", "cap=allUpper"},
                                              {"first=a", "length=4", "type=a.a.", "cap=allLower"}]
