"""``seqlab eval`` of an extraction model on a SpERT file: entity F1, and strict relation F1 (micro and macro
over the relation types) end to end and with the gold entities given, so the two halves' errors show apart
(:mod:`seqlab.extraction.score` for the measures)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Protocol, Sequence

from seqlab.data.formats.registry import located
from seqlab.data.formats.spert import SpertSentence, entity_pairs, read_spert
from seqlab.extraction.score import EntityKey, KindScore, RelationKey, score_kind
from seqlab.tagging.document import Document


class Extractor(Protocol):
    """What scoring asks of an extraction model (:class:`seqlab.extraction.model.ExtractionModel`): documents
    with relations from tokens, its relation classifier, and the label of no relation."""

    relations: Any
    negative: str
    decision: Any  # seqlab.extraction.threshold.Decision: how a classified pair becomes a relation

    def tag_tokens(self, tokens: Sequence[Sequence[str]], **options: Any) -> list[Document]: ...


@dataclass(frozen=True)
class ExtractionResult:
    """Entities, relations end to end, and relations between the gold entities; ``score`` is the strict
    relation macro-F1 end to end."""

    entities: KindScore
    relations: KindScore
    gold_entity_relations: KindScore
    measure = "strict relation macro-F1"

    @property
    def score(self) -> float:
        return self.relations.macro()[2]

    def to_dict(self) -> dict[str, Any]:
        return {"entities": self.entities.to_dict(), "relations": self.relations.to_dict(),
                "relations_given_gold_entities": self.gold_entity_relations.to_dict(), "score": self.score,
                "measure": self.measure}

    @property
    def report(self) -> str:
        return (self.entities.table("entities (span and type right)")
                + "\n" + self.relations.table("relations, strict (type, and both entities' spans and types right)")
                + "\n" + self.gold_entity_relations.table("relations between the gold entities"))


def _entities(i: int, doc: Document) -> list[EntityKey]:
    return [(i, s.token_start, s.token_end, s.label) for s in doc.spans]


def _relations(i: int, doc: Document) -> Iterator[RelationKey]:
    keys = _entities(i, doc)
    return ((keys[r.head], keys[r.tail], r.label) for r in doc.relations)


def gold_keys(i: int, sentence: SpertSentence) -> tuple[list[EntityKey], list[RelationKey]]:
    """The gold entities and relations of sentence ``i`` as scored items."""
    entities = [(i, e.start, e.end, e.type) for e in sentence.entities]
    return entities, [(entities[r.head], entities[r.tail], r.type) for r in sentence.relations]


def _given_gold(model: Extractor, sentences: Sequence[SpertSentence], batch_size: int) -> list[RelationKey]:
    """The relations the classifier finds between the gold entities of every sentence, all pairs classified
    together."""
    placed = [(entities, pair) for i, s in enumerate(sentences) for entities in (gold_keys(i, s)[0],)
              for pair in entity_pairs(s)]
    found = model.relations.classify_examples([pair.example() for _, pair in placed], batch_size=batch_size * 2)
    decided = [(entities, pair, model.decision.relation(r)) for (entities, pair), r in zip(placed, found)]
    return [(entities[p.head], entities[p.tail], relation[0]) for entities, p, relation in decided
            if relation is not None]


def evaluate(model: Extractor, path: str | Path, *, batch_size: int = 100) -> ExtractionResult:
    """Score ``model`` on the SpERT file ``path`` (module docstring; a relative path not found here is looked for
    under the data folder, as config paths are)."""
    sentences = read_spert(located(path))
    docs = model.tag_tokens([list(s.tokens) for s in sentences], batch_size=batch_size)
    gold = [gold_keys(i, s) for i, s in enumerate(sentences)]
    given = _given_gold(model, sentences, batch_size)
    return ExtractionResult(
        score_kind((k for g in gold for k in g[0]), (k for i, d in enumerate(docs) for k in _entities(i, d))),
        score_kind((k for g in gold for k in g[1]), (k for i, d in enumerate(docs) for k in _relations(i, d))),
        score_kind((k for g in gold for k in g[1]), given))
