"""``seqlab models`` and ``seqlab inspect`` (seqlab/cli/package.py); installed names resolved by every verb."""
from __future__ import annotations

import json

import pytest

from seqlab.cli import main


def test_models_lists_the_installed_model(capsys) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("en-ner-conll03  (tagging, bilstm-crf, 5.")
    for text in ("labels:        LOC MISC ORG PER", "train conll2003/train.txt", "test F1 90.46", "tokens/s",
                 "requires:      torch"):
        assert text in out
    assert main(["models", "--json"]) == 0
    (card,) = json.loads(capsys.readouterr().out)
    assert card["name"] == "en-ner-conll03" and card["labels"] == ["LOC", "MISC", "ORG", "PER"]


def test_inspect_takes_an_installed_name(capsys) -> None:
    assert main(["inspect", "en-ner-conll03", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "seqlab-model"


@pytest.mark.parametrize("argv", [
    ["inspect", "en-ner-conll"], ["tag", "en-ner-conll"], ["tag", "en-ner-conll", "x.txt"],
    ["eval", "en-ner-conl", "x.txt"], ["export", "en-ner-conll", "--format", "onnx", "--out", "o"]])
def test_a_misspelt_model_name_is_one_line_naming_the_nearest(argv, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.txt").write_text("Paris O\n", encoding="utf-8")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "did you mean the installed model 'en-ner-conll03'?" in err
