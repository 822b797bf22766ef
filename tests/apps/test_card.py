"""Model cards (seqlab.apps.card) written into model files, and ``seqlab calibrate`` / ``eval --calibration``."""
from __future__ import annotations

import json
import shutil
import zipfile

import pytest

import seqlab
from seqlab.apps.card import read_about, render
from seqlab.apps.installed import model_path, read_card
from seqlab.apps.model_file import read_manifest
from seqlab.cli import main
from seqlab.core.errors import SeqlabError
from tests.conftest import FIXTURES

NER = FIXTURES / "ner"


@pytest.fixture()
def model_copy(tmp_path, monkeypatch):
    """A copy of the installed model file, the cache and data folders in tmp_path."""
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "no data"))
    path = tmp_path / "model.seqlab"
    shutil.copy(model_path(None), path)
    return path


def test_the_installed_model_has_a_card_with_scores_per_type_calibration_and_limitations() -> None:
    card = read_card(model_path(None))
    assert card["labels"] == ["LOC", "MISC", "ORG", "PER"] and card["seed"] == 1
    assert card["scores"]["test"]["f1"] == 90.46 and set(card["scores"]["test"]["per_type"]) == set(card["labels"])
    assert "Reuters" in card["data"]["licence"] and "1996" in card["limitations"]
    assert 1.0 < card["calibration"]["temperature"] < 3.0
    assert card["calibration"]["test"]["ece"] < card["calibration"]["test"]["ece_uncalibrated"]
    text = render(card)
    assert "test:        F1 90.46" in text and "temperature" in text and "limitations:" in text


def test_inspect_prints_the_card(capsys) -> None:
    assert main(["inspect", "en-ner-conll03"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("en-ner-conll03: English named-entity recognition") and "licence:" in out


def test_about_files_are_strict(tmp_path) -> None:
    about = tmp_path / "about.yaml"
    about.write_text("name: x\nlicense: CC-BY\n")
    with pytest.raises(SeqlabError, match="unknown key 'license'"):
        read_about(about)
    about.write_text("name: [1, 2]\n")
    with pytest.raises(SeqlabError, match="name must be a non-empty string"):
        read_about(about)
    about.write_text("limitations: >-\n  only\n  news\n")
    assert read_about(about) == {"limitations": "only news"}


def test_repackaging_a_model_file_keeps_its_weights_and_the_card_person_written_part(model_copy, tmp_path,
                                                                                     capsys) -> None:
    about = tmp_path / "about.yaml"
    about.write_text("description: a new description\n")
    assert main(["package", str(model_copy), "--about", str(about), "--out", str(tmp_path / "new.seqlab")]) == 0
    card = read_card(tmp_path / "new.seqlab")
    assert card["description"] == "a new description" and "Reuters" in card["data"]["licence"]
    assert card["scores"]["test"]["from"] == "the training run's metrics.json"  # no data here: recorded scores
    old, new = read_manifest(model_copy), read_manifest(tmp_path / "new.seqlab")
    assert {k: v for k, v in old["members"].items() if k != "card.json"} == \
        {k: v for k, v in new["members"].items() if k != "card.json"}
    assert main(["package", "en-ner-conll03"]) == 2
    assert "give --out" in capsys.readouterr().err


def test_calibrate_rewrites_a_model_file_and_keeps_its_labels(model_copy, tmp_path, monkeypatch, capsys) -> None:
    text = "Angela Merkel met Emmanuel Macron in Berlin on Tuesday with the EU."
    before = seqlab.load(model_copy, "cpu").tag(text)
    monkeypatch.setattr("seqlab.core.calibration.MIN_EACH", 0)
    assert main(["calibrate", str(model_copy), str(NER / "dev.txt")]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["temperature"] < 0.1 and record["fitted_on"].endswith("dev.txt")
    with zipfile.ZipFile(model_copy) as zf:
        assert json.loads(zf.read("calibration.json"))["temperature"] == record["temperature"]
    after = seqlab.load(model_copy, "cpu").tag(text)
    assert [(s.start, s.end, s.label) for s in after.spans] == [(s.start, s.end, s.label) for s in before.spans]
    assert all(a.confidence > b.confidence for a, b in zip(after.spans, before.spans) if b.confidence < 0.999)
    assert main(["calibrate", "en-ner-conll03", str(NER / "dev.txt")]) == 2
    assert "give --out" in capsys.readouterr().err


def _span_jsonl(path, shift: int) -> None:
    """dev.txt's sentences as span JSONL, each text after an emoji (one character, two UTF-16 code units); the
    offsets in characters, or (``shift`` 1) in UTF-16 code units."""
    from seqlab.data.schemes import spans

    lines = []
    for n, block in enumerate(NER.joinpath("dev.txt").read_text(encoding="utf-8").split("\n\n")):
        rows = [line.split() for line in block.splitlines() if line.split() and line.split()[0] != "-DOCSTART-"]
        if not rows:
            continue
        words, starts = [row[0] for row in rows], [2]
        for word in words[:-1]:
            starts.append(starts[-1] + len(word) + 1)
        text = "\U0001F600 " + " ".join(words)
        ends = [start + len(word) for start, word in zip(starts, words)]
        found = [{"start": starts[a] + shift, "end": ends[b - 1] + shift, "label": kind,
                  "text": text[starts[a]:ends[b - 1]]} for kind, a, b in spans([row[-1] for row in rows])]
        lines.append(json.dumps({"id": f"d{n}", "text": text, "spans": found}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_calibrate_offsets_reads_the_unit_given_and_refuses_chars_that_look_like_utf16(model_copy, tmp_path,
                                                                                      monkeypatch, capsys) -> None:
    from seqlab.apps.model_cache import unpacked

    monkeypatch.setattr("seqlab.core.calibration.MIN_EACH", 0)
    _span_jsonl(tmp_path / "chars.jsonl", 0)
    _span_jsonl(tmp_path / "utf16.jsonl", 1)
    with unpacked(model_copy) as run_dir:
        shutil.copytree(run_dir, tmp_path / "run")
    shutil.copy(model_copy, tmp_path / "other.seqlab")
    temperatures = []
    runs = ((model_copy, "utf16.jsonl", "utf16"), (tmp_path / "other.seqlab", "chars.jsonl", "chars"),
            (tmp_path / "run", "utf16.jsonl", "utf16"))  # two model files and a run directory
    for model, data, unit in runs:
        assert main(["calibrate", str(model), str(tmp_path / data), "--offsets", unit]) == 0
        record = json.loads(capsys.readouterr().out)
        assert record["fitted_on"].endswith(data)
        temperatures.append(record["temperature"])
    assert temperatures[0] == temperatures[1] == temperatures[2]  # the same spans, whichever unit counts them
    before = model_copy.read_bytes()
    assert main(["calibrate", str(model_copy), str(tmp_path / "utf16.jsonl"), "--offsets", "chars"]) == 2
    assert "utf16.jsonl:1: document d1: the spans' offsets look like UTF-16 code units" in capsys.readouterr().err
    assert model_copy.read_bytes() == before


def test_eval_reports_calibration_and_plots_it(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "en-ner-conll03", str(NER / "dev.txt"), "--calibration"]) == 0
    out = capsys.readouterr().out
    assert out.count("expected calibration error (ECE, 10 equal-width bins)") == 2  # calibrated and uncalibrated
    assert "temperature 1.000" in out and "(0.9, 1.0]" in out
    pytest.importorskip("matplotlib")
    assert main(["eval", "en-ner-conll03", str(NER / "dev.txt"), "--plot", str(tmp_path / "r.png")]) == 0
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calibrate_refuses_an_export_folder_and_a_relation_model_file(tmp_path, capsys, monkeypatch) -> None:
    (tmp_path / "exported").mkdir()
    (tmp_path / "exported" / "onnx.json").write_text("{}")
    assert main(["calibrate", str(tmp_path / "exported"), str(NER / "dev.txt")]) == 2
    assert "an export folder; calibrate its model file" in capsys.readouterr().err

    class Relation:
        task = "relation"

    monkeypatch.setattr("seqlab.apps.package._load", lambda run_dir: Relation())
    shutil.copy(model_path(None), tmp_path / "m.seqlab")
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    assert main(["calibrate", str(tmp_path / "m.seqlab"), str(NER / "dev.txt")]) == 2
    assert "calibration is for taggers; this is a relation model" in capsys.readouterr().err


def test_a_card_names_the_model_language_and_an_old_card_reads_as_english() -> None:
    from seqlab.apps.card import _common

    card = _common({"data": {"train": "ud_french_sequoia/train.conllu", "language": "fr"}}, {}, ["NOUN"], {})
    assert card["language"] == "fr" and "  language:    fr" in render(card)
    assert "  language:    en" in render(read_card(model_path(None)))  # recorded before models had a language
