"""Tests for features.tokenize: CoNLL-2003 conventions, offsets, the offset-free corpus form, and a round
trip on real data."""
from __future__ import annotations

import functools
import itertools
import os
import re
import time
import unicodedata
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from features.base import FeatureFileError
from features.tokenize import (_LONE_MARK, _PLAIN_WORD, SEPARATORS, Token, _build_pattern, _rules, count_tokens,
                               iter_sentences, parse_abbreviations, sentence_tokens, sentence_words, split_sentences,
                               tokenize)

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("SEQLAB_DATA", REPO_ROOT.parent / "shared" / "data"))
CONLL_TRAIN = DATA_DIR / "conll2003" / "train.txt"
needs_conll = pytest.mark.skipif(
    not CONLL_TRAIN.is_file(), reason=f"CoNLL-2003 train not found at {CONLL_TRAIN} (set SEQLAB_DATA)"
)


def texts(text: str) -> list[str]:
    return [tok.text for tok in tokenize(text)]


CASES = [
    # punctuation split off
    ("Hello, world.", ["Hello", ",", "world", "."]),
    ("Wait; what: now? Yes! (maybe) [sic]",
     ["Wait", ";", "what", ":", "now", "?", "Yes", "!", "(", "maybe", ")", "[", "sic", "]"]),
    ('He said "no" twice.', ["He", "said", '"', "no", '"', "twice", "."]),
    # clitics
    ("Clinton's aides", ["Clinton", "'s", "aides"]),
    ("PAKISTAN'S RECORD", ["PAKISTAN", "'S", "RECORD"]),
    ("I don't know", ["I", "do", "n't", "know"]),
    ("they can't and won't", ["they", "ca", "n't", "and", "wo", "n't"]),
    ("we're they've I'll she'd I'm", ["we", "'re", "they", "'ve", "I", "'ll", "she", "'d", "I", "'m"]),
    ("the U.S.'s role", ["the", "U.S.", "'s", "role"]),
    ("the (WTO)'s first", ["the", "(", "WTO", ")", "'s", "first"]),
    # apostrophes inside words, possessive plural, quotation marks
    ("O'Neill and O'Sullivan's Gov't", ["O'Neill", "and", "O'Sullivan", "'s", "Gov't"]),
    ("the farmers' union", ["the", "farmers", "'", "union"]),
    ("Euro '96 finals", ["Euro", "'", "96", "finals"]),
    ("called it 'Independence Day,' he said", ["called", "it", "'", "Independence", "Day", ",", "'", "he", "said"]),
    # abbreviations, acronyms, initials
    ("Mr. Smith met Dr. Jones", ["Mr.", "Smith", "met", "Dr.", "Jones"]),
    ("Acme Inc. and Foo Corp. said", ["Acme", "Inc.", "and", "Foo", "Corp.", "said"]),
    ("on Jan. 5 at 10 a.m. sharp", ["on", "Jan.", "5", "at", "10", "a.m.", "sharp"]),
    ("the U.N. and U.S.A. teams", ["the", "U.N.", "and", "U.S.A.", "teams"]),
    ("J. Smith and M. Vaughan", ["J.", "Smith", "and", "M.", "Vaughan"]),
    ("U.S.-led forces", ["U.S.-led", "forces"]),
    ("a Wash.-based firm", ["a", "Wash.-based", "firm"]),
    ("the Iraq-U.N. deal", ["the", "Iraq-U.N.", "deal"]),
    ("U.S freedom", ["U.S", "freedom"]),
    ("i.e. this, e.g. that", ["i.e.", "this", ",", "e.g.", "that"]),
    # a sentence-final abbreviation loses its period to the sentence end (CoNLL-2003)
    ("He lives in the U.S.", ["He", "lives", "in", "the", "U.S", "."]),
    ("shares of Acme Inc.", ["shares", "of", "Acme", "Inc", "."]),
    ('from Acme Inc."', ["from", "Acme", "Inc", ".", '"']),
    ("Menlo Park, Calif..", ["Menlo", "Park", ",", "Calif", ".."]),
    # hyphens, numbers, dates, times
    ("Urdu-speaking two-year-old", ["Urdu-speaking", "two-year-old"]),
    ("BRUSSELS 1996-08-22", ["BRUSSELS", "1996-08-22"]),
    ("won 6-4 6- 3", ["won", "6-4", "6-", "3"]),
    ("1,234.56 and 3.5 and .500", ["1,234.56", "and", "3.5", "and", ".500"]),
    ("fell -0.5 or +0.05", ["fell", "-", "0.5", "or", "+0.05"]),
    ("1/2 1996/97 3/1/90", ["1/2", "1996/97", "3/1/90"]),
    ("at 10:30 in 1:54.342", ["at", "10:30", "in", "1:54.342"]),
    ("10th 1980s H1", ["10th", "1980s", "H1"]),
    ("rated AA+ by S&P and AT&T", ["rated", "AA+", "by", "S&P", "and", "AT&T"]),
    ("Duff & Phelps", ["Duff", "&", "Phelps"]),
    ("MATURITY 24.SEP.02", ["MATURITY", "24.SEP.02"]),
    # percent and currency
    ("up 5% to $1,200", ["up", "5", "%", "to", "$", "1,200"]),
    ("C$100 or US$ 5 or HK$3.5", ["C$", "100", "or", "US$", "5", "or", "HK$", "3.5"]),
    # URLs, e-mail, ellipsis, dashes
    ("see http://www.reuters.com/news?id=1, then", ["see", "http://www.reuters.com/news?id=1", ",", "then"]),
    ("site www.internetstartup.com.", ["site", "www.internetstartup.com", "."]),
    ("mail derivatives@reuters.com.", ["mail", "derivatives@reuters.com", "."]),
    ("wait... what", ["wait", "...", "what"]),
    ("rebels--poll -- Reuters", ["rebels", "--", "poll", "--", "Reuters"]),
    # line-initial rank
    ("2. Colin Jackson ( Britain ) 13.24", ["2.", "Colin", "Jackson", "(", "Britain", ")", "13.24"]),
    ("10= Martina Ertl", ["10=", "Martina", "Ertl"]),
    ("It rose in 1996.", ["It", "rose", "in", "1996", "."]),
    # Unicode: curly quotes treated like ASCII ones, text kept
    ("\u201cHe\u2019s here,\u201d O\u2019Neill said.",
     ["\u201c", "He", "\u2019s", "here", ",", "\u201d", "O\u2019Neill", "said", "."]),
    ("Z\u00fcrich \u2014 S\u00e3o Paulo\u2026", ["Z\u00fcrich", "\u2014", "S\u00e3o", "Paulo", "\u2026"]),
    # already tokenized text stays as it is
    ("Germany 's lamb , they do n't", ["Germany", "'s", "lamb", ",", "they", "do", "n't"]),
    ("", []),
    ("   \n\t ", []),
]


@pytest.mark.parametrize("text, expected", CASES, ids=[c[0][:30] for c in CASES])
def test_tokenize_conventions(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


SENTENCE_CASES = [
    ("One. Two.", [["One", "."], ["Two", "."]]),
    ("Why? Because! 3 left.", [["Why", "?"], ["Because", "!"], ["3", "left", "."]]),
    ("lower. case stays", [["lower", ".", "case", "stays"]]),
    ('He said "stop." Then left.', [["He", "said", '"', "stop", ".", '"'], ["Then", "left", "."]]),
    ('Done. "Next," he said.', [["Done", "."], ['"', "Next", ",", '"', "he", "said", "."]]),
    ('wars. " Israel said', [["wars", ".", '"'], ["Israel", "said"]]),
    ("(It rained.) We left.", [["(", "It", "rained", ".", ")"], ["We", "left", "."]]),
    ("Mr. Smith and Gen. Lebed met on Jan. 5.", [["Mr.", "Smith", "and", "Gen.", "Lebed", "met", "on", "Jan.", "5", "."]]),
    ("J. Smith won. He smiled.", [["J.", "Smith", "won", "."], ["He", "smiled", "."]]),
    ("U.S. officials met U.S. President Clinton", [["U.S.", "officials", "met", "U.S.", "President", "Clinton"]]),
    ("It sold in the U.S. The price fell.", [["It", "sold", "in", "the", "U.S", "."], ["The", "price", "fell", "."]]),
    ("Acme Inc. said so.", [["Acme", "Inc.", "said", "so", "."]]),
    ("in group C. The draw", [["in", "group", "C", "."], ["The", "draw"]]),
    ("Results follow... Then more", [["Results", "follow", "..."], ["Then", "more"]]),
    ("said. -- Reuters desk", [["said", "."], ["--", "Reuters", "desk"]]),
    ("no stop here\n\nnew paragraph", [["no", "stop", "here"], ["new", "paragraph"]]),
    ("one line\nwrapped here.", [["one", "line", "wrapped", "here", "."]]),
    ("", []),
]


@pytest.mark.parametrize("text, expected", SENTENCE_CASES, ids=[c[0][:30] for c in SENTENCE_CASES])
def test_split_sentences(text: str, expected: list[list[str]]) -> None:
    assert [[tok.text for tok in sentence] for sentence in split_sentences(text)] == expected


def test_token_offsets_point_into_the_original() -> None:
    text = "  Clinton's  U.S.\tvisit."
    assert tokenize(text) == [
        Token("Clinton", 2, 9), Token("'s", 9, 11), Token("U.S.", 13, 17), Token("visit", 18, 23), Token(".", 23, 24)
    ]
    assert tokenize("in the U.S.")[-2:] == [Token("U.S", 7, 10), Token(".", 10, 11)]


def _blank(text: str) -> bool:
    return all(c.isspace() or c in SEPARATORS for c in text)


def check_offsets(text: str, tokens: list[Token]) -> None:
    """Slices of the original (in NFC), in order, not overlapping, with only whitespace between them."""
    position = 0
    for tok in tokens:
        assert position <= tok.start < tok.end
        assert unicodedata.normalize("NFC", text[tok.start : tok.end]) == tok.text
        if unicodedata.is_normalized("NFC", text):
            assert text[tok.start : tok.end] == tok.text
        assert _blank(text[position : tok.start])
        position = tok.end
    assert _blank(text[position:])


@settings(deadline=None, max_examples=300)
@given(st.text())
def test_offset_invariant_on_any_text(text: str) -> None:
    tokens = tokenize(text)
    check_offsets(text, tokens)
    assert all(not any(ch.isspace() or ch in SEPARATORS for ch in tok.text) for tok in tokens)
    sentences = split_sentences(text)
    assert all(sentences) and [tok for s in sentences for tok in s] == tokens


PUNCTUATED = st.lists(
    st.sampled_from(["U.S.", "Mr.", "Inc.", "J.", "don't", "O'Neill", "'s", "'", '"', "\u201c", "\u2019", "...",
                     "--", "-", "1,234.56", "$", "5%", "(", ")", ".", ",", "?", "!", "The", "word", "e.g.", "2.",
                     " ", "  ", "\n", "\n\n", "\t", "http://a.b/c", "x@y.org", "+1", "6-"]),
    max_size=40,
).map("".join)


PLAIN_NEIGHBOURS = st.lists(
    st.sampled_from(["word", "Word", "WORD", "w0rd", "1996", "n", "s", "t", "ca", "www", "http", "ftp", "Inc", "US",
                     "U", "a", "_", "é", "\u0301", ".", ",", ";", ":", "!", "?", ")", "]", '"', "'", "\u2019", "-",
                     "+", "&", "/", "@", "$", "%", "=", "*", "://", "n't", " ", "\n"]),
    max_size=30,
).map("".join)


@functools.cache
def _patterns_with_and_without(shortcut: str) -> list[tuple[re.Pattern[str], re.Pattern[str]]]:
    pairs = []
    for links, clitics, negations in itertools.product([False, True], repeat=3):
        pattern = _build_pattern(_rules().abbreviations, links=links, clitics=clitics, negations=negations)
        assert shortcut in pattern.pattern
        pairs.append((pattern, re.compile(pattern.pattern.replace(shortcut, "", 1), re.VERBOSE)))
    return pairs


LONE_MARKS = st.lists(
    st.sampled_from(["'", "’", "s", "S", "re", "ll", "D", "m", "ſ", "n", "t", "a", "_", " ", ",", "(", ")",
                     '"', "!", ".", "-", "+", "$", "*", "=", "…", "—", "–", "@", "#", "1", "“"]),
    max_size=30,
).map("".join)


@settings(deadline=None, max_examples=300)
@given(st.one_of(PLAIN_NEIGHBOURS, PUNCTUATED, LONE_MARKS))
@pytest.mark.parametrize("shortcut", [_PLAIN_WORD, _LONE_MARK])
def test_shortcut_alternatives_change_no_token(shortcut: str, text: str) -> None:
    """The token pattern tries a plain ASCII word and then a lone mark first only to be fast: without either,
    the other alternatives give the same tokens."""
    for pattern, without in _patterns_with_and_without(shortcut):
        assert pattern.findall(text) == without.findall(text)


@settings(deadline=None, max_examples=200)
@given(st.one_of(PLAIN_NEIGHBOURS, PUNCTUATED, st.text()))
def test_sentence_tokens_are_split_sentences_as_lists(text: str) -> None:
    assert [list(map(Token, *s)) for s in sentence_tokens(text)] == split_sentences(text)
    assert [s.words for s in sentence_tokens(text)] == sentence_words(text)


@settings(deadline=None, max_examples=300)
@given(PUNCTUATED)
def test_offset_invariant_on_punctuation_heavy_text(text: str) -> None:
    check_offsets(text, tokenize(text))


def test_iter_sentences_streams_lines_with_line_offsets() -> None:
    lines = ["First one. Second one.\n", "\n", "   \n", "  Third line\n"]
    got = [(n, [(t.text, t.start, t.end) for t in s]) for n, s in iter_sentences(lines)]
    assert got == [
        (1, [("First", 0, 5), ("one", 6, 9), (".", 9, 10)]),
        (1, [("Second", 11, 17), ("one", 18, 21), (".", 21, 22)]),
        (4, [("Third", 2, 7), ("line", 8, 12)]),
    ]


def test_iter_sentences_is_lazy() -> None:
    endless = itertools.repeat("A line without end\n")
    first = list(itertools.islice(iter_sentences(endless), 3))
    assert [n for n, _ in first] == [1, 2, 3]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: tokenize(b"bytes"), "text must be str, but got bytes"),
        (lambda: split_sentences(None), "text must be str, but got NoneType"),
        (lambda: list(iter_sentences(["ok\n", b"bad\n"])), "line 2 must be str, but got bytes"),
    ],
)
def test_non_str_input_is_rejected(call, message: str) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        call()


@pytest.mark.parametrize(
    "listing, message",
    [
        ("Mr. prefix extra\n", "abbrev.txt:1: expected 'ABBREVIATION KIND', but got 'Mr. prefix extra'"),
        ("# c\nMr. title\n", "abbrev.txt:2: kind must be one of ('prefix', 'plain'), but got 'title'"),
        ("Mr prefix\n", "abbrev.txt:1: abbreviation must end with '.', but got 'Mr'"),
    ],
)
def test_bad_abbreviation_list_names_file_and_line(listing: str, message: str) -> None:
    with pytest.raises(FeatureFileError, match=re.escape(message)):
        parse_abbreviations(listing, source="abbrev.txt")


def shipped_abbreviations() -> dict[str, str]:
    path = resources.files("features").joinpath("resources/abbreviations.txt")
    return parse_abbreviations(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("abbreviation", sorted(shipped_abbreviations()))
def test_every_shipped_abbreviation_keeps_its_period(abbreviation: str) -> None:
    assert texts(f"see {abbreviation} here") == ["see", abbreviation, "here"]


# --- the offset-free form used to read large corpora (features.corpus) ----------------------

@pytest.mark.parametrize(
    "text, tokens",
    [
        ("Mr. Smith's dog didn't bark", ["Mr.", "Smith", "'s", "dog", "did", "n't", "bark"]),
        ("He can't go", ["He", "ca", "n't", "go"]),
        ("DON'T you’re", ["DO", "N'T", "you", "’re"]),  # negation split in any case
        ("I'm sure they'll", ["I", "'m", "sure", "they", "'ll"]),
        ("the U.S.-led forces in the U.S. and", ["the", "U.S.-led", "forces", "in", "the", "U.S.", "and"]),
        ("a two-year-old boy", ["a", "two-year-old", "boy"]),
        ("rose 1,234.5 on 1996-08-22 at 12:30", ["rose", "1,234.5", "on", "1996-08-22", "at", "12:30"]),
        ("AT&T and O'Neill", ["AT&T", "and", "O'Neill"]),
        ("(Reuters) -- wait...", ["(", "Reuters", ")", "--", "wait", "..."]),
        ("J. Smith of Acme Inc. said", ["J.", "Smith", "of", "Acme", "Inc.", "said"]),
        ("$5 or 3.5% in Jan. or Sept.", ["$", "5", "or", "3.5", "%", "in", "Jan.", "or", "Sept", "."]),
        ("the '80s", ["the", "'", "80s"]),
        ("Zürich, said:", ["Zürich", ",", "said", ":"]),
        # CoNLL-2003 splits the period off an abbreviation that ends the line
        ("Acme Inc.", ["Acme", "Inc", "."]),
        ("in the U.S.", ["in", "the", "U.S", "."]),
        ("vitamin C.", ["vitamin", "C", "."]),
    ],
)
def test_corpus_words(text, tokens):
    assert [word for sentence in sentence_words(text) for word in sentence] == tokens


@pytest.mark.parametrize(
    "text, sentences",
    [
        ("He came. She left.", [["He", "came", "."], ["She", "left", "."]]),
        ('He said "no." Then he left.', [["He", "said", '"', "no", ".", '"'], ["Then", "he", "left", "."]]),
        ("Mr. Smith came. Really? Yes!", [["Mr.", "Smith", "came", "."], ["Really", "?"], ["Yes", "!"]]),
        ('He left. "We won," she said.', [["He", "left", "."], ['"', "We", "won", ",", '"', "she", "said", "."]]),
        ("BAHIA COCOA REVIEW . Showers continued.", [["BAHIA", "COCOA", "REVIEW", "."], ["Showers", "continued", "."]]),
        ("(The end.) Next one.", [["(", "The", "end", ".", ")"], ["Next", "one", "."]]),
        ("Wait... Go on.", [["Wait", "..."], ["Go", "on", "."]]),
        # no split before a lower-case word; a digit opens a sentence; no space: one token (like VOWG.F)
        ("It rose 5.3 pct. the end.", [["It", "rose", "5.3", "pct", ".", "the", "end", "."]]),
        ("Item 1. 2 more.", [["Item", "1", "."], ["2", "more", "."]]),
        ("end.Next", [["end.Next"]]),
        # after a plain abbreviation, a typical sentence opener starts a new sentence
        ("in the U.S. The end.", [["in", "the", "U.S", "."], ["The", "end", "."]]),
        ("", []),
        ("   ", []),
    ],
)
def test_corpus_sentences(text, sentences):
    assert sentence_words(text) == sentences
    assert [[tok.text for tok in s] for s in split_sentences(text)] == sentences


TEXT = st.text(alphabet=st.sampled_from(list("aZq09.,'’-?!\"()$&%:/ \t\nÉé…")), max_size=60)


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_corpus_words_keep_every_non_space_character(text):
    tokens = [word for sentence in sentence_words(text) for word in sentence]
    assert "".join(tokens) == "".join(text.split())
    assert all(token and not any(c.isspace() for c in token) for token in tokens)
    assert [[tok.text for tok in s] for s in split_sentences(text)] == sentence_words(text)


def test_corpus_words_reject_non_text():
    with pytest.raises(TypeError, match="text must be str, but got list"):
        sentence_words(["a", "b"])  # type: ignore[arg-type]



# --- real data: CoNLL-2003 round trip -------------------------------------------------------

NO_SPACE_BEFORE = frozenset(
    {",", ".", ";", ":", "?", "!", ")", "]", "%", "..", "...", "....",
     "'s", "'S", "n't", "N'T", "'re", "'RE", "'ve", "'VE", "'ll", "'LL", "'d", "'D", "'m", "'M"}
)
NO_SPACE_AFTER = frozenset({"(", "["})
CURRENCY = re.compile(r"[A-Z]{0,3}\$")


def detokenize(tokens: list[str]) -> str:
    """Rebuild plausible raw text from CoNLL tokens: ``Germany's``, ``(U.S.)``, ``"quote,"``, ``$5``."""
    out: list[str] = []
    quote_open = False
    glue_next = False
    for i, tok in enumerate(tokens):
        if tok == '"':
            attach = quote_open
        elif tok == "'":
            attach = bool(out) and out[-1][-1] in "sS"
        else:
            attach = tok in NO_SPACE_BEFORE
        if out and not attach and not glue_next:
            out.append(" ")
        out.append(tok)
        next_is_number = i + 1 < len(tokens) and tokens[i + 1][0].isdigit()
        glue_next = (tok in NO_SPACE_AFTER or (tok == '"' and not quote_open)
                     or bool(CURRENCY.fullmatch(tok)) and next_is_number)
        if tok == '"':
            quote_open = not quote_open
    return "".join(out)


def read_conll_documents(path: Path, max_sentences: int) -> list[list[list[str]]]:
    documents: list[list[list[str]]] = [[]]
    sentence: list[str] = []
    count = 0
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            word = line.split(" ", 1)[0].strip()
            if word == "-DOCSTART-":
                documents.append([])
            elif word:
                sentence.append(word)
            elif sentence:
                documents[-1].append(sentence)
                sentence = []
                count += 1
                if count == max_sentences:
                    break
    return [d for d in documents if d]


def test_detokenize_examples() -> None:
    tokens = ['"', "Germany", "'s", "lamb", "(", "U.S.", ")", "costs", "$", "5", ",", '"', "he", "said", "."]
    assert detokenize(tokens) == '"Germany\'s lamb (U.S.) costs $5," he said.'
    assert detokenize(["ministers", "'", "meeting", "do", "n't"]) == "ministers' meeting don't"


@needs_conll
def test_round_trip_on_conll2003_train() -> None:
    """Tokenizing detokenized CoNLL-2003 sentences gives back their exact tokens."""
    sentences = [s for doc in read_conll_documents(CONLL_TRAIN, 2000) for s in doc]
    failures = [s for s in sentences if texts(detokenize(s)) != s]
    rate = 1 - len(failures) / len(sentences)
    print(f"CoNLL-2003 train round trip: {len(sentences) - len(failures)}/{len(sentences)} = {rate:.2%}")
    assert rate >= 0.98, [" ".join(s) for s in failures[:10]]


@needs_conll
def test_pretokenized_conll2003_train_is_kept() -> None:
    """CoNLL-2003 sentences with their tokens joined by single spaces come back unchanged."""
    sentences = [s for doc in read_conll_documents(CONLL_TRAIN, 2000) for s in doc]
    kept = sum(texts(" ".join(s)) == s for s in sentences)
    print(f"CoNLL-2003 train, space-joined tokens kept: {kept}/{len(sentences)} = {kept / len(sentences):.2%}")
    assert kept / len(sentences) >= 0.98


@needs_conll
def test_sentence_splits_on_conll2003_train() -> None:
    """Two consecutive CoNLL sentences joined by a space split back into the same two sentences.

    Only pairs whose first sentence ends in ``.``, ``?`` or ``!`` (maybe followed by a quote or
    bracket) count: headlines and datelines end without one and were separate lines in Reuters.
    """
    pairs = [
        (a, b)
        for doc in read_conll_documents(CONLL_TRAIN, 2000)
        for a, b in zip(doc, doc[1:])
        if a[-1] in {".", "?", "!"} or (len(a) > 1 and a[-1] in {'"', ")"} and a[-2] in {".", "?", "!"})
    ]
    right = sum(
        [[t.text for t in s] for s in split_sentences(detokenize(a) + " " + detokenize(b))] == [a, b]
        for a, b in pairs
    )
    print(f"CoNLL-2003 train sentence pairs split right: {right}/{len(pairs)} = {right / len(pairs):.2%}")
    assert right / len(pairs) >= 0.95


# ---------------------------------------------------------------- Unicode: normal forms, invisible characters


@pytest.mark.parametrize("text, expected", [
    ("Montre\u0301al is big.", [("Montréal", 0, 9), ("is", 10, 12), ("big", 13, 16), (".", 16, 17)]),  # NFD
    ("Montréal is big.", [("Montréal", 0, 8), ("is", 9, 11), ("big", 12, 15), (".", 15, 16)]),  # NFC
    ("Paris\u200bLondon", [("Paris", 0, 5), ("London", 6, 12)]),  # a zero-width space separates
    ("\ufeffHello", [("Hello", 1, 6)]),  # a byte-order mark is no token
    ("in \U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA!", [("in", 0, 2), ("\U0001F1EB\U0001F1F7", 3, 5),
                                                       ("\U0001F1E9\U0001F1EA", 5, 7), ("!", 7, 8)]),  # flags
    ("\U0001F469\u200d\U0001F4BB \U0001F44D\U0001F3FD", [("\U0001F469\u200d\U0001F4BB", 0, 3),
                                                         ("\U0001F44D\U0001F3FD", 4, 6)]),  # ZWJ, skin tone
    ("co\u00adoperate", [("co\u00adoperate", 0, 10)]),  # a soft hyphen joins
    ("q\u0303al", [("q\u0303al", 0, 4)]),  # a mark with no precomposed form
    ("\u0928\u092e\u0938\u094d\u0924\u0947", [("\u0928\u092e\u0938\u094d\u0924\u0947", 0, 6)]),  # Devanagari
])
def test_unicode_text_tokenizes_by_what_it_shows(text, expected):
    tokens = tokenize(text)
    assert [(t.text, t.start, t.end) for t in tokens] == expected
    check_offsets(text, tokens)


def test_nfd_text_gives_the_tokens_and_sentences_of_nfc_text():
    nfc = "Le maire de Montréal a parlé. Les élèves écoutaient à Québec."
    nfd = unicodedata.normalize("NFD", nfc)
    assert sentence_words(nfd) == sentence_words(nfc)
    assert [[t.text for t in s] for s in split_sentences(nfd)] == sentence_words(nfc)
    assert [nfd[t.start:t.end] for t in tokenize(nfd)] == [unicodedata.normalize("NFD", t.text) for t in tokenize(nfc)]


@settings(deadline=None, max_examples=300)
@given(st.text(alphabet=st.sampled_from(list("ae Mo.,\u0301\u0303\u0308\u200b\u200d\ufeff\U0001F1EB\U0001F1F7"
                                             "\U0001F3FD\u00ad\n")), max_size=40))
def test_offset_invariant_on_marks_joiners_and_flags(text):
    tokens = tokenize(text)
    check_offsets(text, tokens)
    assert [[t.text for t in s] for s in split_sentences(text)] == sentence_words(text)


# ---------------------------------------------------------------- linear time, and counting tokens


LINE_LENGTH = 50_000
NORMAL_LINE = ("Peter Blackburn said on Tuesday that the U.S. economy grew 2.5% in 1996, and EU officials "
               "agreed. ") * (LINE_LENGTH // 96 + 1)
#: Lines on which a tokenizer that rescans what is ahead of each token is quadratic. Each is as long as the
#: normal line; before the rescans were removed, the first two took minutes at this length.
PATHOLOGICAL_LINES = {
    "_+ then @": ("_+" * LINE_LENGTH)[: LINE_LENGTH - 2] + " @",
    "trailing spaces": "x" + " " * (LINE_LENGTH - 1),
    "whitespace only": "\n \t\u200b" * (LINE_LENGTH // 4),
    "a,": ("a," * LINE_LENGTH)[:LINE_LENGTH],
    "dots": "." * LINE_LENGTH,
    "punctuation": ("!?;:)(*&$" * LINE_LENGTH)[:LINE_LENGTH],
    "URL-like word": "http://" + ("a/b.c?d=e" * LINE_LENGTH)[: LINE_LENGTH - 7],
    "apostrophes": ("'" * LINE_LENGTH)[: LINE_LENGTH - 4] + " n't",
    "two words": "a" * (LINE_LENGTH // 2) + " " + ("b-" * LINE_LENGTH)[: LINE_LENGTH // 2 - 3] + " @",
    "combining marks": "e" + "\u0301" * (LINE_LENGTH - 1),
}


def _seconds(text: str) -> float:
    start = time.perf_counter()
    tokenize(text)
    return time.perf_counter() - start


@pytest.mark.parametrize("name", PATHOLOGICAL_LINES)
def test_tokenizing_is_linear_on_pathological_lines(name: str) -> None:
    """A pathological line takes under 3 times a normal line of the same length; or else doubling it at most about
    doubles its time (a quadratic path quadruples it) and it takes at most 30 times a normal line (a line of one-character tokens holds 4 to 5 times as many
    tokens; a quadratic path is hundreds of times slower at this length). Best of 3, so a busy machine does not
    fail it."""
    line = PATHOLOGICAL_LINES[name]
    assert abs(len(line) - LINE_LENGTH) <= 4
    half, normal = line[: len(line) // 2], NORMAL_LINE[: len(line)]
    growth, ratio = [], []
    for _ in range(3):
        whole = _seconds(line)
        growth.append(whole / max(_seconds(half), 1e-6))
        ratio.append(whole / _seconds(normal))
        if ratio[-1] < 3 or (growth[-1] < 3.0 and ratio[-1] < 30):  # as fast as normal text, or linear
            return
    pytest.fail(f"{name}: twice the length took {min(growth):.1f} times as long (linear: about 2), and the line "
                f"{min(ratio):.1f} times a normal line of {len(line)} characters")


PATHOLOGICAL = st.lists(
    st.sampled_from(["_", "+", "@", "a", "n't", "'", "\u2019", ",", ".", "...", "-", "http://", "www.", "$", "A",
                     " ", "  ", "\n", "\u200b", "\u200d", "\u0301", "\U0001F1EB", "\U0001F1F7", "x@y.org", "s"]),
    max_size=60,
).map("".join)


@settings(deadline=None, max_examples=300)
@given(st.one_of(PATHOLOGICAL, PUNCTUATED, st.text()))
def test_offsets_slice_back_to_tokens_and_count_tokens_counts_them(text: str) -> None:
    tokens = tokenize(text)
    check_offsets(text, tokens)
    assert count_tokens(text) == len(tokens)


@pytest.mark.parametrize("text, count", [("", 0), ("  ", 0), ("Hello, world.", 4), ("He lives in the U.S.", 6),
                                         ("in the U.S. The end.", 7), ("I don't", 3)])
def test_count_tokens(text: str, count: int) -> None:
    assert count_tokens(text) == count == len(tokenize(text))
