"""The relation decision of an extraction model, fitted end to end on dev after both halves are trained.

The relation classifier is trained on gold entities with the negative label down-weighted, so its argmax over
every span pair of the tagger's entities over-predicts relations (on CoNLL04 dev with typed markers, seed 1: 515
predicted against 422 gold on test, precision 52.2, recall 63.7). A pair is therefore given its most probable
non-negative label only when that label's probability reaches a threshold τ, chosen on the dev file from
:data:`GRID` by strict relation macro-F1 end to end (the entities the tagger finds, as at test time), and stored in
the run (:data:`DECISION`, read at load). Where no τ beats the argmax on dev (``threshold: null``), or without the
file, the argmax decides.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from seqlab.core.errors import SeqlabError
from seqlab.core.atomic import atomic_open
from seqlab.data.formats.registry import located
from seqlab.data.formats.spert import read_spert
from seqlab.extraction.evaluate import gold_keys
from seqlab.extraction.pairs import pair_examples
from seqlab.extraction.score import RelationKey, score_kind

#: The run file holding the fitted threshold.
DECISION = "decision.json"
#: The thresholds a fit tries.
GRID = tuple(round(0.3 + 0.05 * k, 2) for k in range(14))  # 0.30 ... 0.95


@dataclass(frozen=True)
class Decision:
    """How a classified pair becomes a relation: the argmax (``threshold`` None), or the most probable
    non-negative label when its probability is at least ``threshold``."""

    negative: str
    threshold: float | None = None

    def relation(self, result: Any) -> tuple[str, float] | None:
        """(label, confidence) of the relation a classified pair is (``result``: a
        :class:`seqlab.relation.api.Relation`), or None for no relation."""
        if self.threshold is None:
            return None if result.label == self.negative else (result.label, result.confidence)
        probabilities = result.probabilities
        best = max((k for k in probabilities if k != self.negative), key=probabilities.__getitem__)
        return (best, probabilities[best]) if probabilities[best] >= self.threshold else None


def load_decision(run_dir: Path, negative: str) -> Decision:
    """The run's decision (:data:`DECISION`), or the argmax when it has none; a malformed file is a one-line
    error naming it."""
    path = run_dir / DECISION
    if not path.is_file():
        return Decision(negative)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))["threshold"]
    except (ValueError, KeyError, TypeError):
        raise SeqlabError(f"{path}: expected a JSON object with 'threshold', a probability or null") from None
    if value is None:  # the fit found the argmax best
        return Decision(negative)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
        raise SeqlabError(f"{path}: threshold must be a number in (0, 1), got {value!r}")
    return Decision(negative, float(value))


def _macro(gold: Iterable[RelationKey], pairs: Sequence[tuple[Any, Any, Any]], decision: Decision) -> float:
    predicted = []
    for head, tail, result in pairs:
        found = decision.relation(result)
        if found is not None:
            predicted.append((head, tail, found[0]))
    return score_kind(gold, predicted).macro()[2]


def fit_decision(model: Any, dev: str | Path, run_dir: Path, *, batch_size: int = 100) -> dict[str, Any]:
    """Fit the threshold on the SpERT file ``dev`` end to end (module docstring) and write :data:`DECISION`
    into ``run_dir``; returns what it records (the threshold, and dev macro-F1 at it and by the argmax)."""
    sentences = read_spert(located(dev))
    tagged = model.tagger.tag_tokens([list(s.tokens) for s in sentences], batch_size=batch_size)
    placed, examples = [], []
    for i, sentence in enumerate(tagged):
        entities = [(i, span.token_start, span.token_end, span.label) for span in sentence.spans]
        for h, t, example in pair_examples(sentence, str(i)):
            placed.append((entities[h], entities[t]))
            examples.append(example)
    results = model.relations.classify_examples(examples, batch_size=batch_size * 2)
    pairs = [(head, tail, result) for (head, tail), result in zip(placed, results)]
    gold = [key for i, s in enumerate(sentences) for key in gold_keys(i, s)[1]]
    scores = {tau: _macro(gold, pairs, Decision(model.negative, tau)) for tau in GRID}
    argmax = _macro(gold, pairs, Decision(model.negative))
    best = max(GRID, key=lambda tau: (scores[tau], -abs(tau - 0.5)))
    chosen = best if scores[best] > argmax else None  # a threshold only where it beats the argmax on dev
    record = {"threshold": chosen, "fitted_on": str(dev), "dev_macro_f1": round(max(scores[best], argmax), 4),
              "dev_macro_f1_argmax": round(argmax, 4),
              "grid": {str(tau): round(score, 4) for tau, score in scores.items()}}
    with atomic_open(run_dir / DECISION) as out:
        out.write(json.dumps(record, indent=2) + "\n")
    return record
