"""seqlab.tagging.evaluate: eval's report and its prediction file agree with ``seqlab score conll`` of that file,
whatever the tokens and labels hold."""
from __future__ import annotations

from pathlib import Path

import pytest

import seqlab
from seqlab.cli import main
from seqlab.data.metrics import score_conll_file
from tests.conftest import FIXTURES, forget_new_log_handlers

NER = FIXTURES / "ner"


def test_a_conlleval_boundary_line_inside_a_sentence_is_scored_as_score_conll_scores_it(tmp_path, capsys):
    """conlleval reads a line opening with -X- as a sentence boundary, not a token; eval did count it."""
    gold = tmp_path / "gold.txt"
    gold.write_text("Peter B-PER\nBlackburn I-PER\n-X- O\nvisited O\nParis B-LOC\n", encoding="utf-8")
    out = tmp_path / "gold.pred"
    assert main(["eval", "en-ner-conll03", str(gold), "--output", str(out), "--scheme", "iob2"]) == 0
    report = capsys.readouterr().out
    assert "processed 4 tokens with 2 phrases" in report
    assert score_conll_file(out) == report.rsplit("predictions written to", 1)[0]


@pytest.fixture(scope="module")
def token_model(tmp_path_factory) -> Path:
    """A tiny token-label tagger (its labels are whole tags, no scheme): trained on the NER fixture's tags."""
    run = tmp_path_factory.mktemp("token") / "run"
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(NER))
        seqlab.train(NER / "tiny.yaml", run, overrides=("data.tag_scheme=token", "data.file_scheme=token",
                                                        "train.epochs=1", "train.threads=1"), progress=False)
    return run


def test_a_label_holding_a_space_keeps_each_prediction_line_at_three_fields(token_model, tmp_path):
    gold = tmp_path / "gold.txt"
    gold.write_text("EU\tNNP\tI-NP\tI ORG\nrejects\tVBZ\tI-VP\tO\n", encoding="utf-8")  # a TAB file: a tag "I ORG"
    out = tmp_path / "gold.pred"
    seqlab.load(token_model, "cpu").evaluate(gold, output=out)
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines() if line]
    assert [row[:2] for row in rows] == [["EU", "I ORG"], ["rejects", "O"]] and all(len(row) == 3 for row in rows)
