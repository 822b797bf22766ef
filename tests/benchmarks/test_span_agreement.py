"""benchmarks/span_agreement.py on tiny prediction files: the per-pair gold-span counts, the F1 of one system
against another, the teacher's lead taken over, and a clear refusal of files of different gold."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.span_agreement import main

GOLD = ["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG"]


def write(folder: Path, name: str, pred: list[str], gold: list[str] = GOLD) -> Path:
    path = folder / f"{name}.txt"
    rows = [f"w{i} {g} {p}" for i, (g, p) in enumerate(zip(gold, pred))]
    path.write_text("\n".join(rows[:3]) + "\n\n" + "\n".join(rows[3:]) + "\n", encoding="utf-8")
    return path


def run(tmp_path: Path, systems: dict[str, list[str]], *extra: str) -> dict:
    out = tmp_path / "out.json"
    args = [arg for name, pred in systems.items() for arg in ("--system", f"{name}={write(tmp_path, name, pred)}")]
    main([*args, *extra, "--out", str(out)])
    return json.loads(out.read_text(encoding="utf-8"))


def test_pair_counts_and_transfer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run(tmp_path, {
        "teacher": ["B-PER", "I-PER", "O", "B-LOC", "O", "O"],        # PER, LOC right; ORG missed
        "baseline": ["B-PER", "O", "O", "B-LOC", "O", "B-ORG"],       # LOC, ORG right; PER cut short
        "student": ["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG"],    # all three
    }, "--teacher", "teacher", "--baseline", "baseline")
    capsys.readouterr()
    assert result["gold_spans"] == 3
    assert result["systems"]["student"]["f1"] == 100.0
    pair = next(row for row in result["agreement"] if row["pair"] == ["teacher", "baseline"])
    assert pair["gold_spans"] == {"both_right": 1, "only_teacher": 1, "only_baseline": 1, "neither": 0}
    # teacher's spans {PER(0-1), LOC}; baseline's {PER(0-0), LOC, ORG}: one shared of 2 + 3
    assert pair["f1_of_one_against_the_other"] == 40.0
    moved = result["transfer"]["systems"]["student"]
    assert (result["transfer"]["teacher_lead_spans"], result["transfer"]["baseline_lead_spans"]) == (1, 1)
    assert (moved["took"], moved["took_share"], moved["kept"], moved["kept_share"]) == (1, 1.0, 1, 1.0)
    assert moved["right_where_both_right"] == 1 and moved["right_where_both_wrong"] == 0


def test_files_of_different_gold_are_refused(tmp_path: Path) -> None:
    a = write(tmp_path, "a", GOLD)
    b = write(tmp_path, "b", GOLD, gold=["O"] * len(GOLD))
    with pytest.raises(SystemExit, match="gold column differs"):
        main(["--system", f"a={a}", "--system", f"b={b}"])


def test_bad_arguments_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(tmp_path, "a", GOLD)
    for args in (["--system", f"a={a}"], ["--system", f"a={a}", "--system", f"a={a}"],
                 ["--system", f"a={a}", "--system", f"b={a}", "--teacher", "a"],
                 ["--system", f"a={a}", "--system", f"b={a}", "--teacher", "a", "--baseline", "c"],
                 ["--system", "a", "--system", f"b={a}"]):
        with pytest.raises(SystemExit) as error:
            main(args)
        assert error.value.code == 2
    capsys.readouterr()


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    a = write(tmp_path, "a", GOLD)
    with pytest.raises(SystemExit, match="span_agreement: .*nope.txt"):
        main(["--system", f"a={a}", "--system", f"b={tmp_path / 'nope.txt'}"])
