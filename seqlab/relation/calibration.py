"""Calibrated relation confidences: temperature scaling of the classifier's softmax (Guo et al. 2017, section
4.2), fitted on dev after training as a tagger's span confidences are (:mod:`seqlab.tagging.calibration`).

A unit is a predicted relation: every classified pair whose most probable label is not the negative one (for
an extraction model, the relations it reports; with no negative label, every pair). Its confidence is that
label's probability, and it is right when the label is the gold one. The scores are divided by one temperature
T before the softmax, so labels are unchanged and only confidences move; T is the one with the least log loss
of the units' confidences against whether they are right (:func:`seqlab.core.calibration.fit_temperature`), and
the run's calibration.json holds it with the ECE before and after, which :class:`~seqlab.relation.api.
RelationModel` reads at load.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from seqlab.core.calibration import Reliability, binary_log_loss, fit_temperature, reliability, summary
from seqlab.models.relation import RelationClassifier
from seqlab.relation.build import RelationData
from seqlab.relation.predict import predict_probabilities

UNIT = "relation"


class RelationOutcomes:
    """A labelled split classified once: the scores of its predicted relations (module docstring) and which
    are right; :meth:`confidences` gives their confidences at any temperature from those scores."""

    unit = UNIT

    def __init__(self, model: RelationClassifier, data: RelationData, labels: list[str], negative: str | None, *,
                 batch_size: int = 200, device: torch.device | str = "cpu") -> None:
        probabilities = predict_probabilities(model, data, batch_size=batch_size, device=device)
        scores = probabilities.clamp_min(1e-30).log().double()  # shape: (N, C); log-softmax = scores up to a shift
        predicted = scores.argmax(dim=-1)
        keep = predicted != labels.index(negative) if negative in labels else torch.ones_like(predicted, dtype=bool)
        self.scores, self.predicted = scores[keep], predicted[keep]
        self.correct = (self.predicted == data.labels[keep]).numpy()

    def confidences(self, temperature: float = 1.0) -> np.ndarray:
        """Each predicted relation's confidence at ``temperature``, in the order of :attr:`correct`."""
        chosen = (self.scores / temperature).softmax(dim=-1).gather(-1, self.predicted.unsqueeze(-1)).squeeze(-1)
        return chosen.numpy()

    def reliability(self, temperature: float = 1.0) -> Reliability:
        return reliability(self.confidences(temperature), self.correct, unit=UNIT, temperature=temperature)

    def log_loss(self, temperature: float) -> float:
        """Mean binary log loss of the confidences at ``temperature`` against whether they are right."""
        return binary_log_loss(self.confidences(temperature), self.correct)


def calibrate_relations(outcomes: RelationOutcomes, fitted_on: str) -> dict[str, Any]:
    """The temperature fitted on ``outcomes`` and what calibration.json records (temperature, the split it was
    fitted on, the ECE before and after)."""
    temperature = fit_temperature(outcomes)
    return summary(outcomes.reliability(1.0), outcomes.reliability(temperature), fitted_on)
