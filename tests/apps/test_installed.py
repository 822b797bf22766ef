"""Installed models: names resolved, a misspelt name refused with the nearest one, the model card."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from seqlab.apps.installed import MODELS, check_model_name, model_card, model_path, nearest_model, read_card
from seqlab.core.errors import SeqlabError


@pytest.mark.parametrize("name, near", [("en-ner-conll", "en-ner-conll03"), ("en-ner-conll3", "en-ner-conll03"),
                                        ("EN-NER-CONLL03", None), ("runs/conll03", None), ("news.txt", None)])
def test_nearest_model(name: str, near: str | None) -> None:
    assert nearest_model(name) == near


def test_a_misspelt_name_is_refused_but_a_real_path_is_not(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(SeqlabError, match="did you mean the installed model 'en-ner-conll03'") as err:
        model_path("en-ner-conll")
    assert "\n" not in str(err.value)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "en-ner-conll").mkdir()  # a run directory that happens to have that name
    check_model_name("en-ner-conll")
    assert model_path("en-ner-conll") == Path("en-ner-conll")
    assert model_path("en-ner-conll03").name == MODELS["en-ner-conll03"]


def test_model_card_of_the_installed_model() -> None:
    card = model_card("en-ner-conll03")
    assert card["task"] == "tagging" and card["labels"] == ["LOC", "MISC", "ORG", "PER"]
    assert card["training_data"]["train"] == "conll2003/train.txt"
    assert round(card["scores"]["test"], 2) == 90.46 and card["measure"] == "F1"
    assert card["bytes"] > 1_000_000 and "tokens per CPU-second" in card["speed"]
    assert card["calibration"]["temperature"] > 1
    assert card["requires"]["packages"] == ["torch"]


@pytest.mark.parametrize("text, message", [(b"{\"name\": ", r"member 'card.json':1:10: not valid JSON"),
                                           (b"[" * 1000, r"member 'card.json': JSON nested deeper than 64")])
def test_a_corrupt_json_member_is_one_line_naming_the_file_and_member(tmp_path: Path, text: bytes,
                                                                      message: str) -> None:
    path = tmp_path / "model.seqlab"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("card.json", text)
    with pytest.raises(SeqlabError, match=message) as err:
        read_card(path)
    assert str(err.value).startswith(f"{path}: member 'card.json'") and "\n" not in str(err.value)
