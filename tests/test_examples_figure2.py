"""examples/turian2010_figure2.py: the Figure 2 table (and plot) from the linear models' result files."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

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
    assert len(rows) == 1 + 4 + 8  # the baseline, Brown 100-3200, C&W and HLBL 25-200
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
