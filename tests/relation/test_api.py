"""A relation model trained on JSON lines with labels of their own: load, classify, evaluate, ``seqlab eval``."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

import seqlab
from seqlab.core.scores import split_score
from seqlab.cli import main
from seqlab.core.errors import SeqlabError
from seqlab.relation.label_score import LabelResult
from tests.conftest import FIXTURES, forget_new_log_handlers

RELATIONS = FIXTURES / "relations"
LABELS = ["born_in", "none", "works_for"]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("relation_jsonl") / "run"
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(RELATIONS))
        seqlab.train(RELATIONS / "tiny.yaml", out, progress=False)
    return out


def test_training_scores_dev_and_test_by_macro_f1_over_the_data_labels(run):
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["measure"] == "macro-F1"
    for split in ("dev", "test"):
        assert metrics[split]["negative_label"] == "none" and "official_macro_f1" not in metrics[split]
        assert set(metrics[split]["relations"]) <= set(LABELS) and 0 <= metrics[split]["macro_f1"] <= 100
    assert (run / "test.report.txt").read_text().startswith("processed 6 relations;")
    assert len((run / "test.answers.txt").read_text().splitlines()) == 6


def test_the_loaded_model_classifies_marked_sentences_and_json_lines_with_its_labels(run):
    model = seqlab.load(run, "cpu")
    assert isinstance(model, seqlab.RelationModel) and model.labels == LABELS
    marked = model.classify("<e1>Ann Lee</e1> works for <e2>Globex</e2> in Denver.")
    line = model.classify('{"text": "Ann Lee works for Globex in Denver.", "h": {"pos": [0, 7]}, '
                          '"t": {"pos": [18, 24]}}')
    assert (marked.e1, marked.e2) == (line.e1, line.e2) == ("Ann Lee", "Globex")
    assert marked.label == line.label in LABELS and marked.confidence == pytest.approx(line.confidence)
    assert set(marked.probabilities) == set(LABELS) and sum(marked.probabilities.values()) == pytest.approx(1.0)


def test_evaluate_gives_what_training_wrote_for_the_test_file(run, tmp_path):
    model = seqlab.load(run, "cpu")
    result = model.evaluate(RELATIONS / "test.jsonl", answers=tmp_path / "answers.txt")
    assert isinstance(result, LabelResult) and result.negative_label == "none"
    recorded = split_score(json.loads((run / "metrics.json").read_text()), "test")
    assert result.to_dict() == recorded.report and (recorded.score, recorded.measure) == (result.score, "macro-F1")
    assert (tmp_path / "answers.txt").read_text() == (run / "test.answers.txt").read_text()
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text('{"text": "Ann lives in Oslo.", "h": {"pos": [0, 3]}, "t": {"pos": [13, 17]}, '
                       '"relation": "lives_in"}\n')
    with pytest.raises(SeqlabError, match="example 1 is labelled 'lives_in', which is not a label of the training"):
        model.evaluate(unknown)


def test_seqlab_eval_prints_the_label_report(run, tmp_path):
    out = io.StringIO()
    with forget_new_log_handlers(), contextlib.redirect_stdout(out):
        code = main(["eval", str(run), str(RELATIONS / "test.jsonl"), "--output", str(tmp_path / "a.txt")])
    assert code == 0
    assert "macro-averaged over 2 labels (excluding 'none')" in out.getvalue()
    assert (tmp_path / "a.txt").read_text() == (run / "test.answers.txt").read_text()
