"""benchmarks/language_peers.py's rounds, with sides that are tiny processes: every side runs on every input in
each round, the floors run once a round, and the ratios are the peer's CPU over seqlab's and over seqlab's floor."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks import language_peers
from benchmarks.language_peers import floors, run_rounds


@pytest.fixture
def inputs(monkeypatch, tmp_path: Path) -> dict[str, Path]:
    """The three inputs of a round, each one line, with every peer taken as loadable."""
    monkeypatch.setattr(language_peers, "loads", lambda name: None)
    made = {kind: tmp_path / f"{kind}.txt" for kind in ("test", "one", "repeated")}
    for path in made.values():
        path.write_text("x\n", encoding="utf-8")
    return made


def test_floors_are_python_torch_the_language_rules_and_both():
    argv = floors("fr")
    assert list(argv) == ["python", "import_torch", "tokenizer_rules", "import_torch_and_tokenizer_rules"]
    assert "spacy.blank('fr')" in argv["tokenizer_rules"][-1] and "import torch" in argv["import_torch"][-1]


def test_rounds_time_each_side_on_each_input_and_the_floors_once_a_round(inputs, tmp_path: Path):

    def side(source: Path, out: str) -> dict:
        """A process whose CPU grows with its input: the repeated text costs more than one sentence."""
        Path(out).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
        work = 4_000_000 if source.name == "repeated.txt" else 1
        return language_peers.timed([sys.executable, "-c", f"sum(range({work}))"])

    quick = {"python": [sys.executable, "-c", "pass"], "floor": [sys.executable, "-c", "pass"]}
    result = run_rounds({"seqlab": side, "peer": side}, inputs, 2, tmp_path, lambda out: {"read": True},
                        quick, "floor")
    assert {kind: len(runs) for kind, runs in result["runs"]["peer"].items()} == {"test": 2, "one": 2,
                                                                                  "repeated": 2}
    assert set(result["floor_cpu_s"]) == {"python", "floor"} and result["seqlab_floor"] == "floor"
    assert result["accuracy"] == {"seqlab": {"read": True}, "peer": {"read": True}}
    peer = [run["cpu_s"] for run in result["runs"]["peer"]["test"]]
    ours = [run["cpu_s"] for run in result["runs"]["seqlab"]["test"]]
    assert result["cpu_ratio_to_seqlab"]["peer"] == language_peers.spread([p / b for p, b in zip(peer, ours)])
    floor = [run["cpu_s"] for run in result["floor_runs"]["floor"]]
    assert result["peer_cpu_over_floor"]["peer"] == language_peers.spread([p / f for p, f in zip(peer, floor)])


def test_a_side_that_fails_stops_the_benchmark_with_its_last_line():
    with pytest.raises(RuntimeError, match="boom"):
        language_peers.timed([sys.executable, "-c", "import sys; sys.exit('boom')"])


def test_without_a_seqlab_side_the_peers_are_set_against_the_floor_alone(inputs, tmp_path: Path):

    def peer(source: Path, out: str) -> dict:
        Path(out).write_text("x\n", encoding="utf-8")
        return language_peers.timed([sys.executable, "-c", "pass"])

    result = run_rounds({"peer": peer}, inputs, 1, tmp_path, lambda out: {}, {"floor": [sys.executable, "-c", "pass"]},
                        "floor")
    assert "cpu_ratio_to_seqlab" not in result and set(result["peer_cpu_over_floor"]) == {"peer"}


def test_the_command_needs_a_model_or_floors_only(capsys):
    with pytest.raises(SystemExit):
        language_peers.main(["fr_upos"])
    assert "--floors-only" in capsys.readouterr().err
