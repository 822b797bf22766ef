"""Paired comparisons of two output files (seqlab.apps.compare, seqlab compare): per-sentence counts that re-score
exactly as conlleval and the official SemEval scorer do, refused pairs, and the CLI."""
from __future__ import annotations

import json
import random

import pytest

from seqlab.apps.compare import compare_conll_files, relation_counts, span_counts
from seqlab.cli import main
from seqlab.core.errors import SeqlabError
from seqlab.core.significance import official_macro_f1, span_f1
from seqlab.data.metrics import read_prediction_file, score
from seqlab.relation.score import score_answers
from tests.conftest import FIXTURES

CE12, CE21, MT12, PP21 = "Cause-Effect(e1,e2)", "Cause-Effect(e2,e1)", "Message-Topic(e1,e2)", "Product-Producer(e2,e1)"


def _write(path, sentences):
    """A 'token gold pred' file from [(tokens, gold, pred), ...]."""
    lines = []
    for tokens, gold, pred in sentences:
        lines += [f"{t} {g} {p}" for t, g, p in zip(tokens, gold, pred)] + [""]
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------ counts


@pytest.mark.parametrize("name", ["iob1.txt", "iob2.tsv"])
def test_span_counts_sum_to_the_conlleval_counts_of_the_whole_file(name):
    file = read_prediction_file(FIXTURES / "metrics" / name)
    counts = span_counts(file.gold, file.pred)
    whole = score(file.gold, file.pred)
    assert counts.shape == (len(file.gold), 3)
    assert counts.sum(0).tolist() == [whole.correct, whole.phrases_found, whole.phrases_gold]
    assert span_f1(counts.sum(0)) == pytest.approx(whole.f1)


def test_relation_counts_give_the_official_macro_f1_on_hand_made_answers():
    # wrong direction (2), Other predicted as a relation (4), a relation never predicted (PP, 6), Other right (5)
    key = {"1": CE12, "2": CE21, "3": MT12, "4": "Other", "5": "Other", "6": PP21, "7": MT12}
    proposed = {"1": CE12, "2": CE12, "3": MT12, "4": MT12, "5": "Other", "6": "Other", "7": CE21}
    counts = relation_counts(proposed, key)
    assert counts.shape == (7, 3, 4)  # Cause-Effect, Message-Topic, Product-Producer
    assert counts.sum(0).tolist() == [[1, 2, 1, 2], [1, 2, 0, 2], [0, 0, 0, 1]]  # correct, proposed, xDIRx, gold
    assert official_macro_f1(counts.sum(0)) == pytest.approx(score_answers(proposed, key).official_f1)


def test_relation_counts_agree_with_the_official_scorer_on_random_answers():
    key = dict(line.split("\t") for line in (FIXTURES / "semeval" / "test_key.txt").read_text().splitlines())
    labels = sorted(set(key.values()) | {CE12, CE21, MT12, PP21, "Other"})
    rng = random.Random(0)
    for _ in range(20):
        proposed = {sid: rng.choice(labels) if rng.random() < 0.6 else gold for sid, gold in key.items()}
        counts = relation_counts(proposed, key)
        assert official_macro_f1(counts.sum(0)) == pytest.approx(score_answers(proposed, key).official_f1)


# ------------------------------------------------------------------ files and CLI


@pytest.fixture
def two_systems(tmp_path):
    tokens, gold = ["Peter", "lives", "in", "Berlin"], ["B-PER", "O", "O", "B-LOC"]
    good = _write(tmp_path / "good.txt", [(tokens, gold, gold)] * 30)
    bad = _write(tmp_path / "bad.txt", [(tokens, gold, ["B-PER", "O", "O", "O"])] * 30)
    return good, bad


def test_compare_conll_files_scores_each_file_as_conlleval_does(two_systems):
    good, bad = two_systems
    result = compare_conll_files(good, bad, samples=200)
    assert result.score_a == 100.0 and result.score_b == pytest.approx(100 * 2 * 1 * 0.5 / 1.5)
    assert result.items == 30 and result.p_value == pytest.approx(1 / 201)


def test_files_of_different_test_sets_are_refused_naming_the_sentence(tmp_path, two_systems):
    good, _ = two_systems
    other = _write(tmp_path / "other.txt", [(["Peter", "lives", "in", "Berlin"], ["B-PER", "O", "O", "B-ORG"],
                                             ["B-PER", "O", "O", "B-ORG"])] * 30)
    with pytest.raises(SeqlabError, match=r"sentence 1 has different gold tags in .*good.txt and .*other.txt"):
        compare_conll_files(good, other)
    short = _write(tmp_path / "short.txt", [(["Peter"], ["B-PER"], ["B-PER"])] * 29)
    with pytest.raises(SeqlabError, match=r"has 30 sentences but .*short.txt has 29"):
        compare_conll_files(good, short)


def test_cli_prints_the_report_and_json(capsys, two_systems):
    good, bad = two_systems
    assert main(["compare", "conll", str(good), str(bad), "--samples", "200"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("A  ") and lines[0].endswith("F1 100.00")
    assert lines[2].startswith("A - B = +33.33; 95% paired-bootstrap interval [")
    assert lines[3] == "approximate randomization: p = 0.0050 (two-sided; significant at 0.05)"
    assert lines[4] == "30 sentences, 200 resamples each, seed 1"
    assert main(["compare", "conll", str(good), str(bad), "--samples", "200", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["a"] == str(good) and record["difference"] == pytest.approx(100 / 3) and record["samples"] == 200


def test_cli_semeval_needs_every_key_id_answered(capsys, tmp_path):
    key = tmp_path / "key.txt"
    key.write_text(f"1\t{CE12}\n2\t{MT12}\n")
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(f"1\t{CE12}\n2\t{MT12}\n")
    b.write_text(f"1\t{CE21}\n")
    assert main(["compare", "semeval", str(a), str(b), str(key), "--samples", "50"]) == 2
    assert f"{b}: no answer for id 2 (a paired test needs an answer for every key id" in capsys.readouterr().err
    b.write_text(f"1\t{CE21}\n2\t{MT12}\n")
    assert main(["compare", "semeval", str(a), str(b), str(key), "--samples", "50"]) == 0
    out = capsys.readouterr().out
    assert "macro-F1 100.00" in out and "A - B = +50.00" in out


def test_cli_names_a_missing_file(capsys, two_systems, tmp_path):
    good, _ = two_systems
    assert main(["compare", "conll", str(good), str(tmp_path / "nope.txt")]) == 2
    assert capsys.readouterr().err.strip() == f"seqlab: error: {tmp_path / 'nope.txt'}: no such file"


def test_cli_reads_a_run_directorys_test_output(capsys, tmp_path, two_systems):
    good, bad = two_systems
    run = tmp_path / "run"
    run.mkdir()
    (run / "test.predictions.txt").write_text(good.read_text())
    assert main(["compare", "conll", str(run), str(bad), "--samples", "50"]) == 0
    assert capsys.readouterr().out.startswith(f"A  {run / 'test.predictions.txt'}")
    assert main(["compare", "semeval", str(run), str(bad), str(good), "--samples", "50"]) == 2
    assert f"{run}: a directory without test.answers.txt" in capsys.readouterr().err


def test_cli_refuses_an_empty_file_and_a_negative_seed(capsys, tmp_path, two_systems):
    good, _ = two_systems
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["compare", "conll", str(empty), str(good)]) == 2
    assert f"{empty}: no sentences to compare" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare", "conll", str(good), str(good), "--seed", "-1"])
    assert "expected a whole number >= 0, got -1" in capsys.readouterr().err
