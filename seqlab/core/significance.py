"""Is system A really better than system B on this test set? Paired tests over sentences.

Two systems scored on the same test set differ by a few tenths of F1 all the time; whether that
is more than the luck of the test sample is a paired test (Koehn 2004; Berg-Kirkpatrick, Burkett &
Klein 2012; Dror et al. 2018). Both tests here resample *sentences*, the unit the two systems were
run on, and re-score the resampled set with the task's own measure (span F1 for CoNLL files, the
official macro-F1 for SemEval-2010 Task 8), so nothing assumes F1 is a mean over sentences:

* **approximate randomization** (Noreen 1989; Yeh 2000, for F1): under the null hypothesis that the
  systems are exchangeable, each sentence's two outputs are swapped with probability 1/2; the
  p-value is the share of shuffles whose |score(A*) − score(B*)| reaches the observed one
  (two-sided, with the +1 correction of Noreen);
* **paired bootstrap** (Efron & Tibshirani 1993; Koehn 2004): the sentences are drawn with replacement
  and both systems re-scored on each draw; the 2.5 and 97.5 percentiles of the difference are a 95%
  confidence interval.

Each system is reduced to per-sentence count vectors (span counts, or per-relation counts: made from output
files by :mod:`seqlab.apps.compare`), so both tests are a few matrix products over all resamples at once.
The statistics only: this module reads no file and knows no data format.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np


Scorer = Callable[[np.ndarray], np.ndarray]
"""Maps summed counts (..., *count shape) to scores (...), vectorised over leading dimensions."""

_CHUNK = 500  # resamples per matrix product: (500, N) weights stay a few MB on any test set


@dataclass(frozen=True)
class Comparison:
    """Scores of two systems on the same items, their difference and how sure it is."""

    score_a: float
    score_b: float
    difference: float
    ci_low: float  # 95% paired-bootstrap interval of score_a - score_b
    ci_high: float
    p_value: float  # approximate randomization, two-sided
    items: int
    samples: int
    seed: int

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def span_f1(sums: np.ndarray) -> np.ndarray:
    """Span F1 (percent) from summed [correct, found, gold] counts, shape (..., 3) -> (...)."""
    correct, found, gold = np.moveaxis(sums.astype(np.float64), -1, 0)
    precision = np.divide(correct, found, out=np.zeros_like(correct), where=found > 0)
    recall = np.divide(correct, gold, out=np.zeros_like(correct), where=gold > 0)
    total = precision + recall
    return 100.0 * np.divide(2 * precision * recall, total, out=np.zeros_like(total), where=total > 0)


def official_macro_f1(sums: np.ndarray) -> np.ndarray:
    """SemEval-2010 Task 8 (9+1)-way macro-F1 (percent) from summed counts, shape (..., R, 4) -> (...).

    Per relation the counts are [correct, proposed, wrong direction, gold], as in the official
    scorer: P = correct / (proposed + wrong direction), 0 when nothing was proposed; R = correct / gold.
    """
    correct, proposed, wrong, gold = np.moveaxis(sums.astype(np.float64), -1, 0)  # each shape: (..., R)
    precision = np.divide(correct, proposed + wrong, out=np.zeros_like(correct), where=proposed > 0)
    recall = np.divide(correct, gold, out=np.zeros_like(correct), where=gold > 0)
    total = precision + recall
    f1 = np.divide(2 * precision * recall, total, out=np.zeros_like(total), where=total > 0)
    return 100.0 * f1.mean(-1)


def compare(a: np.ndarray, b: np.ndarray, scorer: Scorer, *, samples: int = 10_000, seed: int = 1) -> Comparison:
    """Approximate-randomization p-value and paired-bootstrap interval of scorer(a) - scorer(b).

    ``a`` and ``b`` hold one count vector per item (shape (N, ...)), item i of both being the same
    sentence. Deterministic for a given ``seed``.
    """
    if a.shape != b.shape or a.shape[0] == 0:
        raise ValueError(f"a and b must be per-item counts of the same non-empty shape, got {a.shape} and {b.shape}")
    if samples < 1:
        raise ValueError(f"samples must be positive, got {samples}")
    n, shape = a.shape[0], a.shape[1:]
    flat_a, flat_b = a.reshape(n, -1).astype(np.float64), b.reshape(n, -1).astype(np.float64)
    total_a, total_b = flat_a.sum(0), flat_b.sum(0)  # shape: (K,)
    score_a, score_b = float(scorer(total_a.reshape(shape))), float(scorer(total_b.reshape(shape)))
    observed = score_a - score_b
    rng = np.random.default_rng(seed)
    shuffled, boot = [], []
    for start in range(0, samples, _CHUNK):
        size = min(_CHUNK, samples - start)
        swap = (rng.random((size, n)) < 0.5).astype(np.float64)  # shape: (S, N), 1 where the outputs swap
        moved = swap @ (flat_b - flat_a)  # shape: (S, K)
        sums_a, sums_b = total_a + moved, total_b - moved
        shuffled.append(scorer(sums_a.reshape(size, *shape)) - scorer(sums_b.reshape(size, *shape)))
        draws = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]  # shape: (S, N), row-offset
        weights = np.bincount(draws.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)  # shape: (S, N)
        boot.append(scorer((weights @ flat_a).reshape(size, *shape)) - scorer((weights @ flat_b).reshape(size, *shape)))
    null, deltas = np.concatenate(shuffled), np.concatenate(boot)
    reached = int(np.count_nonzero(np.abs(null) >= abs(observed) - 1e-9))
    low, high = np.percentile(deltas, [2.5, 97.5])
    return Comparison(score_a, score_b, observed, float(low), float(high), (reached + 1) / (samples + 1),
                      n, samples, seed)


@dataclass(frozen=True)
class SeedComparison:
    """Two configs, each run with several seeds: is the difference of their mean scores more than seed luck?"""

    mean_a: float
    mean_b: float
    difference: float
    p_value: float  # two-sided permutation test over the seed labels
    runs_a: int
    runs_b: int
    splits: int  # relabellings weighed: every one when exact, else the random draws
    exact: bool


def seed_permutation_test(a: Sequence[float], b: Sequence[float], *, max_exact: int = 200_000,
                          samples: int = 100_000, seed: int = 1) -> SeedComparison:
    """Unpaired permutation test of mean(a) − mean(b) over runs (one score per seed).

    Under the null hypothesis the config labels are exchangeable: every way of splitting the
    pooled scores into groups of len(a) and len(b) is as likely. The p-value is the share of
    splits whose |mean difference| reaches the observed one (two-sided). All splits are
    enumerated when there are at most ``max_exact`` (five seeds against five: 252), which makes
    the test exact; otherwise ``samples`` random splits are drawn (with Noreen's +1). With few
    seeds the smallest p-value is coarse: four against four cannot go below 2/70 = 0.029.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.size < 1 or y.size < 1:
        raise ValueError(f"each side needs at least one run, got {x.size} and {y.size}")
    pooled, k = np.concatenate([x, y]), x.size
    observed = float(x.mean() - y.mean())
    count = math.comb(pooled.size, k)
    if count <= max_exact:
        members = np.zeros((count, pooled.size), dtype=bool)  # shape: (S, N), True for the A side of a split
        for row, chosen in enumerate(itertools.combinations(range(pooled.size), k)):
            members[row, list(chosen)] = True
        splits, exact = count, True
    else:
        rng = np.random.default_rng(seed)
        members = np.argsort(rng.random((samples, pooled.size)), axis=1) < k  # shape: (S, N), k True per row
        splits, exact = samples, False
    sums_a = members.astype(np.float64) @ pooled  # shape: (S,)
    null = sums_a / k - (pooled.sum() - sums_a) / y.size
    reached = int(np.count_nonzero(np.abs(null) >= abs(observed) - 1e-9))
    p = reached / splits if exact else (reached + 1) / (splits + 1)
    return SeedComparison(float(x.mean()), float(y.mean()), observed, p, x.size, y.size, splits, exact)


def format_comparison(result: Comparison, name_a: str, name_b: str, measure: str) -> str:
    """The report ``seqlab compare`` prints."""
    width = max(len(name_a), len(name_b))
    verdict = "significant at 0.05" if result.p_value < 0.05 else "not significant at 0.05"
    return (f"A  {name_a:<{width}}  {measure} {result.score_a:6.2f}\n"
            f"B  {name_b:<{width}}  {measure} {result.score_b:6.2f}\n"
            f"A - B = {result.difference:+.2f}; 95% paired-bootstrap interval [{result.ci_low:+.2f}, {result.ci_high:+.2f}]\n"
            f"approximate randomization: p = {result.p_value:.4f} (two-sided; {verdict})\n"
            f"{result.items} sentences, {result.samples} resamples each, seed {result.seed}\n")
