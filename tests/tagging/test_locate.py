"""A run's feature files are found from any working directory and after the run moves, or named when missing."""
from __future__ import annotations

import os
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


def _feature(path: str):
    from seqlab.tagging.config import FeatureConfig

    return FeatureConfig(type="brown", path=path)


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_device_or_fifo_as_a_feature_file_is_refused_unopened(tmp_path, special):
    from seqlab.tagging.locate import locate

    if special == "fifo":  # opening it for reading would wait for a writer forever
        special = str(tmp_path / "paths.fifo")
        os.mkfifo(special)
    with pytest.raises(SeqlabError, match=r"model.features\[0\].path: .* is not a regular file"):
        locate(_feature(special), 0, tmp_path)


def test_a_run_unpacked_from_a_model_file_reads_features_only_from_inside_itself(tmp_path):
    from seqlab.tagging.locate import MODEL_FILE_MANIFEST, locate

    run = tmp_path / "unpacked"
    (run / "files" / "0").mkdir(parents=True)
    (run / MODEL_FILE_MANIFEST).write_text("{}")
    (run / "files" / "0" / "paths.txt").write_text("0\tx\t1\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("0\tsecret\t1\n")
    assert locate(_feature(str(run / "files/0/paths.txt")), 0, run).path == str((run / "files/0/paths.txt").resolve())
    for value in (str(outside), "../secret.txt", "files/0/../../../secret.txt"):
        with pytest.raises(SeqlabError, match="is not a file of the model unpacked at"):
            locate(_feature(value), 0, run)
    (run / "files" / "1").mkdir()
    (run / "files" / "1" / "link.txt").symlink_to(outside)
    with pytest.raises(SeqlabError, match="is not a file of the model unpacked at"):
        locate(_feature("files/1/link.txt"), 0, run)
    with pytest.raises(SeqlabError, match="leads out of the model unpacked at"):
        locate(_feature("files/1"), 0, run)  # a folder (an LS feature's) holding a link out
