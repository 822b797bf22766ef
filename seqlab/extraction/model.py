"""A trained extraction model as one object: ``seqlab.load(run_dir)`` → :class:`ExtractionModel`.

    model = seqlab.load("runs/conll04_pipeline")
    doc = model.tag("John Smith lives in New York.")
    doc.spans        # [Span('John Smith', 'Peop', ...), Span('New York', 'Loc', ...)]
    doc.relations    # [SpanRelation(head=0, tail=1, label='Live_In', confidence=0.97)]

The tagger finds the spans; every ordered pair of distinct spans of one sentence goes to the relation
classifier, and the pairs it gives a label other than the negative one are the document's relations.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import torch

from seqlab.core.errors import SeqlabError
from seqlab.core.loaded import DEFAULT_BACKEND, check_kind, model_metadata
from seqlab.data.semeval import RelationExample
from seqlab.extraction.config import NER_RUN, RELATION_RUN, ExtractionConfig, load_extraction_config
from seqlab.extraction.pairs import pair_examples  # noqa: F401  (where callers found it)
from seqlab.extraction.threshold import Decision, load_decision
from seqlab.relation.api import RelationModel
from seqlab.tagging.api import SequenceTagger
from seqlab.tagging.document import Document, SpanRelation


class ExtractionModel:
    """A tagger and a relation classifier that read raw text together (module docstring), in eval mode."""

    task = "extraction"
    inputs = ("texts", "tokens")  # what :meth:`predict` takes: raw text, or pre-tokenised sentences

    def __init__(self, config: ExtractionConfig, tagger: SequenceTagger, relations: RelationModel, *,
                 backend: str = DEFAULT_BACKEND, decision: Decision | None = None) -> None:
        """``decision``: how a classified pair becomes a relation (:mod:`seqlab.extraction.threshold`; the
        run's fitted threshold, read by :meth:`load`; None: the classifier's argmax)."""
        self.config, self.tagger, self.relations, self.backend = config, tagger, relations, backend
        self.negative = config.relation.data.negative_label
        self.decision = decision or Decision(self.negative)
        self.device = tagger.device

    @classmethod
    def load(cls, run_dir: str | Path, device: torch.device | str = "auto") -> "ExtractionModel":
        """Load both halves of an extraction run (``RUN/ner`` and ``RUN/relation``)."""
        run_dir = Path(run_dir)
        for name in (NER_RUN, RELATION_RUN):
            if not (run_dir / name).is_dir():
                raise SeqlabError(f"{run_dir}: an extraction run holds the sub-runs {NER_RUN}/ and {RELATION_RUN}/; "
                                  f"{name}/ is missing (was its training finished?)")
        config = load_extraction_config(run_dir / "config.yaml")
        return cls(config, SequenceTagger.load(run_dir / NER_RUN, device),
                   RelationModel.load(run_dir / RELATION_RUN, device),
                   decision=load_decision(run_dir, config.relation.data.negative_label))

    @property
    def labels(self) -> list[str]:
        """The entity types, then the relation types (the negative label left out)."""
        return self.tagger.types + [label for label in self.relations.labels if label != self.negative]

    @property
    def labelling(self) -> Any:
        """The tagger's labelling (what ``seqlab tag`` asks of a model that writes spans)."""
        return self.tagger.labelling

    def tag(self, text: str, **options: Any) -> Document:
        """The entities of ``text`` and the relations between them (``options``: the tagger's ``scheme``)."""
        return next(self.tag_many([text], **options))

    def tag_many(self, texts: Iterable[str], *, batch_size: int = 100, **options: Any) -> Iterator[Document]:
        """:meth:`SequenceTagger.tag_many`'s documents, each with its relations; span confidences are always
        computed (a relation's confidence is the classifier's). The pairs of ``batch_size`` documents at a time
        are classified together."""
        options["confidences"] = True
        pending: list[Document] = []
        for doc in self.tagger.tag_many(texts, batch_size=batch_size, **options):
            pending.append(doc)
            if len(pending) == batch_size:
                yield from self.link_many(pending, batch_size=batch_size)
                pending = []
        yield from self.link_many(pending, batch_size=batch_size)

    def tag_tokens(self, sentences: Sequence[Sequence[str]], **options: Any) -> list[Document]:
        """Pre-tokenised sentences, one document each (its text: the tokens joined by spaces)."""
        tagged = self.tagger.tag_tokens(sentences, **options)
        return self.link_many([Document(" ".join(s.tokens), [s]) for s in tagged])

    def link(self, doc: Document, *, batch_size: int = 200) -> Document:
        """``doc`` with the relations the classifier finds between the spans of each of its sentences."""
        return self.link_many([doc], batch_size=batch_size)[0]

    def link_many(self, docs: Sequence[Document], *, batch_size: int = 200) -> list[Document]:
        """``docs``, each with the relations the classifier finds between the spans of each of its sentences;
        the pairs of all of them classified in batches of ``batch_size``."""
        placed: list[tuple[int, int, int, RelationExample]] = []  # (doc, head, tail) in doc.spans, and the pair
        for d, doc in enumerate(docs):
            first = 0
            for k, sentence in enumerate(doc.sentences):
                pairs = pair_examples(sentence, f"{d}/{k}")
                placed.extend((d, first + h, first + t, example) for h, t, example in pairs)
                first += len(sentence.spans)
        results = self.relations.classify_examples([p[3] for p in placed], batch_size=batch_size) if placed else []
        found: list[list[SpanRelation]] = [[] for _ in docs]
        for (d, h, t, _), r in zip(placed, results):
            relation = self.decision.relation(r)
            if relation is not None:
                found[d].append(SpanRelation(h, t, *relation))
        return [dataclasses.replace(doc, relations=relations) for doc, relations in zip(docs, found)]

    def evaluate(self, path: str | Path, *, batch_size: int = 100) -> Any:
        """Entity and strict relation scores on a SpERT file, end to end and with the gold entities given
        (:func:`seqlab.extraction.evaluate.evaluate`)."""
        from seqlab.extraction.evaluate import evaluate

        return evaluate(self, path, batch_size=batch_size)

    # ------------------------------------------------------------ the loaded-model protocol (seqlab.core.loaded)

    def predict(self, items: Sequence[Any], *, kind: str | None = None, **options: Any) -> list[Document]:
        """A batch of ``texts`` or ``tokens`` → documents with relations (:meth:`tag_many`, :meth:`tag_tokens`)."""
        if check_kind(self, kind) == "texts":
            return list(self.tag_many(items, **options))
        return self.tag_tokens(items, **options)

    def encode(self, result: Document) -> dict[str, Any]:
        """A document as the one JSON schema writes it, with its ``relations``."""
        return result.to_dict()

    def metadata(self) -> dict[str, Any]:
        """Task, labels, backend, device and resolved config (:func:`seqlab.core.loaded.model_metadata`)."""
        return model_metadata(self, self.device, self.config)

    def __repr__(self) -> str:
        return f"ExtractionModel({self.tagger!r}, {self.relations!r})"
