"""Paired significance tests (seqlab.core.significance): counts that re-score exactly, exact small cases, the CLI."""
from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest

from seqlab.cli import main
from seqlab.core.errors import SeqlabError
from seqlab.data.metrics import read_prediction_file, score
from seqlab.relation.score import score_answers
from seqlab.core.significance import (compare, compare_conll_files, official_macro_f1, relation_counts,
                                 seed_permutation_test, span_counts, span_f1)
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


def test_span_f1_is_zero_where_it_is_undefined_and_vectorised():
    sums = np.array([[0, 0, 0], [0, 3, 2], [2, 2, 4], [3, 3, 3]])
    assert span_f1(sums).tolist() == pytest.approx([0.0, 0.0, 100 * 2 * 1 * 0.5 / 1.5, 100.0])


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


# ------------------------------------------------------------------ the tests


def test_identical_systems_differ_by_nothing_with_p_one():
    counts = np.array([[1, 1, 2], [0, 1, 1], [3, 3, 3], [2, 4, 2]])
    result = compare(counts, counts.copy(), span_f1, samples=500)
    assert result.difference == 0.0 and result.p_value == 1.0
    assert result.ci_low == result.ci_high == 0.0


def test_a_perfect_system_beats_an_empty_one_at_the_smallest_p_the_samples_allow():
    perfect = np.tile([1, 1, 1], (40, 1))  # one entity per sentence, always found
    empty = np.tile([0, 0, 1], (40, 1))
    result = compare(perfect, empty, span_f1, samples=999)
    assert result.score_a == 100.0 and result.score_b == 0.0 and result.difference == 100.0
    assert result.p_value == pytest.approx(1 / 1000)
    assert 0.0 < result.ci_low <= result.ci_high == 100.0


def test_approximate_randomization_matches_the_exact_permutation_p_value():
    """Five sentences: all 2^5 swaps enumerated give the exact p; 20,000 shuffles estimate it."""
    a = np.array([[2, 2, 3], [1, 2, 1], [0, 1, 1], [3, 3, 3], [1, 1, 2]])
    b = np.array([[1, 2, 3], [1, 1, 1], [0, 0, 1], [2, 4, 3], [1, 2, 2]])
    observed = abs(float(span_f1(a.sum(0)) - span_f1(b.sum(0))))
    reached = 0
    for swaps in itertools.product([False, True], repeat=len(a)):
        s = np.array(swaps)[:, None]
        a_star, b_star = np.where(s, b, a).sum(0), np.where(s, a, b).sum(0)
        reached += abs(float(span_f1(a_star) - span_f1(b_star))) >= observed - 1e-9
    exact = reached / 2 ** len(a)
    result = compare(a, b, span_f1, samples=20_000, seed=3)
    assert result.p_value == pytest.approx(exact, abs=0.015)


def test_the_bootstrap_interval_matches_brute_force_resampling():
    """Three sentences: the 27 equally likely resamples give the exact distribution of the difference."""
    a = np.array([[2, 2, 3], [1, 2, 1], [0, 1, 1]])
    b = np.array([[1, 2, 3], [1, 1, 1], [0, 0, 1]])
    deltas = [float(span_f1(a[list(i)].sum(0)) - span_f1(b[list(i)].sum(0)))
              for i in itertools.product(range(3), repeat=3)]
    result = compare(a, b, span_f1, samples=20_000, seed=5)
    ordered = sorted(deltas)
    assert ordered[0] <= result.ci_low <= ordered[1] and ordered[-2] <= result.ci_high <= ordered[-1]


def test_the_same_seed_gives_the_same_result():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, (30, 3)), rng.integers(0, 3, (30, 3))
    assert compare(a, b, span_f1, samples=300, seed=7) == compare(a, b, span_f1, samples=300, seed=7)


@pytest.mark.parametrize("a, b, samples, message", [
    (np.zeros((3, 3)), np.zeros((4, 3)), 10, r"same non-empty shape, got \(3, 3\) and \(4, 3\)"),
    (np.zeros((0, 3)), np.zeros((0, 3)), 10, r"same non-empty shape"),
    (np.zeros((3, 3)), np.zeros((3, 3)), 0, r"samples must be positive, got 0"),
])
def test_compare_refuses_unpaired_input(a, b, samples, message):
    with pytest.raises(ValueError, match=message):
        compare(a, b, span_f1, samples=samples)


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



def test_seed_permutation_test_is_exact_on_small_groups():
    """Four seeds against four: 70 splits; fully separated groups reach |difference| only as themselves
    or swapped, so p = 2/70."""
    result = seed_permutation_test([90.1, 90.2, 90.3, 90.4], [90.5, 90.6, 90.7, 90.8])
    assert result.exact and result.splits == 70 and result.p_value == pytest.approx(2 / 70)
    assert result.difference == pytest.approx(-0.4)
    assert seed_permutation_test([90.0, 91.0], [90.0, 91.0]).p_value == 1.0


def test_seed_permutation_test_matches_brute_force_on_random_scores():
    rng = random.Random(3)
    a, b = [rng.gauss(90, 0.3) for _ in range(5)], [rng.gauss(90.2, 0.3) for _ in range(3)]
    pooled, observed = a + b, abs(sum(a) / 5 - sum(b) / 3)
    splits = list(itertools.combinations(range(8), 5))
    reached = sum(abs(sum(pooled[i] for i in c) / 5 - sum(pooled[i] for i in range(8) if i not in c) / 3)
                  >= observed - 1e-9 for c in splits)
    result = seed_permutation_test(a, b)
    assert result.splits == len(splits) == 56 and result.p_value == pytest.approx(reached / 56)


def test_seed_permutation_test_samples_when_the_splits_are_too_many():
    rng = random.Random(5)
    a, b = [rng.gauss(90, 0.3) for _ in range(7)], [rng.gauss(90.3, 0.3) for _ in range(7)]
    exact = seed_permutation_test(a, b)
    drawn = seed_permutation_test(a, b, max_exact=100, samples=20_000, seed=2)
    assert exact.exact and exact.splits == 3432 and not drawn.exact and drawn.splits == 20_000
    assert drawn.p_value == pytest.approx(exact.p_value, abs=0.02)
    with pytest.raises(ValueError, match="at least one run"):
        seed_permutation_test([], [1.0])
