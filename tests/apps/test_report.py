"""A run's training report: span errors by kind, the tag confusion, and report.html for tagger and relation runs."""
from __future__ import annotations

import re

import pytest

import seqlab
from seqlab.apps import report
from seqlab.apps.report import NONE, REPORT, read_token_predictions, report_html, span_errors, tag_confusion
from seqlab.cli import main
from seqlab.core.errors import DataFormatError, SeqlabError
from tests.conftest import FIXTURES, forget_new_log_handlers


@pytest.mark.parametrize("gold, pred, kind, cell", [
    (["B-PER", "I-PER", "O"], ["B-PER", "I-PER", "O"], "correct", ("PER", "PER")),
    (["B-PER", "I-PER", "O"], ["B-ORG", "I-ORG", "O"], "wrong type", ("PER", "ORG")),
    (["B-PER", "I-PER", "O"], ["B-PER", "O", "O"], "wrong boundary", None),
    (["B-PER", "I-PER", "O"], ["O", "O", "O"], "missed", ("PER", NONE)),
    (["O", "O", "O"], ["O", "O", "B-LOC"], "spurious", (NONE, "LOC")),
])
def test_each_span_error_is_counted_once_under_its_kind(gold, pred, kind, cell):
    errors = span_errors([gold], [pred])
    assert sum(sum(c.values()) for c in errors.kinds.values()) == 1
    assert [k for c in errors.kinds.values() for k in c] == [kind]
    assert dict(errors.matrix) == ({cell: 1} if cell else {})


def test_the_tag_confusion_counts_tokens():
    assert tag_confusion([["NOUN", "VERB", "NOUN"]], [["NOUN", "NOUN", "NOUN"]]) == {
        ("NOUN", "NOUN"): 2, ("VERB", "NOUN"): 1}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(FIXTURES / "ner"))
        seqlab.train(FIXTURES / "ner" / "tiny.yaml", out / "tagger", overrides=("train.threads=1", "train.epochs=2"),
                     progress=False)
        mp.setenv("SEQLAB_DATA", str(FIXTURES / "semeval"))
        seqlab.train(FIXTURES / "semeval" / "tiny.yaml", out / "relation", progress=False)
        mp.setenv("SEQLAB_DATA", str(FIXTURES / "pos"))
        seqlab.train(FIXTURES / "pos" / "tiny.yaml", out / "pos", overrides=("train.epochs=1",), progress=False)
    return out


def _images(page: str) -> list[str]:
    return re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,', page)


def test_training_writes_a_self_contained_report(runs, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURES / "ner"))
    page = (runs / "tagger" / REPORT).read_text(encoding="utf-8")
    assert _images(page) == ["dev score per epoch", "dev precision, recall and F1 per type",
                             "test precision, recall and F1 per type", "confusion matrix of types",
                             "reliability diagram"]
    assert "wrong boundary" in page and "<th>spurious</th>" in page
    assert not re.search(r"(src|href)=\"(?!data:)", page)


def test_a_relation_report_shows_the_relations_and_the_official_confusion_matrix(runs):
    pytest.importorskip("matplotlib")
    page = report_html(runs / "relation")
    assert "dev precision, recall and F1 per relation" in _images(page)
    assert "Confusion matrix:" in page and "Cause-Effect" in page


def test_a_pos_report_shows_the_tags_and_their_confusion(runs):
    pytest.importorskip("matplotlib")
    page = (runs / "pos" / REPORT).read_text(encoding="utf-8")
    assert _images(page) == ["dev score per epoch", "dev precision, recall and F1 per tag",
                             "test precision, recall and F1 per tag", "tag confusion matrix"]
    assert "<th>gold \\ predicted</th>" in page and "<td>NOUN</td>" in page


def test_a_token_prediction_line_without_three_columns_names_its_line(tmp_path):
    path = tmp_path / "dev.predictions.txt"
    path.write_text("The DET DET\ncat NOUN NOUN\n\nsat VERB\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"dev.predictions.txt:4: expected 3 columns \(token, gold, predicted\), "
                                              r"got 2$"):
        read_token_predictions(path)
    path.write_text("The DET DET\ncat NOUN VERB\n\n\nsat VERB VERB\n", encoding="utf-8")
    assert read_token_predictions(path) == ([["DET", "NOUN"], ["VERB"]], [["DET", "VERB"], ["VERB"]])


def test_without_matplotlib_the_report_says_where_the_plots_would_be(runs, monkeypatch):
    monkeypatch.setattr(report.plots, "have_matplotlib", lambda: False)
    page = report_html(runs / "relation")
    assert not _images(page) and "no plot, matplotlib is not installed (pip install 'seqlab[plots]'" in page


def test_seqlab_report_writes_the_page_and_refuses_what_is_no_run(runs, tmp_path, capsys):
    (runs / "relation" / REPORT).unlink()
    assert main(["report", str(runs / "relation")]) == 0
    assert (runs / "relation" / REPORT).is_file()
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "missing: not a directory; expected a training run's directory" in capsys.readouterr().err
    with pytest.raises(SeqlabError, match="no metrics.json; a report needs a finished training run"):
        report_html(tmp_path)


def test_several_runs_are_reported_side_by_side(runs, tmp_path, capsys):
    output = tmp_path / "both.html"
    assert main(["report", str(runs / "tagger"), str(runs / "pos"), "--output", str(output)]) == 0
    page = output.read_text(encoding="utf-8")
    assert page.count('<td class="side"><h2>Training</h2>') == 2 and "Span errors on dev" in page
    assert "Tag confusion on dev" in page
    assert main(["report", str(runs / "tagger"), str(runs / "pos")]) == 2
    assert "say where with --output FILE.html" in capsys.readouterr().err


def test_an_epoch_without_a_dev_score_is_a_gap_not_an_error(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "metrics.json").write_text('{"best_epoch": 2, "measure": "F1", "history": [{"epoch": 1, "loss": 2.0}, '
                                           '{"epoch": 2, "loss": 1.5, "dev_score": 50.0}], "dev": {"per_type": {}}}')
    page = report_html(tmp_path)
    assert _images(page)[0] == "dev score per epoch" and "<td>1</td><td>2.00</td><td></td>" in page
    assert page.startswith('<!DOCTYPE html>\n<html lang="en"><head>')  # seqlab's words, in any model's language


def test_without_its_dev_file_the_report_says_why_there_is_no_reliability_diagram(runs, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "no data here"))
    page = report_html(runs / "tagger")
    assert "No reliability diagram: " in page and "reliability diagram" not in _images(page)
