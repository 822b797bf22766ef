"""Portable model files (seqlab.core.package): a run as one .seqlab file that loads anywhere, or is refused."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

import seqlab
from seqlab.cli import main
from seqlab.core.errors import SeqlabError
from seqlab.core.package import package, read_manifest
from tests.conftest import FIXTURES, forget_new_log_handlers

NER = FIXTURES / "ner"
BROWN = "model.features=[{type: brown, path: brown_paths.txt, prefixes: [2, 4], dim: 3}]"
TEXT = "EU rejects German call to boycott British lamb. Peter Blackburn said so."


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> tuple[Path, Path]:
    """A tiny tagger with a Brown-cluster feature, trained and packaged."""
    folder = tmp_path_factory.mktemp("package")
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(NER))
        seqlab.train(NER / "tiny.yaml", folder / "run", overrides=(BROWN, "train.threads=1"), progress=False)
        package(folder / "run", folder / "tiny.seqlab")
    return folder / "run", folder / "tiny.seqlab"


def _spans(model) -> list:
    return [(s.text, s.label, s.start, s.end, s.confidence) for s in model.tag(TEXT).spans]


def test_a_model_file_loads_without_the_data_and_predicts_as_its_run(model_file, monkeypatch, tmp_path):
    run, path = model_file
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    expected = _spans(seqlab.load(run, "cpu"))
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "nothing here"))  # the Brown file now comes from the model file
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    assert _spans(seqlab.load(path, "cpu")) == expected
    assert _spans(seqlab.load(path, "cpu")) == expected  # the second load reads the unpacked copy


def test_the_manifest_names_every_member_with_its_checksum_and_the_scores(model_file):
    run, path = model_file
    manifest = read_manifest(path)
    assert manifest["format"] == "seqlab-model" and manifest["task"] == "tagging"
    assert set(manifest["members"]) == {"config.yaml", "vocabs.json", "features.json", "model.pt",
                                        "files/0/brown_paths.txt"}
    metrics = json.loads((run / "metrics.json").read_text())
    assert manifest["scores"] == {"dev": metrics["dev"]["f1"], "test": metrics["test"]["f1"]}


def _rewrite(source: Path, target: Path, change) -> None:
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            zout.writestr(item.filename, change(item.filename, zin.read(item.filename)))


@pytest.mark.parametrize("damage, message", [
    ("truncate", "not a seqlab model file, or a truncated one"),
    ("weights", "member 'model.pt' fails its sha256 check"),
    ("version", "model file format version 99; this seqlab reads version 1"),
    ("foreign", r"not a seqlab model file \(no manifest.json\)"),
    ("extra", "member 'extra.py' is not in the manifest"),
])
def test_a_damaged_or_foreign_file_is_refused_in_one_line(model_file, tmp_path, monkeypatch, damage, message):
    _, path = model_file
    bad = tmp_path / "bad.seqlab"
    if damage == "truncate":
        bad.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "weights":
        _rewrite(path, bad, lambda n, d: d[:-1] + bytes([d[-1] ^ 1]) if n == "model.pt" else d)
    elif damage == "version":
        _rewrite(path, bad, lambda n, d: d.replace(b'"format_version": 1', b'"format_version": 99') if n == "manifest.json" else d)
    elif damage == "foreign":
        with zipfile.ZipFile(bad, "w") as zf:
            zf.writestr("hello.txt", "not a model")
    else:
        _rewrite(path, bad, lambda n, d: d)
        with zipfile.ZipFile(bad, "a") as zf:
            zf.writestr("extra.py", "import os")
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(SeqlabError, match=message) as info:
        seqlab.load(bad, "cpu")
    assert "\n" not in str(info.value)


def test_package_and_inspect_from_the_command_line(model_file, tmp_path, monkeypatch, capsys):
    run, _ = model_file
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    assert main(["package", str(run), "--out", str(tmp_path / "cli.seqlab")]) == 0
    assert json.loads(capsys.readouterr().out)["members"] == 5
    assert main(["inspect", str(tmp_path / "cli.seqlab")]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "seqlab-model"
    assert main(["package", str(tmp_path), "--out", str(tmp_path / "x.seqlab")]) == 2
    assert "not a seqlab run directory" in capsys.readouterr().err
