"""Relation classification with a trained model: batched inference, official scoring, raw-sentence output.

``evaluate_file`` is what ``seqlab eval RUN_DIR FILE`` prints for a relation run; ``classify_stream``
is ``seqlab classify``: label and probability per sentence, or JSONL with every probability.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, TextIO

import torch

from seqlab.core import archive
from seqlab.data.semeval import RelationExample, parse_raw_lines, read_semeval, write_answers
from seqlab.data.vocab import Vocab
from seqlab.core.errors import SeqlabError
from seqlab.models.relation import RelationClassifier
from seqlab.relation.build import RelationData, batches, build_model, encode, model_inputs
from seqlab.relation.config import RelationConfig, load_relation_config
from seqlab.relation.score import SemEvalResult, score_answers


@dataclass
class RelationRun:
    """A trained relation classifier loaded from its run directory (model in eval mode)."""

    config: RelationConfig
    vocabs: dict[str, Vocab]
    model: RelationClassifier

    @property
    def labels(self) -> list[str]:
        return self.vocabs["labels"].itos


def load_relation_run(run_dir: str | Path, device: torch.device | str = "cpu") -> RelationRun:
    """Load config, vocabularies and best weights (``weights_only``) of a relation run."""
    run_dir = Path(run_dir)
    if not (run_dir / archive.CONFIG).is_file():
        raise SeqlabError(f"{run_dir}: not a seqlab run directory (no {archive.CONFIG}); "
                          f"pass the --output folder of a training run")
    config = load_relation_config(run_dir / archive.CONFIG)
    vocabs = archive.load_vocabs(run_dir)
    model = build_model(config, vocabs)
    try:
        model.load_state_dict(archive.load_weights(run_dir, device))
    except RuntimeError as err:
        raise SeqlabError(f"{run_dir / archive.WEIGHTS}: weights do not fit the model its config describes: "
                          f"{str(err).splitlines()[0]}") from None
    model.to(device).eval()
    return RelationRun(config, vocabs, model)


@torch.no_grad()
def predict_probabilities(model: RelationClassifier, data: RelationData, *, batch_size: int = 200,
                          device: torch.device | str = "cpu") -> torch.Tensor:
    """Label probabilities for every row of ``data`` (shape: (N, C)), in eval mode."""
    was_training = model.training
    model.eval()
    out = torch.empty(len(data), model.head.linear.out_features)
    for rows, batch in batches(data, batch_size):
        out[rows] = model.probabilities(batch.to(device)).cpu()
    model.train(was_training)
    return out


def evaluate_examples(model: RelationClassifier, examples: list[RelationExample], data: RelationData,
                      labels: list[str], *, batch_size: int = 200, device: torch.device | str = "cpu",
                      answers: Path | None = None) -> SemEvalResult:
    """Predict, optionally write an answer file, and score with the official measure."""
    probs = predict_probabilities(model, data, batch_size=batch_size, device=device)
    predicted = [labels[i] for i in probs.argmax(dim=-1).tolist()]
    if answers is not None:
        write_answers(answers, data.ids, predicted)
    key = {e.id: e.label for e in examples if e.label}
    if len(key) != len(examples):
        raise SeqlabError("cannot score: some sentences have no gold label")
    return score_answers(dict(zip(data.ids, predicted)), key)


def evaluate_file(run_dir: str | Path, path: str | Path, *, output: str | Path | None = None,
                  batch_size: int = 200) -> str:
    """``seqlab eval`` for a relation run: the official scorer's report on a labelled SemEval file."""
    run = load_relation_run(run_dir)
    examples = model_inputs(read_semeval(path), run.config.model)
    if any(e.label is None for e in examples):
        raise SeqlabError(f"{path}: has sentences without labels; seqlab eval needs a labelled file "
                          f"(e.g. TEST_FILE_FULL.TXT), seqlab classify labels unlabelled ones")
    answers = Path(output) if output else Path(run_dir) / "eval" / f"{Path(path).name}.answers.txt"
    result = evaluate_examples(run.model, examples, encode(examples, run.vocabs), run.labels, batch_size=batch_size,
                               answers=answers)
    return result.report + f"answers written to {answers}\n"


def classify_stream(run_dir: str | Path, lines: Iterable[str], out: TextIO, *, fmt: str = "tsv",
                    batch_size: int = 200, source: str = "<stdin>") -> int:
    """Classify marked sentences (one per line), streaming in batches; returns the number classified."""
    run = load_relation_run(run_dir)
    examples = parse_raw_lines(lines, source)
    count = 0
    while chunk := model_inputs(list(itertools.islice(examples, batch_size)), run.config.model):
        probs = predict_probabilities(run.model, encode(chunk, run.vocabs), batch_size=batch_size)
        for example, row in zip(chunk, probs.tolist()):
            best = max(range(len(row)), key=row.__getitem__)
            if fmt == "jsonl":
                out.write(json.dumps({"id": example.id, "label": run.labels[best], "probability": round(row[best], 6),
                                      "e1": example.e1_text, "e2": example.e2_text,
                                      "probabilities": {l: round(p, 6) for l, p in zip(run.labels, row)}}) + "\n")
            else:
                out.write(f"{example.id}\t{run.labels[best]}\t{row[best]:.4f}\n")
        count += len(chunk)
    return count
