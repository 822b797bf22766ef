"""A trained relation classifier as one object: ``seqlab.load(run_dir)`` → :class:`RelationModel`.

    rel = seqlab.load("runs/semeval10_ea")
    rel.classify("The <e1>fire</e1> was caused by <e2>smoke</e2>.")   # Relation(label='Cause-Effect(e2,e1)', ...)
    rel.classify('{"text": "Ann works for Acme.", "h": {"pos": [0, 3]}, "t": {"pos": [14, 18]}}')  # a JSON line
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import torch

from seqlab.core import rundir
from seqlab.core.calibration import check_temperature, stored_temperature
from seqlab.core.device import resolve_device
from seqlab.core.errors import SeqlabError
from seqlab.core.loaded import DEFAULT_BACKEND, check_kind, model_metadata
from seqlab.core.schema import encode_relation
from seqlab.data.relations import check_labels, parse_input_lines, read_relations, relation_format
from seqlab.data.semeval import RelationExample
from seqlab.data.vocab import Vocab, load_vocabs
from seqlab.models.relation import RelationClassifier
from seqlab.relation.build import build_model, encode, model_inputs
from seqlab.relation.config import RelationConfig, load_relation_config
from seqlab.relation.predict import evaluate_examples, predict_probabilities
from seqlab.relation.label_score import RelationResult, relation_scorer
from seqlab.modules.transformer import recorded_encoder


@dataclass(frozen=True)
class Relation:
    """The relation between a sentence's two marked nominals (head ``e1``, tail ``e2``): the most probable
    label, its probability, every label's probability, and the nominals as written."""

    id: str
    label: str
    confidence: float
    e1: str
    e2: str
    probabilities: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        """The relation as JSON-ready data (:mod:`seqlab.core.schema`): id, label, confidence, e1, e2,
        probabilities."""
        return encode_relation(self)


class RelationModel:
    """A trained relation classifier (entity-aware attention BiLSTM, Lee et al. 2019), in eval mode."""

    task = "relation"
    inputs = ("sentences",)  # what :meth:`predict` takes: sentences with marked nominals, or relation JSON lines

    def __init__(self, config: RelationConfig, vocabs: dict[str, Vocab], model: RelationClassifier, *,
                 backend: str = DEFAULT_BACKEND, temperature: float = 1.0) -> None:
        """``temperature``: the confidences' calibration (:mod:`seqlab.relation.calibration`; a run's
        calibration.json, read by :meth:`load`)."""
        self.config, self.vocabs, self.model, self.backend = config, vocabs, model, backend
        self.temperature = check_temperature(temperature, "temperature")
        self.device = next(model.parameters()).device

    @classmethod
    def load(cls, run_dir: str | Path, device: torch.device | str = "auto") -> "RelationModel":
        """Load config, vocabularies and best weights (``weights_only``) of a relation run."""
        run_dir = Path(run_dir)
        device = resolve_device(device, key="device") if isinstance(device, str) else device
        if not (run_dir / rundir.CONFIG).is_file():
            raise SeqlabError(f"{run_dir}: not a seqlab run directory (no {rundir.CONFIG}); "
                              f"pass the --output folder of a training run")
        config = load_relation_config(run_dir / rundir.CONFIG)
        vocabs = load_vocabs(run_dir / rundir.VOCABS)
        model = build_model(config, vocabs, encoder=recorded_encoder(run_dir))
        rundir.load_state(model, rundir.load_weights(run_dir, device), run_dir / rundir.WEIGHTS)
        return cls(config, vocabs, model.to(device).eval(), temperature=stored_temperature(run_dir))

    @property
    def labels(self) -> list[str]:
        """The labels the model tells apart: SemEval's 19 directed ones, or those of its JSONL training data."""
        return self.vocabs["labels"].itos

    def classify(self, sentence: str) -> Relation:
        """Classify one sentence whose nominals are marked ``<e1>…</e1>`` and ``<e2>…</e2>``, or given as a
        relation JSON line (``{"text": ..., "h": {"pos": ...}, "t": {"pos": ...}}``, :mod:`seqlab.data.relations`)."""
        return next(self.classify_many([sentence]))

    def classify_many(self, lines: Iterable[str], *, batch_size: int = 200, source: str = "<input>"
                      ) -> Iterator[Relation]:
        """Classify marked sentences, one per line (``ID<TAB>"sentence"``, the sentence alone, or a relation JSON
        line), as a stream of ``batch_size`` at a time; a malformed line is an error naming ``source`` and its line."""
        examples = parse_input_lines(lines, source)
        while chunk := model_inputs(list(itertools.islice(examples, batch_size)), self.config.model):
            yield from self._classify(chunk, batch_size)

    def classify_examples(self, examples: Sequence[RelationExample], *, batch_size: int = 200) -> list[Relation]:
        """Classify examples already read (an extraction model's entity pairs), with the entity tags as tokens
        when the model was trained with them."""
        return list(self._classify(model_inputs(examples, self.config.model), batch_size)) if examples else []

    def _classify(self, examples: list[RelationExample], batch_size: int) -> Iterator[Relation]:
        probs = predict_probabilities(self.model, encode(examples, self.vocabs), batch_size=batch_size,
                                      device=self.device, temperature=self.temperature)
        for example, row in zip(examples, probs.tolist()):
            best = max(range(len(row)), key=row.__getitem__)
            yield Relation(example.id, self.labels[best], row[best], example.e1_text, example.e2_text,
                           dict(zip(self.labels, row)))

    def evaluate(self, path: str | Path, *, answers: str | Path | None = None, batch_size: int = 200,
                 format: str = "auto") -> RelationResult:
        """Score the model on a labelled file; with ``answers``, the ``id<TAB>label`` answer file is written there.

        A SemEval-2010 Task 8 file (e.g. TEST_FILE_FULL.TXT) gets the official score (``result.official_f1``), a
        relation JSONL file the macro-F1 over its labels, leaving out the config's ``data.negative_label``
        (``result.macro_f1``); ``format`` (``semeval``, ``jsonl``, or ``auto``: by the file) says which the file
        is. ``result.score`` is the figure either way, ``result.report`` the report ``seqlab eval`` prints."""
        fmt = relation_format(path, format)
        examples = model_inputs(read_relations(path, fmt), self.config.model)
        if any(e.label is None for e in examples):
            raise SeqlabError(f"{path}: has sentences without labels; evaluation needs a labelled file "
                              f"(e.g. TEST_FILE_FULL.TXT); classify labels unlabelled ones")
        check_labels(examples, self.labels, str(path))
        return evaluate_examples(self.model, encode(examples, self.vocabs), self.labels,
                                 batch_size=batch_size, device=self.device,
                                 answers=Path(answers) if answers else None,
                                 score=relation_scorer(fmt, self.config.data.negative_label))

    # ------------------------------------------------------------ the loaded-model protocol (seqlab.core.loaded)

    def predict(self, items: Sequence[str], *, kind: str | None = None, **options: Any) -> list[Relation]:
        """A batch of ``sentences`` with marked nominals → relations (:meth:`classify_many`, whose ``options``
        these are)."""
        check_kind(self, kind)
        return list(self.classify_many(items, **options))

    def encode(self, result: Relation) -> dict[str, Any]:
        """A relation as the one JSON schema writes it (:mod:`seqlab.core.schema`)."""
        return result.to_dict()

    def metadata(self) -> dict[str, Any]:
        """Task, labels, backend, device and resolved config (:func:`seqlab.core.loaded.model_metadata`)."""
        return model_metadata(self, self.device, self.config)

    def __repr__(self) -> str:
        return f"RelationModel({len(self.labels)} labels, device={self.device})"
