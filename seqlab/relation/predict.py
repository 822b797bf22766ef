"""Relation classification with a model: batched label probabilities, and scoring of a split (the official
SemEval-2010 Task 8 measure, or macro-F1 over the data's own labels: :mod:`seqlab.relation.label_score`)."""
from __future__ import annotations

from pathlib import Path

import torch

from seqlab.data.semeval import write_answers
from seqlab.core.errors import SeqlabError
from seqlab.models.relation import RelationClassifier
from seqlab.relation.build import RelationData, batches
from seqlab.relation.label_score import RelationResult, Scorer
from seqlab.relation.score import score_answers


@torch.no_grad()
def predict_probabilities(model: RelationClassifier, data: RelationData, *, batch_size: int = 200,
                          device: torch.device | str = "cpu", temperature: float = 1.0) -> torch.Tensor:
    """Label probabilities for every row of ``data`` (shape: (N, C)) at ``temperature``, in eval mode."""
    was_training = model.training
    model.eval()
    out = torch.empty(len(data), model.head.linear.out_features)
    for rows, batch in batches(data, batch_size):
        out[rows] = model.probabilities(batch.to(device), temperature).cpu()
    model.train(was_training)
    return out


def evaluate_examples(model: RelationClassifier, data: RelationData, labels: list[str], *, batch_size: int = 200,
                      device: torch.device | str = "cpu", answers: Path | None = None,
                      score: Scorer = score_answers) -> RelationResult:
    """Predict the labelled sentences of ``data``, optionally write an answer file, and score them against
    their gold labels with ``score`` (the official SemEval measure unless another is given)."""
    probs = predict_probabilities(model, data, batch_size=batch_size, device=device)
    predicted = [labels[i] for i in probs.argmax(dim=-1).tolist()]
    if answers is not None:
        write_answers(answers, data.ids, predicted)
    gold = data.labels.tolist()
    if any(g < 0 for g in gold):
        raise SeqlabError("cannot score: some sentences have no gold label")
    key = {sid: labels[g] for sid, g in zip(data.ids, gold)}
    return score(dict(zip(data.ids, predicted)), key)
