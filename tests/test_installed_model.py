"""The English NER model installed with seqlab: it loads with no data and no run directory, and tags."""
from __future__ import annotations

import pytest

import seqlab
from seqlab.apps.package import read_manifest
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
