"""examples/turian2010_figure2.py: the Figure 2 table (and plot) from the linear models' result files."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from examples import turian2010_figure2 as figure

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "turian2010_figure2.py"


def _runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    (runs / "ner_linear").mkdir(parents=True)
    (runs / "ner_linear" / "base.crfsuite.json").write_text(json.dumps({"dev_f1": 89.5, "test_f1": 83.25}))
    (runs / "ner_linear" / "brown1000_wiki.crfsuite.json").write_text(json.dumps({"dev_f1": 91.0, "test_f1": 85.75}))
    (runs / "crfsuite_chunker_brown320_wiki").mkdir()
    (runs / "crfsuite_chunker_brown320_wiki" / "model.crfsuite.json").write_text(
        json.dumps({"test_f1": 93.9, "tuning": {"dev_f1": {"0.03": 94.5, "0.1": 94.25}}}))
    return runs


def test_the_table_has_a_row_per_setting_with_what_exists(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--runs", str(_runs(tmp_path))], capture_output=True,
                          text=True, check=True)
    rows = {tuple(cell.strip() for cell in line.split("|")[1:3]): [c.strip() for c in line.split("|")[3:7]]
            for line in done.stdout.splitlines()[2:]}
    assert len(rows) == 1 + 5 + 8  # the baseline, Brown 100-10,000, C&W and HLBL 25-200
    assert rows[("none (baseline)", "")] == ["—", "—", "89.50", "83.25"]
    assert rows[("Brown", "1000")] == ["—", "—", "91.00", "85.75"]
    assert rows[("Brown", "320")] == ["94.50", "93.90", "—", "—"]  # the dev F1 at the chosen c2
    assert rows[("HLBL", "200")] == ["—"] * 4


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="the plot needs the plots extra (matplotlib)")
def test_the_plot_is_written(tmp_path):
    png = tmp_path / "out" / "figure2.png"
    subprocess.run([sys.executable, str(SCRIPT), "--runs", str(_runs(tmp_path)), "--png", str(png)], check=True,
                   capture_output=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_damaged_result_file_is_named_in_one_line(tmp_path):
    runs = _runs(tmp_path)
    (runs / "ner_linear" / "cw50_wiki.crfsuite.json").write_text("{not json")
    done = subprocess.run([sys.executable, str(SCRIPT), "--runs", str(runs)], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().startswith(f"turian2010_figure2: {runs / 'ner_linear' / 'cw50_wiki.crfsuite.json'}: not a results")
    assert "Traceback" not in done.stderr


def _table(stdout: str) -> dict[tuple[str, str], list[str]]:
    return {tuple(cell.strip() for cell in line.split("|")[1:3]): [c.strip() for c in line.split("|")[3:7]]
            for line in stdout.splitlines()[2:] if line.startswith("|")}


def test_recorded_figures_fill_what_the_runs_lack_and_are_marked(tmp_path):
    runs = _runs(tmp_path)
    recorded = tmp_path / "recorded.json"
    recorded.write_text(json.dumps({"baseline": {"chunk_test": 93.74, "ner_dev": 99.0},
                                    "hlbl50_wiki": {"chunk_test": 94.01}}))
    done = subprocess.run([sys.executable, str(SCRIPT), "--runs", str(runs), "--recorded", str(recorded)],
                          capture_output=True, text=True, check=True)
    rows = _table(done.stdout)
    assert rows[("none (baseline)", "")] == ["—", "93.74*", "89.50", "83.25"]  # the run's NER dev wins over 99.0
    assert rows[("HLBL", "50")] == ["—", "94.01*", "—", "—"]
    assert "* from the recorded file" in done.stdout
    assert json.loads(recorded.read_text())["baseline"]["ner_dev"] == 99.0  # read only, without --record


def test_record_keeps_every_figure_at_the_runs_precision(tmp_path):
    runs = _runs(tmp_path)
    recorded = tmp_path / "docs" / "recorded.json"  # a first --record creates it
    subprocess.run([sys.executable, str(SCRIPT), "--runs", str(runs), "--recorded", str(recorded), "--record"],
                   capture_output=True, text=True, check=True)
    kept = json.loads(recorded.read_text())
    assert kept == {"baseline": {"ner_dev": 89.5, "ner_test": 83.25},
                    "brown320_wiki": {"chunk_dev": 94.5, "chunk_test": 93.9},
                    "brown1000_wiki": {"ner_dev": 91.0, "ner_test": 85.75}}
    empty = tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run([sys.executable, str(SCRIPT), "--runs", str(empty), "--recorded", str(recorded)],
                          capture_output=True, text=True, check=True)  # the run directories are gone
    assert _table(done.stdout)[("Brown", "1000")] == ["—", "—", "91.00*", "85.75*"]


@pytest.mark.parametrize("content, expected", [
    ('{"brown1000": {"ner_dev": 91.0}}', "unknown setting 'brown1000'"),
    ('{"brown1000_wiki": {"ner_f1": 91.0}}', "brown1000_wiki: expected an object of F1 numbers"),
    ('{"brown1000_wiki": {"ner_dev": "91"}}', "brown1000_wiki: expected an object of F1 numbers"),
    ("[1, 2]", "expected an object of settings, found list"),
    ("{oops", "not a recorded-results file"),
])
def test_a_bad_recorded_file_is_named_in_one_line(tmp_path, content, expected):
    recorded = tmp_path / "recorded.json"
    recorded.write_text(content)
    done = subprocess.run([sys.executable, str(SCRIPT), "--runs", str(_runs(tmp_path)), "--recorded", str(recorded)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"turian2010_figure2: {recorded}: ") and expected in done.stderr


def test_the_repository_s_recorded_figures_are_well_formed():
    kept = figure.load_recorded(SCRIPT.parents[1] / "docs" / "turian2010" / "recorded.json")
    assert kept["baseline"]["chunk_test"] == pytest.approx(93.74, abs=0.005)


def test_a_recorded_file_that_cannot_be_written_is_named_in_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    recorded = blocker / "recorded.json"  # its folder is a file
    done = subprocess.run([sys.executable, str(SCRIPT), "--runs", str(_runs(tmp_path)), "--recorded", str(recorded),
                           "--record"], capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"turian2010_figure2: {recorded}: cannot write the recorded figures")
