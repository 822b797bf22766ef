"""Paired significance tests (seqlab.core.significance): the measures, exact small cases, brute force.

The output files they are run on are tests/apps/test_compare.py's."""
from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from seqlab.core.significance import compare, seed_permutation_test, span_f1


# ------------------------------------------------------------------ measures


def test_span_f1_is_zero_where_it_is_undefined_and_vectorised():
    sums = np.array([[0, 0, 0], [0, 3, 2], [2, 2, 4], [3, 3, 3]])
    assert span_f1(sums).tolist() == pytest.approx([0.0, 0.0, 100 * 2 * 1 * 0.5 / 1.5, 100.0])


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
