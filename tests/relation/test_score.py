"""The official SemEval-2010 Task 8 measure against hand-worked examples (scorer v1.2 semantics)."""
from __future__ import annotations

import pytest

from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.relation.score import read_answers, score_answers, score_files

CE12, CE21, MT12, PP21 = "Cause-Effect(e1,e2)", "Cause-Effect(e2,e1)", "Message-Topic(e1,e2)", "Product-Producer(e2,e1)"


def test_wrong_direction_is_wrong_and_counts_against_precision():
    # gold: two Cause-Effect, one right and one with the wrong direction predicted
    key = {"1": CE12, "2": CE21, "3": MT12}
    result = score_answers({"1": CE12, "2": CE12, "3": MT12}, key)
    ce = result.relations["Cause-Effect"]
    # P = 1 / (1 proposed as CE with a different-relation or right gold + 1 xDIRx) = 50; R = 1/2
    assert (ce.correct, ce.proposed, ce.wrong_direction, ce.gold) == (1, 1, 1, 2)
    assert ce.precision == pytest.approx(50.0) and ce.recall == pytest.approx(50.0) and ce.f1 == pytest.approx(50.0)
    assert result.relations["Message-Topic"].f1 == pytest.approx(100.0)
    assert result.official_f1 == pytest.approx(75.0)  # mean over the 2 relations present in the key
    assert "|    1     1     0      2" in result.report  # -SUM- xDIRx skip ACTUAL of the C-E row


def test_other_is_excluded_from_the_macro_average_but_costs_precision():
    key = {"1": "Other", "2": "Other", "3": MT12, "4": MT12}
    result = score_answers({"1": MT12, "2": "Other", "3": MT12, "4": "Other"}, key)
    mt = result.relations["Message-Topic"]
    assert (mt.correct, mt.proposed, mt.gold) == (1, 2, 2)  # an Other sentence predicted MT is a false positive
    assert mt.f1 == pytest.approx(50.0)
    assert result.official_f1 == pytest.approx(50.0)  # Other's own F1 (50) is not averaged in
    assert result.relations["Other"].f1 == pytest.approx(50.0)


def test_empty_class_in_the_key_is_not_averaged_and_a_never_predicted_class_scores_zero():
    key = {"1": CE12, "2": PP21}
    result = score_answers({"1": CE12, "2": MT12}, key)  # Message-Topic is absent from the key
    assert set(result.relations) == {"Cause-Effect", "Product-Producer"}
    assert result.relations["Product-Producer"].precision == 0.0  # never proposed: P = 0, not undefined
    assert result.official_f1 == pytest.approx(50.0)  # (100 + 0) / 2, Message-Topic not counted
    assert "!!!WARNING!!! The proposed file contains 1 label(s) of type 'Message-Topic(e1,e2)'" in result.report
    assert " *MT1" in result.report and "  *MT <-- classified as" in result.report  # absent labels are starred


def test_skipped_ids_count_against_recall():
    key = {"1": CE12, "2": CE12, "3": "Other"}
    result = score_answers({"1": CE12}, key)
    ce = result.relations["Cause-Effect"]
    assert (ce.precision, ce.recall) == (pytest.approx(100.0), pytest.approx(50.0))
    assert "Coverage = 1/3 = 33.33%" in result.report
    assert "Accuracy (considering all skipped examples as Other) = 2/3 = 66.67%" in result.report


def test_report_layout_of_the_official_block():
    result = score_answers({"1": CE12, "2": CE12, "3": MT12, "4": "Other"},
                           {"1": CE12, "2": CE21, "3": "Other", "4": MT12, "5": PP21})
    official = result.report.split("TAKING DIRECTIONALITY INTO ACCOUNT -- OFFICIAL >>>:\n\n")[1]
    assert official.splitlines()[:9] == [
        "Confusion matrix:",
        "         C-E  M-T  P-P  _O_ <-- classified as",
        "      +--------------------+ -SUM- xDIRx skip  ACTUAL",
        "  C-E |   1    0    0    0 |    1     1     0      2",
        "  M-T |   0    0    0    1 |    1     0     0      1",
        "  P-P |   0    0    0    0 |    0     0     1      1",
        "  _O_ |   0    1    0    0 |    1     0     0      1",
        "      +--------------------+",
        " -SUM-    1    1    0    1      3     1     1      5",
    ]
    assert "             Cause-Effect :    P =    1/(   1 +   1) =  50.00%     R =    1/   2 =  50.00%     " \
           "F1 =  50.00%" in official
    assert official.endswith("<<< The official score is (9+1)-way evaluation with directionality taken into "
                             "account: macro-averaged F1 = 16.67% >>>\n")
    assert result.official_f1 == pytest.approx(50 / 3)


def test_perfect_answers_score_100(tmp_path):
    key = tmp_path / "key.txt"
    key.write_bytes(b"1\tOther\r\n2\tComponent-Whole(e2,e1)\r\n3\tEntity-Destination(e1,e2)\r\n")
    result = score_files(key, key)
    assert result.official_f1 == pytest.approx(100.0) and result.accuracy == pytest.approx(100.0)


@pytest.mark.parametrize("content, message", [
    (b"1 Other\n", "expected 'ID<TAB>LABEL'"),
    (b"1\tCause-Effect\n", "expected 'ID<TAB>LABEL'"),
    (b"x\tOther\n", "expected 'ID<TAB>LABEL'"),
    (b"1\tOther\n1\tOther\n", "ID 1 is already defined"),
])
def test_bad_answer_files(tmp_path, content, message):
    path = tmp_path / "answers.txt"
    path.write_bytes(content)
    with pytest.raises(DataFormatError, match=message) as err:
        read_answers(path)
    assert str(err.value).startswith(f"{path}:")


def test_ids_outside_the_key_and_empty_inputs(tmp_path):
    with pytest.raises(SeqlabError, match="not in the key: '9'"):
        score_answers({"9": "Other"}, {"1": "Other", "2": CE12})
    with pytest.raises(SeqlabError, match="no relation other than Other"):
        score_answers({"1": "Other"}, {"1": "Other"})
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(SeqlabError, match="empty"):
        read_answers(tmp_path / "empty.txt")
