"""Calibrated confidences: how far a tagger's confidences are from how often it is right, and temperature scaling.

A unit is what a confidence is given for: a predicted span (its confidence is the smallest marginal of its
tokens' labels, :class:`~seqlab.tagging.predict.Predictor`; it is right when its type and both boundaries match
a gold span) or, for token labels (POS tags), a token (the marginal of its label; right when the label is the
gold one).

* **Expected calibration error** (Naeini et al. 2015; Guo et al. 2017, eq. 3): the units are put into
  :data:`BINS` equal-width confidence bins, ``ECE = sum_b n_b / N * |accuracy_b - mean confidence_b|``.
* **Temperature scaling** (Guo et al. 2017, section 4.2): every score of the CRF (emissions, transitions, start
  and end; a softmax decoder's emissions) is divided by one temperature T before the marginals are computed, so
  labels (the Viterbi path) are unchanged and only confidences move. T is fitted on a labelled split (the dev
  set) by minimising the log loss of the units' confidences against whether they are right.

A split is decoded once (:class:`Outcomes`); the confidences at another temperature then cost one
forward-backward per batch, so a fit reads the encoder's output once. The ECE and the fit itself, the same for
every kind of unit, are :mod:`seqlab.core.calibration`'s (their names are importable from here too).
"""
from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

import numpy as np
import torch

from seqlab.core import calibration as shared
from seqlab.core.calibration import (BINS, HIGHEST, LOWEST, MIN_EACH, Bin, Reliability, binary_log_loss,  # noqa: F401
                                     check_temperature, fit_temperature, reliability, stored_temperature, summary)
from seqlab.core.errors import SeqlabError
from seqlab.data.batching import Encoded
from seqlab.data.dataset import Split
from seqlab.data.labelling import Labelling
from seqlab.data.schemes import spans
from seqlab.core.paths import data_relative
from seqlab.tagging.predict import Emissions, Predictor

#: A loaded tagger (:class:`seqlab.tagging.api.SequenceTagger`, which imports this module: named here, not
#: imported back): what :func:`calibrate` takes and returns a copy of.
SequenceTagger = TypeVar("SequenceTagger")

class Outcomes:
    """A labelled split decoded once by ``predictor``: every batch's emissions and best paths, which predicted
    units are right, and where each unit lies; :meth:`confidences` gives the units' confidences at any
    temperature from those, and :meth:`stored` a predictor that reads the same emissions (the split's scores
    from this one run of the encoder: :meth:`seqlab.tagging.api.SequenceTagger.evaluate`)."""

    def __init__(self, predictor: Predictor, data: Encoded, split: Split, labelling: Labelling, *,
                 batch_size: int = 100) -> None:
        if len(data) != len(split.tokens):
            raise ValueError(f"{len(data)} encoded sentences for a split of {len(split.tokens)}")
        self.predictor, self.unit = predictor, labelling.unit
        self.data, self.split, self.batch_size = data, split, batch_size
        # (sentence indices, emissions, mask, best paths, units (row, start, end), lengths) of every batch
        self.batches: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, np.ndarray,
                                 np.ndarray]] = []
        right: list[np.ndarray] = []
        units = UNITS[self.unit](predictor, split)
        for indices, mask, emissions in predictor.scored_batches(data, batch_size):
            with torch.inference_mode():
                best = predictor.decoder.decode(emissions, mask)  # shape: (B, T)
            ids, lengths = best.cpu().numpy(), data.lengths[indices].numpy()
            starts, good = units(ids, lengths, indices.tolist())
            right.append(good)
            where = np.array(starts, dtype=np.int64).reshape(-1, 3)
            self.batches.append((indices, emissions, mask, best, where, np.asarray(lengths)))
        self.correct = np.concatenate(right) if right else np.zeros(0, dtype=bool)

    def stored(self) -> Predictor:
        """A predictor like the one that decoded this split, whose emissions are the ones stored here: decoding
        :attr:`data` with it (at :attr:`batch_size`) gives the same labels without running the encoder again."""
        replay = copy.copy(self.predictor)  # the same labels, span reader and temperature
        replay.backend = _StoredEmissions(self.predictor.backend,
                                          {tuple(b[0].tolist()): b[1] for b in self.batches})
        return replay

    def confidences(self, temperature: float = 1.0) -> np.ndarray:
        """Every unit's confidence at ``temperature``, in the order of :attr:`correct`."""
        out = []
        decoder = self.predictor.decoder
        with torch.inference_mode():
            for _, emissions, mask, best, where, _ in self.batches:
                marginals = decoder.marginals(emissions, mask, temperature)  # shape: (B, T, K)
                chosen = marginals.gather(-1, best.unsqueeze(-1)).squeeze(-1).cpu().numpy()  # shape: (B, T)
                out.append(_span_minima(chosen, where))
        return np.concatenate(out) if out else np.zeros(0)

    def reliability(self, temperature: float = 1.0, bins: int = BINS) -> Reliability:
        return reliability(self.confidences(temperature), self.correct, unit=self.unit, temperature=temperature,
                           bins=bins)

    def log_loss(self, temperature: float) -> float:
        """Mean binary log loss of the units' confidences at ``temperature`` against whether they are right."""
        return binary_log_loss(self.confidences(temperature), self.correct)


class _SpanUnits:
    """A span labelling's units: each predicted span, right when the gold file has it (type and extent)."""

    def __init__(self, predictor: Predictor, split: Split) -> None:
        self.predictor, self.split = predictor, split

    def __call__(self, ids: np.ndarray, lengths: np.ndarray, rows: list[int]) -> tuple[Any, np.ndarray]:
        found = self.predictor.read_spans(ids, lengths)
        gold = [set(spans(self.split.file_tags[i])) for i in rows]
        starts = [(r, s, e) for r, chunks in enumerate(found) for _, s, e in chunks]
        return starts, np.array([chunk in gold[r] for r, chunks in enumerate(found) for chunk in chunks], dtype=bool)


class _TokenUnits:
    """A token labelling's units: every token, right when its predicted label is the gold one."""

    def __init__(self, predictor: Predictor, split: Split) -> None:
        self.gold_ids = _gold_ids(split.tags, predictor.names)  # shape: (N, T_max)

    def __call__(self, ids: np.ndarray, lengths: np.ndarray, rows: list[int]) -> tuple[Any, np.ndarray]:
        width = ids.shape[1]
        real = np.arange(width) < lengths[:, None]  # shape: (B, T)
        starts = np.argwhere(real)  # (row, token), row-major
        starts = np.concatenate([starts, starts[:, 1:] + 1], axis=1)  # (row, token, token + 1)
        return starts, ids[real] == self.gold_ids[rows, :width][real]


#: What a calibration unit is, by the labelling's ``unit``: (row, start, end) of each, and whether it is right.
UNITS: dict[str, type[_SpanUnits] | type[_TokenUnits]] = {"span": _SpanUnits, "token": _TokenUnits}


def _gold_ids(tags: Sequence[Sequence[str]], names: np.ndarray) -> np.ndarray:
    """The gold labels of every sentence as label ids (each one's index in ``names``), padded with -1 to the
    longest sentence; a label the model does not have is -1 too, so it never equals a prediction."""
    index = {name: k for k, name in enumerate(names.tolist())}
    lengths = np.fromiter(map(len, tags), dtype=np.int64, count=len(tags))  # shape: (N,)
    flat = np.fromiter(map(index.get, itertools.chain.from_iterable(tags), itertools.repeat(-1)), dtype=np.int64,
                       count=int(lengths.sum()))  # shape: (tokens,)
    out = np.full((len(tags), int(lengths.max(initial=0))), -1, dtype=np.int64)  # shape: (N, T_max)
    out[np.arange(out.shape[1]) < lengths[:, None]] = flat  # row by row, as the tokens come
    return out


class _StoredEmissions:
    """The :class:`~seqlab.tagging.predict.Emissions` of a split already scored: each batch's emissions as
    stored, keyed by its sentence indices, and the decoder of the backend that computed them."""

    def __init__(self, backend: Emissions, emissions: dict[tuple[int, ...], torch.Tensor]) -> None:
        self.backend, self.emissions, self.device = backend, emissions, backend.device

    @property
    def decoder(self) -> torch.nn.Module:
        return self.backend.decoder

    def scorer(self, data: Encoded) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        def score(indices: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            found = self.emissions.get(tuple(indices.tolist()))
            if found is None:
                raise ValueError("stored emissions are read in the batches they were computed in (same data "
                                 "and batch size)")
            return found  # shape: (B, T, K)
        return score


def _span_minima(chosen: np.ndarray, where: np.ndarray) -> np.ndarray:
    """The smallest of ``chosen[row, start:end]`` for each (row, start, end) of ``where``, in one pass: the
    ranges laid end to start in the flattened rows, reduced by ``np.minimum.reduceat``."""
    if len(where) == 0:
        return np.zeros(0)
    width = chosen.shape[1]
    flat = np.append(chosen.reshape(-1), 0.0)  # one element past the end, so that an end index is in range
    bounds = np.stack([where[:, 0] * width + where[:, 1], where[:, 0] * width + where[:, 2]], axis=1).reshape(-1)
    return np.minimum.reduceat(flat, bounds)[::2]


#: The fewest sentences ``seqlab calibrate`` fits a temperature on.
MIN_SENTENCES = 2


def calibration_fault(outcomes: Outcomes) -> str:
    """Why ``outcomes`` cannot calibrate (one sentence, no gold entities, gold types none of the model's, too few
    units right or wrong for :func:`fit_temperature` to fit), or ``""``: what ``seqlab calibrate`` refuses rather
    than store the fallback 1.0 over a model's temperature."""
    split, unit = outcomes.split, outcomes.unit
    if len(split.tokens) < MIN_SENTENCES:
        return f"{len(split.tokens)} sentence; a temperature is fitted on at least {MIN_SENTENCES}"
    if unit == "span":
        gold = {kind for tags in split.file_tags for kind, _, _ in spans(tags)}
        model = {str(name).partition("-")[2] for name in outcomes.predictor.names} - {""}
        if not gold:
            return "no entities in its gold tags; a temperature is fitted on labelled spans"
        if not gold & model:
            return (f"its types {sorted(gold)} are none of the model's {sorted(model)}; give a file labelled with "
                    f"the model's types (seqlab eval --label-map maps them)")
    right = int(outcomes.correct.sum())
    wrong = len(outcomes.correct) - right
    least = shared.MIN_EACH  # read when asked: the one threshold fit_temperature applies
    if min(right, wrong) < least:
        return (f"{right} predicted {unit}s right and {wrong} wrong: too few to fit a temperature (at least "
                f"{least} of each)")
    return ""


def calibrate(tagger: SequenceTagger, data: str | Path | Split | Outcomes, *, batch_size: int = 100,
              strict: bool = False) -> tuple[SequenceTagger, dict[str, Any]]:
    """Fit the confidences' temperature on a labelled file (the dev set), a split read, or a split ``tagger``
    has decoded already (:meth:`~seqlab.tagging.api.SequenceTagger.outcomes`, decoded again by nothing): the
    tagger at that temperature (``tagger`` keeps its own), and what a run's calibration.json records (the
    temperature, and the ECE there before and after). ``strict``: data that cannot calibrate
    (:func:`calibration_fault`) is a SeqlabError naming it, not the fit's fallback 1.0."""
    outcomes = data if isinstance(data, Outcomes) else tagger.outcomes(data, batch_size=batch_size)
    fault = calibration_fault(outcomes) if strict else ""
    if fault:
        raise SeqlabError(f"{outcomes.split.path}: cannot calibrate: {fault}; the model's temperature "
                          f"({tagger.temperature:g}) is kept")
    temperature = fit_temperature(outcomes)
    where = Path(outcomes.split.path if isinstance(data, (Outcomes, Split)) else data)
    record = summary(outcomes.reliability(1.0), outcomes.reliability(temperature), data_relative(where))
    return tagger.with_temperature(temperature), record


def plot(reliabilities: Sequence[Reliability], path: str, title: str = "") -> None:
    """A reliability diagram (accuracy against mean confidence per bin, one line per reliability) as a PNG
    at ``path``; needs matplotlib (``pip install 'seqlab[plots]'``)."""
    try:
        import matplotlib
    except ImportError:
        raise SeqlabError("--plot needs matplotlib: pip install 'seqlab[plots]' (or pip install matplotlib)") from None
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from seqlab.core.atomic import atomic_open

    figure, axes = plt.subplots(figsize=(4.5, 4.5), dpi=120)
    axes.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect calibration")
    for rel in reliabilities:
        shown = [b for b in rel.bins if b.count]
        axes.plot([b.confidence for b in shown], [b.accuracy for b in shown], marker="o",
                  label=f"T = {rel.temperature:.2f}: ECE {rel.ece:.3f}")
    axes.set(xlim=(0, 1), ylim=(0, 1), xlabel=f"mean confidence ({reliabilities[0].unit}s, per bin)",
             ylabel="accuracy", title=title)
    axes.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    with atomic_open(path, "wb") as out:
        figure.savefig(out, format="png")
    plt.close(figure)
