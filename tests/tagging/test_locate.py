"""A run's feature files are found from any working directory and after the run moves, or named when missing."""
from __future__ import annotations

import shutil

import pytest

import seqlab
from seqlab.core.errors import SeqlabError
from tests.conftest import FIXTURES, forget_new_log_handlers

NER = FIXTURES / "ner"
TEXT = "EU rejects German call to boycott British lamb. Peter Blackburn said so."


def _spans(model) -> list:
    return [(s.text, s.label, s.start, s.end, s.confidence) for s in model.tag(TEXT).spans]


def test_a_run_with_a_relative_feature_file_loads_from_elsewhere_and_after_moving(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "tables").mkdir(parents=True)
    shutil.copy(NER / "brown_paths.txt", project / "tables" / "paths.txt")
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    monkeypatch.chdir(project)
    feature = "model.features=[{type: brown, path: ./tables/paths.txt, prefixes: [2, 4], dim: 3}]"
    with forget_new_log_handlers():
        seqlab.train(NER / "tiny.yaml", project / "runs" / "tiny", overrides=(feature, "train.threads=1"),
                     progress=False)
    expected = _spans(seqlab.load(project / "runs" / "tiny", "cpu"))

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # ./tables/paths.txt is found beside the runs/ folder holding the run
    assert _spans(seqlab.load(project / "runs" / "tiny", "cpu")) == expected

    moved = shutil.move(project / "runs" / "tiny", elsewhere / "tiny")
    with pytest.raises(SeqlabError) as err:
        seqlab.load(moved, "cpu")
    message = str(err.value)
    assert "\n" not in message and message.startswith("model.features[0].path: this model reads its brown file "
                                                      "'./tables/paths.txt'")
    assert f"put it at {elsewhere / 'tiny' / 'paths.txt'}" in message
    shutil.copy(NER / "brown_paths.txt", elsewhere / "tiny" / "paths.txt")  # the file beside the model
    assert _spans(seqlab.load(moved, "cpu")) == expected
