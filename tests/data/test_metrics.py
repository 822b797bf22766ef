"""Tests for seqlab.data.metrics: counts worked out by hand, and conlleval's printed report.

The expected reports below were also produced by conlleval.pl (v2004-01-26),
which is not part of the project.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.core.errors import DataFormatError
from seqlab.data.metrics import (
    PredictionFile,
    SpanReport,
    TypeCounts,
    chunks,
    format_conlleval,
    read_prediction_file,
    report_to_dict,
    score,
    score_conll_file,
    score_prediction_file,

)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "metrics"

# iob1.txt, by sentence (gold chunks | predicted chunks | correct):
#   EU/ORG German/MISC British/MISC | EU/ORG German/MISC British/LOC          | EU, German
#   Peter Blackburn/PER             | Peter/PER (B-PER) Blackburn/LOC (I-LOC) | -
#   Paris/LOC London/LOC (B-LOC)    | Paris London/LOC                        | -
#   European Commission/ORG         | European/ORG said/ORG (O I-ORG)         | Werner Zwingmann
#   Werner Zwingmann/PER            | Thursday/MISC Werner Zwingmann/PER      |
# 23 tokens + 2 -DOCSTART- lines; 16 + 2 tokens tagged right.
IOB1_REPORT = SpanReport(
    tokens=25,
    phrases_gold=8,
    phrases_found=10,
    correct=3,
    token_correct=18,
    per_type={
        "LOC": TypeCounts(gold=2, found=3, correct=0),
        "MISC": TypeCounts(gold=2, found=2, correct=1),
        "ORG": TypeCounts(gold=2, found=3, correct=1),
        "PER": TypeCounts(gold=2, found=2, correct=1),
    },
)
IOB1_PRINTED = """\
processed 25 tokens with 8 phrases; found: 10 phrases; correct: 3.
accuracy:  72.00%; precision:  30.00%; recall:  37.50%; FB1:  33.33
              LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  3
             MISC: precision:  50.00%; recall:  50.00%; FB1:  50.00  2
              ORG: precision:  33.33%; recall:  50.00%; FB1:  40.00  3
              PER: precision:  50.00%; recall:  50.00%; FB1:  50.00  2
"""

# iob2.tsv (tab separated), by sentence (gold chunks | predicted chunks | correct):
#   Commission officials/ORG (I-ORG first) | Commission officials/ORG           | it
#   John Smith/PER New York/LOC            | John/PER Smith/LOC (B-PER I-LOC)    | New York
#                                          | New York/LOC Boston/LOC (O I-LOC)  |
#   Ann/PER Bob/PER IBM Research/ORG       | Ann Bob/PER IBM/ORG Research/MISC   | -
#   Reuters/ORG                            | Reuters/ORG                         | it
# 19 tokens + 2 -DOCSTART- lines; 14 + 2 tokens tagged right.
IOB2_REPORT = SpanReport(
    tokens=21,
    phrases_gold=7,
    phrases_found=9,
    correct=3,
    token_correct=16,
    per_type={
        "LOC": TypeCounts(gold=1, found=3, correct=1),
        "MISC": TypeCounts(gold=0, found=1, correct=0),
        "ORG": TypeCounts(gold=3, found=3, correct=2),
        "PER": TypeCounts(gold=3, found=2, correct=0),
    },
)
IOB2_PRINTED = """\
processed 21 tokens with 7 phrases; found: 9 phrases; correct: 3.
accuracy:  76.19%; precision:  33.33%; recall:  42.86%; FB1:  37.50
              LOC: precision:  33.33%; recall: 100.00%; FB1:  50.00  3
             MISC: precision:   0.00%; recall:   0.00%; FB1:   0.00  1
              ORG: precision:  66.67%; recall:  66.67%; FB1:  66.67  3
              PER: precision:   0.00%; recall:   0.00%; FB1:   0.00  2
"""


@pytest.mark.parametrize(
    ("name", "report", "printed"),
    [("iob1.txt", IOB1_REPORT, IOB1_PRINTED), ("iob2.tsv", IOB2_REPORT, IOB2_PRINTED)],
)
def test_fixture_counts_and_printed_report(name: str, report: SpanReport, printed: str) -> None:
    assert score_prediction_file(FIXTURES / name) == report
    assert score_conll_file(FIXTURES / name) == printed


def test_read_prediction_file_leaves_docstart_out_of_the_sentences() -> None:
    gold, pred, docstarts = read_prediction_file(FIXTURES / "iob2.tsv")
    assert docstarts == 2
    assert [len(sentence) for sentence in gold] == [3, 8, 6, 2]
    assert gold[0] == ["I-ORG", "I-ORG", "O"]
    assert pred[0] == ["B-ORG", "I-ORG", "O"]


def test_docstart_counts_as_a_correct_o_token_like_conlleval() -> None:
    gold, pred, docstarts = read_prediction_file(FIXTURES / "iob1.txt")
    in_memory = score(gold, pred)
    from_file = score_prediction_file(FIXTURES / "iob1.txt")
    assert from_file.tokens == in_memory.tokens + docstarts == 25
    assert from_file.token_correct == in_memory.token_correct + docstarts


def test_score_matches_the_percentages() -> None:
    report = IOB2_REPORT
    assert report.precision == pytest.approx(100 * 3 / 9)
    assert report.recall == pytest.approx(100 * 3 / 7)
    assert report.f1 == pytest.approx(100 * 2 * 3 / (9 + 7))
    assert report.accuracy == pytest.approx(100 * 16 / 21)
    assert report.per_type["LOC"].recall == 100.0
    assert report.per_type["MISC"].f1 == 0.0


def test_chunks_never_cross_sentences() -> None:
    joined = score([["B-PER", "I-PER"]], [["B-PER", "I-PER"]])
    split = score([["B-PER"], ["I-PER"]], [["B-PER"], ["I-PER"]])
    assert (joined.phrases_gold, joined.correct) == (1, 1)
    assert (split.phrases_gold, split.correct) == (2, 2)


def test_bioes_and_bilou_chunks() -> None:
    bioes = [["B-PER", "E-PER", "B-PER", "E-PER", "S-LOC", "O"]]
    bilou = [["B-PER", "L-PER", "B-PER", "L-PER", "U-LOC", "O"]]
    report = score(bioes, bioes)
    assert report.per_type == {"LOC": TypeCounts(1, 1, 1), "PER": TypeCounts(2, 2, 2)}
    mixed = score(bioes, bilou)
    assert mixed.per_type == report.per_type
    assert mixed.token_correct == 3  # only B, B and O: conlleval compares tags as written, L- is not E-


def test_untyped_chunks_are_listed_twice_like_conlleval() -> None:
    # conlleval's de-duplication skips the untyped name, which is false in Perl.
    assert format_conlleval(score([["B", "I", "O"]], [["B", "O", "I"]])) == (
        "processed 3 tokens with 1 phrases; found: 2 phrases; correct: 0.\n"
        "accuracy:  33.33%; precision:   0.00%; recall:   0.00%; FB1:   0.00\n"
        "                 : precision:   0.00%; recall:   0.00%; FB1:   0.00  2\n"
        "                 : precision:   0.00%; recall:   0.00%; FB1:   0.00  2\n"
    )


def test_type_0_is_untyped_like_conlleval() -> None:
    report = score([["B-0", "I-"]], [["B", "I-0"]])
    assert report.per_type == {"": TypeCounts(1, 1, 1)}
    assert report.token_correct == 2


def test_type_names_are_padded_by_utf8_bytes_like_perl() -> None:
    printed = format_conlleval(score([["B-人名"]], [["B-人名"]]))
    assert printed.splitlines()[2] == " " * 11 + "人名: precision: 100.00%; recall: 100.00%; FB1: 100.00  1"


def test_nothing_to_score_prints_only_the_counts() -> None:
    assert format_conlleval(score([], [])) == "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"


def test_x_line_ends_a_sentence_and_is_not_counted(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("a B-PER B-PER\n-X- I-PER I-PER\nb I-PER I-PER\n", encoding="utf-8")
    assert read_prediction_file(path) == PredictionFile([["B-PER"], ["I-PER"]], [["B-PER"], ["I-PER"]], 0)


def test_explicit_delimiter_keeps_spaces_in_tokens(tmp_path: Path) -> None:
    path = tmp_path / "spaces.tsv"
    path.write_text("New York\tB-LOC\tB-LOC\r\nis\tO\tO\r\n", encoding="utf-8")
    assert read_prediction_file(path, delimiter="\t").gold == [["B-LOC", "O"]]


def test_report_to_dict_is_json() -> None:
    data = json.loads(json.dumps(report_to_dict(IOB1_REPORT)))
    assert data["correct"] == 3
    assert data["f1"] == pytest.approx(IOB1_REPORT.f1)
    assert data["per_type"]["ORG"] == {
        "gold": 2,
        "found": 3,
        "correct": 1,
        "precision": pytest.approx(100 / 3),
        "recall": 50.0,
        "f1": pytest.approx(40.0),
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"a B-PER B-PER\nlonely\n",
            ":2: expected at least 2 columns (gold tag, predicted tag), got 1: 'lonely'",
        ),
        (b"a NN B-PER B-PER\n\nb NN O\n", ":3: expected 4 columns like line 1, got 3"),
        (b"a PER O\n", ":1: gold tag: expected O or a tag like B-PER"),
        (
            b"a O O\nb O B_PER\n",
            ":2: predicted tag: expected O or a tag like B-PER (B/I/E/S/L/U before the first '-'), got 'B_PER'",
        ),
        (b"-DOCSTART- -X- B-ORG O\n", ":1: expected -DOCSTART- tagged O O, got B-ORG O"),
        (b"a O O\nb\xff O O\n", ":2: expected UTF-8 text, but byte 1 is not"),
    ],
)
def test_malformed_files_name_file_and_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(DataFormatError, match=re.escape(str(path) + message)):
        read_prediction_file(path)


@pytest.mark.parametrize(
    ("gold", "pred", "message"),
    [
        ([["O"]], [], "same number of sentences, but got 1 and 0"),
        ([["O", "O"]], [["O"]], "sentence 0: gold and pred must have the same length, but got 2 and 1"),
        ([["O"], ["PER"]], [["O"], ["O"]], "sentence 1: expected O or a tag like B-PER"),
    ],
)
def test_score_rejects_bad_input(gold: list[list[str]], pred: list[list[str]], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        score(gold, pred)


TAGS = st.sampled_from(["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "E-LOC", "S-PER", "U-LOC", "L-PER"])
SENTENCES = st.lists(st.lists(TAGS, max_size=8), max_size=5)


@given(SENTENCES, st.randoms(use_true_random=False))
def test_scoring_sentence_by_sentence_adds_up(gold: list[list[str]], random) -> None:
    pred = [random.sample(sentence, len(sentence)) for sentence in gold]
    whole = score(gold, pred)
    parts = [score([g], [p]) for g, p in zip(gold, pred)]
    for field in ("tokens", "phrases_gold", "phrases_found", "correct", "token_correct"):
        assert getattr(whole, field) == sum(getattr(part, field) for part in parts)


@given(SENTENCES)
def test_perfect_prediction_scores_100(gold: list[list[str]]) -> None:
    report = score(gold, gold)
    assert report.correct == report.phrases_gold == report.phrases_found
    if report.phrases_gold:
        assert report.f1 == pytest.approx(100.0)


_TAGS = st.sampled_from(["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "E-LOC", "S-LOC", "B", "I",
                         "E", "S", "B-_", "I-X-Y", ".", ".-PER"])


@settings(deadline=None)  # the first example imports seqeval
@given(st.lists(st.lists(_TAGS, max_size=8), max_size=5))
def test_chunks_match_seqeval_get_entities(sentences):
    """chunks() reads tags exactly as seqeval's get_entities (default mode) does, without importing it."""
    import warnings

    from seqeval.metrics.sequence_labeling import get_entities

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seqeval warns about untyped tags
        expected = get_entities([list(s) for s in sentences])
    assert chunks(sentences) == expected


def test_a_whitespace_only_token_in_a_tab_separated_file_is_one_column(tmp_path: Path) -> None:
    """As seqlab's CoNLL reader splits it (a no-break space token); without TABs, any whitespace separates."""
    path = tmp_path / "nbsp.tsv"
    path.write_text("Paris\tB-LOC\tB-LOC\n\u00a0\tO\tO\nmet\tO\tB-PER\n", encoding="utf-8")
    scored = read_prediction_file(path)
    assert scored.gold == [["B-LOC", "O", "O"]] and scored.pred == [["B-LOC", "O", "B-PER"]]
