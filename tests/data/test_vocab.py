"""Tests for seqlab.data.vocab: capitalization classes, word lookup, specials, save/load."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.data.vocab import (
    CAPS,
    PAD,
    UNK,
    Vocab,
    WordVocab,
    capitalization,
    char_vocab,
    label_vocab,
    load_vocabs,
    normalize_digits,
    save_vocabs,
)
from seqlab.core.errors import SeqlabError


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("EU", "allUpper"),
        ("U.S.", "allUpper"),
        ("A", "allUpper"),
        ("rejects", "allLower"),
        ("über", "allLower"),
        ("Peter", "upperFirst"),
        ("McDonald", "upperFirst"),
        ("iPhone", "upperNotFirst"),
        ("eBay", "upperNotFirst"),
        ("1996-08-22", "numeric"),
        ("3.5", "numeric"),
        ("1,234.56", "numeric"),
        ("-5", "numeric"),
        ("+0.05", "numeric"),
        ("12:30", "numeric"),
        ("50%", "numeric"),
        (",", "noAlphaNum"),
        ("--", "noAlphaNum"),
        ("(", "noAlphaNum"),
        ("...", "noAlphaNum"),
    ],
)
def test_capitalization_classes(word, expected):
    assert CAPS[capitalization(word)] == expected


def test_caps_table_has_padding_first_and_six_classes():
    assert CAPS[0] == PAD
    assert len(CAPS) == 7 and len(set(CAPS)) == 7


@given(st.text(max_size=12))
@settings(max_examples=60, deadline=None)
def test_capitalization_is_a_real_class_for_any_string(word):
    assert 1 <= capitalization(word) < len(CAPS)


@pytest.mark.parametrize(("word", "expected"), [("1996-08-22", "0000-00-00"), ("A4", "A0"), ("abc", "abc"), ("", "")])
def test_normalize_digits(word, expected):
    assert normalize_digits(word) == expected


def test_vocab_specials_and_order():
    vocab = Vocab(["b", "a", "b", "c"])
    assert vocab.itos == [PAD, UNK, "b", "a", "c"]
    assert len(vocab) == 5
    assert [vocab.index(w) for w in ("b", "a", "c")] == [2, 3, 4]
    assert vocab.index("zzz") == 1 == vocab.index(UNK)
    assert vocab.index(PAD) == 0
    assert "a" in vocab and "zzz" not in vocab


def test_label_vocab_has_no_specials():
    labels = label_vocab(["O", "B-PER", "I-PER"])
    assert labels.itos == ["O", "B-PER", "I-PER"]
    assert [labels.index(t) for t in labels.itos] == [0, 1, 2]
    assert PAD not in labels and UNK not in labels


def test_unknown_item_without_unk_is_an_error_naming_it():
    labels = label_vocab(["O", "B-PER"])
    with pytest.raises(SeqlabError, match=r"'B-LOC' is not in the vocabulary \(2 items"):
        labels.index("B-LOC")


def test_word_vocab_exact_then_lowercase():
    words = WordVocab(["German", "german", "eu"])
    german, german_lower, eu = (words.stoi[w] for w in ("German", "german", "eu"))
    assert words.index("German") == german  # exact match wins over the lower-cased one
    assert words.index("german") == german_lower
    assert words.index("GERMAN") == german_lower
    assert words.index("EU") == eu
    assert words.index("Brussels") == words.stoi[UNK]


def test_word_vocab_without_lowercase_fallback():
    words = WordVocab(["eu"], lowercase_fallback=False)
    assert words.index("eu") == words.stoi["eu"]
    assert words.index("EU") == words.stoi[UNK]


def test_word_vocab_digits_to_zero():
    with_zero = WordVocab([normalize_digits("1996-08-22"), "a0"], digits_to_zero=True)
    assert with_zero.index("2001-12-31") == with_zero.stoi["0000-00-00"]
    assert with_zero.index("A7") == with_zero.stoi["a0"]  # digits first, then the lower-case fallback
    plain = WordVocab(["0000-00-00"])
    assert plain.index("2001-12-31") == plain.stoi[UNK]


@pytest.mark.parametrize("options", [{}, {"lowercase_fallback": False}, {"digits_to_zero": True}])
def test_word_vocab_indices_are_index_for_each_word(options):
    words = WordVocab(["German", "german", "eu", "0000-00-00", "a0"], **options)
    queries = ["German", "german", "GERMAN", "EU", "Brussels", "2001-12-31", "A7", "a0", ""]
    assert words.indices(queries) == [words.index(q) for q in queries]
    expected = {"German": "German", "GERMAN": "german", "EU": "eu", "Brussels": UNK, "A7": "a0"}
    for query, item in expected.items():
        fallback = item not in (query, UNK) and query.lower() != query and not options.get("lowercase_fallback", True)
        digits = query == "A7" and not options.get("digits_to_zero")
        assert words.index(query) == words.stoi[UNK if fallback or digits else item]


def test_char_vocab_min_count():
    chars = char_vocab(["aab", "c"], min_count=2)
    assert chars.itos == [PAD, UNK, "a"]
    assert char_vocab(["ba"]).itos == [PAD, UNK, "a", "b"]


def test_save_load_round_trip(tmp_path):
    vocabs = {
        "words": WordVocab(["the", "EU", "0000"], lowercase_fallback=False, digits_to_zero=True),
        "chars": char_vocab(["the", "EU"]),
        "tags": label_vocab(["O", "U-ORG", "B-PER", "L-PER"]),
        "nounk": Vocab(["x", "y"], pad=True, unk=False),
        "nopad": Vocab(["x", "y"], pad=False, unk=True),
    }
    path = tmp_path / "vocabs.json"
    save_vocabs(path, vocabs)
    loaded = load_vocabs(path)
    assert list(loaded) == list(vocabs)
    for name, vocab in vocabs.items():
        again = loaded[name]
        assert type(again) is type(vocab), name
        assert again.itos == vocab.itos and again.stoi == vocab.stoi, name
        assert (again.pad, again.unk) == (vocab.pad, vocab.unk), name
    words = loaded["words"]
    assert isinstance(words, WordVocab)
    assert (words.lowercase_fallback, words.digits_to_zero) == (False, True)
    assert words.index("1234") == words.stoi["0000"]
    assert words.index("eu") == words.stoi[UNK]
    with pytest.raises(SeqlabError):
        loaded["tags"].index("B-LOC")
    assert loaded["nopad"].index("q") == 0  # the unknown id, since there is no padding entry


@given(st.lists(st.text(min_size=1, max_size=5), max_size=20))
@settings(max_examples=40, deadline=None)
def test_dict_round_trip_preserves_ids(items):
    for pad in (True, False):
        for unk in (True, False):
            vocab = Vocab(items, pad=pad, unk=unk)
            again = Vocab.from_dict(json.loads(json.dumps(vocab.to_dict())))
            assert again.itos == vocab.itos
            assert all(again.index(w) == vocab.index(w) for w in items)


@pytest.mark.parametrize("content, message", [
    (None, r"vocabs\.json: no such file"),
    ("{not json", r"vocabs\.json:1:2: not valid JSON"),
    ("[1, 2", r"vocabs\.json:1:6: not valid JSON"),
    ("[" * 100_000 + "]" * 100_000, r"vocabs\.json: JSON nested deeper than 64 levels; refused"),  # no RecursionError
    ('{"words": [[[' + "[" * 70 + "]" * 73 + "}", r"vocabs\.json: JSON nested deeper than 64 levels"),
])
def test_load_vocabs_bad_file_names_it(tmp_path, content, message):
    path = tmp_path / "vocabs.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(SeqlabError, match=message) as info:
        load_vocabs(path)
    assert "\n" not in str(info.value)


# The caps embedding's ids, pinned: a trained tagger's weights are indexed by them, so no word may
# change class (the classifier itself is features.orthographic.capitalization).
PINNED_CAPS_IDS = {
    "": 6, ".": 6, "--": 6, "$": 6, "\u2014": 6, "'": 6,
    "EU": 1, "U.S.": 1, "I": 1, "1ST": 1, "AT&T": 1, "\u00c9TAT": 1, "ΣΑ": 1, "N'T": 1,
    "cat": 2, "1980s": 2, "(1)": 2, "1+1": 2, "%5": 2, "\u00a35": 2, "\u00bd": 2, "x\u00b2": 2, "\u00b2": 2,
    "\u4e2d\u6587": 2, "\u01c5": 2, "stra\u00dfe": 2, "0*": 2, "1)266": 2, "+0.9;+23.6": 2, "n't": 2,
    "Label-making": 3, "McDonald": 3, "\u00c9mile": 3, "O'Neill": 3, "U.S.-led": 3, "Mr.": 3,
    "iPhone": 4, "'Tis": 4, "(Reuters": 4, "eBay": 4, "1st-Half": 4, "\u00e9COLE": 4,
    "1,234": 5, "-0.5": 5, "+0.05": 5, "5%": 5, "1996-08-22": 5, "10:30": 5, "1/2": 5, "7": 5,
    "\u0661\u0662": 5, "5\n": 5, "-5-": 5,
}


@pytest.mark.parametrize("word, expected", sorted(PINNED_CAPS_IDS.items()))
def test_caps_ids_are_pinned(word, expected):
    assert capitalization(word) == expected


@pytest.mark.parametrize("text", ["[1, 2, 3]", '{"words": [1, 2]}', '{"words": {"class": "Nope"}}',
                                  '{"words": {"class": "Vocab"}}'])
def test_a_vocabulary_file_of_another_shape_is_one_clear_error(tmp_path, text):
    path = tmp_path / "vocabs.json"
    path.write_text(text)
    with pytest.raises(SeqlabError, match="vocabs.json: not a seqlab vocabulary file") as info:
        load_vocabs(path)
    assert "\n" not in str(info.value)
