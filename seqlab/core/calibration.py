"""Calibration that holds for any unit a model gives a confidence for (a span, a token, a relation): the
expected calibration error with its bootstrap interval, and the temperature of temperature scaling fitted by
the least log loss (Guo et al. 2017). The tagging and relation tasks say what their units and confidences are
(:mod:`seqlab.tagging.calibration`, :mod:`seqlab.relation.calibration`); this module only needs, of a split's
units, whether each is right and the log loss at a temperature (:class:`Fittable`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from seqlab.core import rundir
from seqlab.core.errors import SeqlabError


class Fittable(Protocol):
    """A labelled split's units as :func:`fit_temperature` reads them."""

    correct: np.ndarray  # one bool per unit: is the prediction right

    def log_loss(self, temperature: float) -> float: ...


BINS = 10
#: The temperatures a fit searches (log-spaced), and the bounds a stored temperature must lie in.
LOWEST, HIGHEST = 0.05, 20.0
_EPS = 1e-7
#: A fit needs at least this many right units and this many wrong ones.
MIN_EACH = 10


def binary_log_loss(confidence: np.ndarray, correct: np.ndarray) -> float:
    """Mean binary log loss of confidences against whether their units are right."""
    p = np.clip(confidence, _EPS, 1 - _EPS)
    return float(-np.mean(np.where(correct, np.log(p), np.log1p(-p))))


@dataclass(frozen=True)
class Bin:
    """One confidence bin: (low, high], its units, their mean confidence and how many were right."""

    low: float
    high: float
    count: int
    confidence: float
    accuracy: float


@dataclass(frozen=True)
class Reliability:
    """How well confidences match accuracy over a split: ECE, the bins, and the temperature they were read at."""

    unit: str  # "span" or "token"
    count: int
    ece: float
    accuracy: float
    confidence: float
    temperature: float
    bins: list[Bin]
    interval: tuple[float, float]  # the ECE's 95% percentile-bootstrap interval (units resampled)

    def to_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "count": self.count, "ece": round(self.ece, 4),
                "ece_interval": [round(self.interval[0], 4), round(self.interval[1], 4)],
                "accuracy": round(self.accuracy, 4), "mean_confidence": round(self.confidence, 4),
                "temperature": round(self.temperature, 4),
                "bins": [{"low": b.low, "high": b.high, "count": b.count, "confidence": round(b.confidence, 4),
                          "accuracy": round(b.accuracy, 4)} for b in self.bins]}

    def table(self) -> str:
        """The reliability table as text: one line per bin, then the ECE."""
        lines = [f"calibration of {self.unit} confidences (temperature {self.temperature:.3f}): "
                 f"{self.count} {self.unit}s, accuracy {100 * self.accuracy:.2f}%, mean confidence "
                 f"{100 * self.confidence:.2f}%",
                 f"{'confidence':>12} {self.unit + 's':>8} {'mean conf':>10} {'accuracy':>9} {'gap':>7}"]
        for b in self.bins:
            if b.count:
                lines.append(f"  ({b.low:.1f}, {b.high:.1f}] {b.count:>8} {100 * b.confidence:>9.2f}% "
                             f"{100 * b.accuracy:>8.2f}% {100 * (b.accuracy - b.confidence):>+6.2f}")
            else:
                lines.append(f"  ({b.low:.1f}, {b.high:.1f}] {0:>8} {'-':>10} {'-':>9} {'-':>7}")
        lines.append(f"expected calibration error (ECE, {len(self.bins)} equal-width bins): {self.ece:.4f} (95% "
                     f"bootstrap interval {self.interval[0]:.4f}-{self.interval[1]:.4f})")
        return "\n".join(lines) + "\n"


def reliability(confidence: np.ndarray, correct: np.ndarray, *, unit: str = "span", temperature: float = 1.0,
                bins: int = BINS) -> Reliability:
    """The reliability of ``confidence`` (one per unit, in [0, 1]) against ``correct`` (bools): ECE over
    ``bins`` equal-width bins, each bin (low, high] (the first also holds 0)."""
    confidence, correct = np.asarray(confidence, dtype=np.float64), np.asarray(correct, dtype=bool)
    if confidence.shape != correct.shape or confidence.ndim != 1:
        raise ValueError(f"confidence and correct must be two vectors of one length, got shapes "
                         f"{confidence.shape} and {correct.shape}")
    which = np.clip(np.ceil(confidence * bins).astype(np.int64) - 1, 0, bins - 1)  # (low, high] -> its bin
    counts = np.bincount(which, minlength=bins)
    sums = np.bincount(which, weights=confidence, minlength=bins)
    rights = np.bincount(which, weights=correct.astype(np.float64), minlength=bins)
    total = max(len(confidence), 1)
    table, ece = [], 0.0
    for b in range(bins):
        n = int(counts[b])
        conf, acc = (sums[b] / n, rights[b] / n) if n else (0.0, 0.0)
        ece += n / total * abs(acc - conf)
        table.append(Bin(round(b / bins, 6), round((b + 1) / bins, 6), n, float(conf), float(acc)))
    return Reliability(unit, len(confidence), float(ece), float(correct.mean()) if len(correct) else 0.0,
                       float(confidence.mean()) if len(confidence) else 0.0, float(temperature), table,
                       _bootstrap(which, confidence, correct, bins))


def _bootstrap(which: np.ndarray, confidence: np.ndarray, correct: np.ndarray, bins: int, *,
               resamples: int = 1000, chunk: int = 100, seed: int = 0) -> tuple[float, float]:
    """The ECE's 95% percentile-bootstrap interval: ``resamples`` resamplings of the units with replacement,
    ``chunk`` at a time in one bincount each (ECE = sum over bins of |right - confidence sum| / N)."""
    n = len(confidence)
    if n == 0:
        return 0.0, 0.0
    rng, values = np.random.default_rng(seed), []
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        picks = rng.integers(0, n, size=(rows, n))
        keys = (which[picks] + bins * np.arange(rows)[:, None]).ravel()
        sums = np.bincount(keys, weights=confidence[picks].ravel(), minlength=rows * bins).reshape(rows, bins)
        rights = np.bincount(keys, weights=correct[picks].ravel().astype(np.float64),
                             minlength=rows * bins).reshape(rows, bins)
        values.append(np.abs(rights - sums).sum(axis=1) / n)
    low, high = np.percentile(np.concatenate(values), [2.5, 97.5])
    return float(low), float(high)


def fit_temperature(outcomes: Fittable, *, low: float = LOWEST, high: float = HIGHEST) -> float:
    """The temperature in [``low``, ``high``] with the least log loss on ``outcomes``: a log-spaced grid, then
    golden-section search between the best point's neighbours. 1.0 (the CRF's own marginals) when fewer than
    :data:`MIN_EACH` units are right, or fewer are wrong: too little to fit (with no error at all, the loss only
    falls towards the lowest temperature)."""
    right = int(outcomes.correct.sum())
    if min(right, len(outcomes.correct) - right) < MIN_EACH:
        return 1.0
    grid = np.exp(np.linspace(math.log(low), math.log(high), 13))
    losses = [outcomes.log_loss(float(t)) for t in grid]
    best = int(np.argmin(losses))
    a, b = math.log(grid[max(best - 1, 0)]), math.log(grid[min(best + 1, len(grid) - 1)])
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = outcomes.log_loss(math.exp(c)), outcomes.log_loss(math.exp(d))
    for _ in range(15):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = outcomes.log_loss(math.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = outcomes.log_loss(math.exp(d))
    found = math.exp((a + b) / 2)
    return found if outcomes.log_loss(found) <= losses[best] else float(grid[best])


def check_temperature(value: Any, where: str) -> float:
    """A stored temperature as a float in [:data:`LOWEST`, :data:`HIGHEST`], or a one-line error naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not LOWEST <= value <= HIGHEST:
        raise SeqlabError(f"{where}: temperature must be a number from {LOWEST} to {HIGHEST}, got {value!r}")
    return float(value)


def stored_temperature(run_dir: str | Path) -> float:
    """The temperature a run directory's calibration.json holds (checked), or 1.0 when the run has none."""
    record = rundir.load_json(Path(run_dir), rundir.CALIBRATION)
    if record is None:
        return 1.0
    return check_temperature(record.get("temperature"), str(Path(run_dir) / rundir.CALIBRATION))


def summary(before: Reliability, after: Reliability, fitted_on: str) -> dict[str, Any]:
    """What a run directory's calibration.json records: the temperature, the split it was fitted on, and the
    ECE there before and after."""
    return {"temperature": round(after.temperature, 6), "unit": after.unit, "fitted_on": fitted_on,
            "units": after.count, "ece_before": round(before.ece, 4), "ece_after": round(after.ece, 4)}


