"""``seqlab sweep``: the grid, its checks, and a tiny real sweep writing its table and plot."""
from __future__ import annotations

import csv
import json

import pytest

from seqlab.cli import main
from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.apps.sweep import overrides, points, read_sweep, run_sweep, slug
from tests.conftest import FIXTURES

GRID = """
config: {config}
output: {output}
set: [train.epochs=1]
grid:
  arch:
    I-O: {{model.window.architecture: I-O}}
    I-W-O: {{model.window.architecture: "I-W(4)-O", train.lr: 0.01}}
  model.window.filters: [0, 2]
skip: [{{arch: I-W-O, model.window.filters: [2]}}]
plot: {{x: model.window.filters, series: arch, y: dev_f1}}
"""


@pytest.fixture
def sweep_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURES / "chunk"))
    path = tmp_path / "sweep.yaml"
    path.write_text(GRID.format(config=FIXTURES / "chunk" / "window.yaml", output=tmp_path / "out"))
    return path


def test_points_skips_and_overrides(sweep_file):
    spec = read_sweep(sweep_file)
    got = points(spec)
    assert got == [{"arch": "I-O", "model.window.filters": 0}, {"arch": "I-O", "model.window.filters": 2},
                   {"arch": "I-W-O", "model.window.filters": 0}]
    assert overrides(spec, got[2]) == ["train.epochs=1", "model.window.architecture=I-W(4)-O", "train.lr=0.01",
                                       "model.window.filters=0"]
    assert slug(got[1]) == "arch=I-O,filters=2"


@pytest.mark.parametrize("text, message", [
    ("config: a.yaml\noutput: o\ngrid: {x: [1]}\ngird: 1\n", "gird: unknown key; did you mean 'grid'"),
    ("config: a.yaml\noutput: o\n", "grid: required key is missing"),
    ("config: a.yaml\noutput: o\ngrid: {x: []}\n", "grid.x: expected a non-empty list"),
    ("config: a.yaml\noutput: o\ngrid: {x: [1]}\nplot: {x: y}\n", "plot.x: 'y' is not a grid axis"),
    ("config: a.yaml\noutput: o\ngrid: {x: [1]}\nplot: {x: x, y: f2}\n", "plot.y: expected one of"),
])
def test_bad_sweep_files_name_the_key(tmp_path, text, message):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        read_sweep(path)


def test_a_bad_override_fails_before_anything_is_trained(sweep_file, tmp_path):
    sweep_file.write_text(sweep_file.read_text().replace("train.lr: 0.01", "train.lrr: 0.01"))
    with pytest.raises(ConfigError, match="train.lrr: unknown key"):
        run_sweep(sweep_file)
    assert not (tmp_path / "out").exists()


def test_a_tiny_sweep_writes_table_csv_and_plot_and_reruns_nothing(sweep_file, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert main(["sweep", str(sweep_file)]) == 0
    out = tmp_path / "out"
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [(r["arch"], r["model.window.filters"]) for r in rows] == [("I-O", "0"), ("I-O", "2"), ("I-W-O", "0")]
    assert all(0.0 <= float(r["dev_f1"]) <= 100.0 and r["dev_score_viterbi"] for r in rows)
    assert all(r["measure"] == "F1" and r["dev_score"] == r["dev_f1"] for r in rows)
    assert (out / "results.md").read_text().startswith("| arch | model.window.filters | measure | dev_score")
    assert (out / "results.png").read_bytes()[:4] == b"\x89PNG"
    stamp = (out / "arch=I-O,filters=0" / "model.pt").stat().st_mtime_ns
    run_sweep(sweep_file)
    assert (out / "arch=I-O,filters=0" / "model.pt").stat().st_mtime_ns == stamp


@pytest.mark.parametrize("name, text, message", [
    ("metrics.json", "{\"dev\": ", r"metrics.json:1:9: not valid JSON"),
    ("metrics.json", "[" * 10_000, r"metrics.json: JSON nested deeper than 64 levels"),
    ("metrics.json", "[]", r"metrics.json: not the metrics of a finished tagger run"),
    ("sweep_row.json", "{\"wall_s\": 1}", r"sweep_row.json: not a sweep row"),
])
def test_a_corrupt_run_file_is_one_line_naming_it_and_nothing_is_trained(sweep_file, tmp_path, capsys, name, text,
                                                                         message):
    run = tmp_path / "out" / "arch=I-O,filters=0"
    run.mkdir(parents=True)
    (run / "metrics.json").write_text(json.dumps({"dev": {"accuracy": 90.0, "f1": 80.0}, "best_epoch": 1,
                                                  "epochs": 1, "history": []}))
    (run / name).write_text(text)
    with pytest.raises(SeqlabError, match=message) as err:
        run_sweep(sweep_file)
    assert "\n" not in str(err.value) and str(run / name) in str(err.value)
    assert main(["sweep", str(sweep_file)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(run / name) in lines[0]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [run.name]  # nothing trained


def test_a_crf_point_has_no_post_viterbi_column(tmp_path, monkeypatch):
    """A CRF already decodes by Viterbi: its row leaves dev_score_viterbi empty instead of failing the sweep."""
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURES / "chunk"))
    path = tmp_path / "crf.yaml"
    path.write_text(f"config: {FIXTURES / 'chunk' / 'window.yaml'}\noutput: {tmp_path / 'out'}\n"
                    "set: [train.epochs=1, model.decoder=crf]\ngrid:\n  model.window.filters: [0]\n")
    rows = run_sweep(path)
    assert len(rows) == 1 and rows[0]["dev_score_viterbi"] is None and 0.0 <= rows[0]["dev_f1"] <= 100.0


def test_a_pos_sweep_is_scored_by_token_accuracy(tmp_path, monkeypatch):
    """A token-label (POS) run has no span F1: its row gives its measure, accuracy, and leaves the F1 columns empty."""
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURES / "pos"))
    path = tmp_path / "pos.yaml"
    path.write_text(f"config: {FIXTURES / 'pos' / 'tiny.yaml'}\noutput: {tmp_path / 'out'}\n"
                    "set: [train.epochs=1]\ngrid:\n  model.hidden: [8]\nplot: {x: model.hidden, y: dev_score}\n")
    pytest.importorskip("matplotlib")
    [row] = run_sweep(path)
    assert (row["measure"], row["dev_f1"], row["test_f1"], row["test_np_f1"]) == ("accuracy", None, None, None)
    assert 0.0 <= row["dev_score"] <= 100.0 and row["dev_score"] == row["dev_acc"]
    assert row["test_score"] is not None and (tmp_path / "out" / "results.png").is_file()


def test_a_relation_sweep_is_scored_by_macro_f1(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURES / "relations"))
    path = tmp_path / "rel.yaml"
    path.write_text(f"config: {FIXTURES / 'relations' / 'tiny.yaml'}\noutput: {tmp_path / 'out'}\n"
                    "set: [train.epochs=1]\ngrid:\n  model.hidden: [6]\n")
    [row] = run_sweep(path)
    assert (row["measure"], row["dev_f1"], row["dev_score_viterbi"]) == ("macro-F1", None, None)
    assert 0.0 <= row["dev_score"] <= 100.0 and row["test_score"] is not None


def test_a_row_cached_before_the_score_record_is_read(sweep_file, tmp_path):
    run = tmp_path / "out" / "arch=I-O,filters=0"
    run.mkdir(parents=True)
    (run / "metrics.json").write_text(json.dumps({"dev": {"accuracy": 90.0, "f1": 80.0}, "best_epoch": 1,
                                                  "epochs": 1, "history": []}))
    (run / "sweep_row.json").write_text(json.dumps({"dev_f1_viterbi": 81.0, "wall_s": 2.0}))
    from seqlab.apps.sweep import _row

    row = _row(run, 0.0)
    assert (row["measure"], row["dev_score"], row["dev_f1"], row["dev_score_viterbi"]) == ("F1", 80.0, 80.0, 81.0)


SWEEPS = sorted((FIXTURES.parents[1] / "configs" / "sweeps").glob("*.yaml"))


@pytest.mark.parametrize("path", SWEEPS, ids=lambda p: p.name)
def test_shipped_sweeps_check_every_point(path, monkeypatch):
    monkeypatch.chdir(FIXTURES.parents[1])
    assert run_sweep(path, dry_run=True)
