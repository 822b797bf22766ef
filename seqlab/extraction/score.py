"""Scoring entities and relations as the field does (SpERT's evaluator, Eberts & Ulges 2020; Bekoulis et al.
2018 report the same strict measure): a predicted entity is right when its span and type are a gold entity's; a
relation is right, strictly, when its type and both its entities (span and type) are a gold relation's.

For each kind the scores are per type (one type's items against the rest), micro-averaged (all types' counts
summed) and macro-averaged (the plain mean of the per-type F1 over the types in the gold or the predicted data,
as scikit-learn's ``average="macro"`` over those labels gives SpERT). Percentages throughout."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Hashable, Iterable

from seqlab.data.metrics import TypeCounts

#: An entity of sentence ``i``: (i, start, end, type), token offsets with end exclusive.
EntityKey = tuple[int, int, int, str]
#: A relation of sentence ``i``: (head entity key, tail entity key, relation type).
RelationKey = tuple[EntityKey, EntityKey, str]


@dataclass(frozen=True)
class KindScore:
    """One kind's scores (entities or relations): every type's counts, micro and macro P/R/F1."""

    per_type: dict[str, TypeCounts]

    @property
    def micro(self) -> TypeCounts:
        counts = self.per_type.values()
        return TypeCounts(sum(c.gold for c in counts), sum(c.found for c in counts), sum(c.correct for c in counts))

    def macro(self) -> tuple[float, float, float]:
        """(precision, recall, F1): the means over the types."""
        counts = list(self.per_type.values())
        if not counts:
            return 0.0, 0.0, 0.0
        return tuple(sum(getattr(c, m) for c in counts) / len(counts) for m in ("precision", "recall", "f1"))

    def to_dict(self) -> dict[str, Any]:
        micro, macro = self.micro, self.macro()
        return {"micro": {"precision": micro.precision, "recall": micro.recall, "f1": micro.f1},
                "macro": dict(zip(("precision", "recall", "f1"), macro)),
                "types": {t: {"precision": c.precision, "recall": c.recall, "f1": c.f1, "gold": c.gold,
                              "predicted": c.found, "correct": c.correct} for t, c in self.per_type.items()}}

    def table(self, title: str) -> str:
        rows = [f"{title}\n{'type':>14} {'precision':>10} {'recall':>10} {'f1':>10} {'gold':>6} {'predicted':>9}\n"]
        for name, c in self.per_type.items():
            rows.append(f"{name:>14} {c.precision:10.2f} {c.recall:10.2f} {c.f1:10.2f} {c.gold:6d} {c.found:9d}\n")
        micro, macro = self.micro, self.macro()
        rows.append(f"{'micro':>14} {micro.precision:10.2f} {micro.recall:10.2f} {micro.f1:10.2f} {micro.gold:6d} "
                    f"{micro.found:9d}\n{'macro':>14} {macro[0]:10.2f} {macro[1]:10.2f} {macro[2]:10.2f}\n")
        return "".join(rows)


def score_kind(gold: Iterable[Hashable], predicted: Iterable[Hashable]) -> KindScore:
    """The scores of predicted items against gold ones, each item a tuple whose last field is its type; an item
    listed twice counts once."""
    gold, predicted = set(gold), set(predicted)
    g, p, c = (Counter(item[-1] for item in items) for items in (gold, predicted, gold & predicted))
    return KindScore({t: TypeCounts(g[t], p[t], c[t]) for t in sorted(g.keys() | p.keys())})
