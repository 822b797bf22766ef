"""Portable model files (seqlab.apps.package): a run as one .seqlab file that loads anywhere, or is refused."""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml

import seqlab
from seqlab.cli import main
from seqlab.core.errors import SeqlabError
from seqlab.apps.model_file import read_manifest
from seqlab.apps.package import package
from tests.conftest import FIXTURES, forget_new_log_handlers

NER = FIXTURES / "ner"
TEXT = "EU rejects German call to boycott British lamb. Peter Blackburn said so."


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
                                        "files/0/brown_paths.txt", "calibration.json", "card.json"}
    calibration = json.loads((run / "calibration.json").read_text())  # written by training, fitted on dev
    assert calibration["fitted_on"].endswith("dev.txt") and calibration == json.loads((run / "metrics.json").read_text(
    ))["calibration"]
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
    ("flipped", "not a seqlab model file, or a truncated one"),  # a compressed member no longer inflates
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
    elif damage == "flipped":
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo("model.pt")
        data = bytearray(path.read_bytes())
        data[info.header_offset + 30 + len(info.filename) + info.compress_size // 2] ^= 0xFF  # its deflated bytes
        bad.write_bytes(bytes(data))
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
    assert json.loads(capsys.readouterr().out)["members"] == 7
    assert main(["inspect", str(tmp_path / "cli.seqlab"), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["format"] == "seqlab-model" and shown["card"]["labels"] == ["LOC", "MISC", "ORG", "PER"]
    assert main(["package", str(tmp_path), "--out", str(tmp_path / "x.seqlab")]) == 2
    assert "not a seqlab run directory" in capsys.readouterr().err


def test_feature_tables_are_pruned_and_a_copied_model_file_evaluates_as_its_run(tmp_path, monkeypatch):
    """Brown paths and word vectors are packaged pruned to the run's words (plus one word per other Brown path,
    and the unknown-word row); the file copied to a fresh folder, with no data folder, evaluates and tags
    exactly as its run directory does."""
    tables = tmp_path / "tables"
    tables.mkdir()
    brown = (NER / "brown_paths.txt").read_text(encoding="utf-8")
    brown += "011100\tzzunseen\t5\n0111\tzzother\t3\n0110\tzzdrop\t9\n"  # two new paths; a known one
    (tables / "paths.txt").write_text(brown, encoding="utf-8")
    vectors = (NER / "vectors.txt").read_text(encoding="utf-8") + "zzunused 0.9 0.8 0.7 0.6\n<unk> 0.1 0.1 0.1 0.1\n"
    (tables / "vectors.txt").write_text(vectors, encoding="utf-8")
    features = (f"model.features=[{{type: brown, path: {tables / 'paths.txt'}, prefixes: [2, 4], dim: 3}},"
                f" {{type: brown, path: {tables / 'paths.txt'}, prefixes: [4]}},"
                f" {{type: embeddings, path: {tables / 'vectors.txt'}, lowercase: true}}]")
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    with forget_new_log_handlers():
        seqlab.train(NER / "tiny.yaml", tmp_path / "run", overrides=(features, "train.threads=1"), progress=False)
    package(tmp_path / "run", tmp_path / "tiny.seqlab")
    run = seqlab.load(tmp_path / "run", "cpu")
    expected_spans = _spans(run)
    expected = run.evaluate(NER / "dev.txt", output=tmp_path / "run.pred.txt")

    with zipfile.ZipFile(tmp_path / "tiny.seqlab") as zf:
        paths = zf.read("files/0/paths.txt").decode()
        embedded = zf.read("files/2/vectors.txt").decode()
    assert "zzunused" not in embedded and "<unk> " in embedded and "german " in embedded
    assert "\tzzunseen\t" in paths and "\tzzother\t" in paths  # the only words of their paths: ids stay
    assert "\tzzdrop\t" not in paths  # its path has a word of the run
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "tiny.seqlab").write_bytes((tmp_path / "tiny.seqlab").read_bytes())
    (fresh / "dev.txt").write_bytes((NER / "dev.txt").read_bytes())
    (tables / "paths.txt").unlink()
    (tables / "vectors.txt").unlink()
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "nothing here"))
    monkeypatch.chdir(fresh)
    model = seqlab.load("tiny.seqlab", "cpu")
    got = model.evaluate("dev.txt", output="pred.txt")
    assert got.report_text == expected.report_text
    assert (fresh / "pred.txt").read_text() == (tmp_path / "run.pred.txt").read_text()
    assert _spans(model) == expected_spans


@pytest.mark.parametrize("member, content, message", [
    ("model.pt", b"", "an empty file"),
    ("model.pt", None, "no model.pt"),
    ("config.yaml", b"\xff garbage", "not valid UTF-8"),
    ("config.yaml", b"task: tagging\ndata: {train: a.txt, dev: b.txt}\nmodell: {}\n", "unknown key"),
    ("vocabs.json", b"[1, 2, 3]", "not a seqlab vocabulary file"),
    ("features.json", b"nope", "features.json:1:1: not valid JSON"),
    pytest.param("metrics.json", b"[" * 100_000 + b"]" * 100_000, "metrics.json: JSON nested deeper than 64 levels; "
                 "refused", id="metrics.json-deep"),
    ("metrics.json", b"[1]", "metrics.json: expected a JSON object of scores, got list"),
])
def test_package_refuses_a_run_whose_files_would_not_load(model_file, tmp_path, monkeypatch, member, content, message):
    run, _ = model_file
    monkeypatch.setenv("SEQLAB_DATA", str(NER))  # the Brown file is found: metrics.json is read after it
    damaged = tmp_path / "run"
    shutil.copytree(run, damaged)
    if content is None:
        (damaged / member).unlink()
    else:
        (damaged / member).write_bytes(content)
    with pytest.raises(SeqlabError, match=message) as info:
        package(damaged, tmp_path / "out.seqlab")
    assert "\n" not in str(info.value) and not (tmp_path / "out.seqlab").exists()


def test_a_truncated_weights_file_is_refused_before_packaging(model_file, tmp_path):
    run, _ = model_file
    damaged = tmp_path / "run"
    shutil.copytree(run, damaged)
    weights = (damaged / "model.pt").read_bytes()
    (damaged / "model.pt").write_bytes(weights[: len(weights) // 3])
    with pytest.raises(SeqlabError, match="model.pt: cannot load weights"):
        package(damaged, tmp_path / "out.seqlab")
