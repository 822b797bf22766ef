"""The unpacked copies of model files (seqlab.apps.model_cache): reused only while sound, temporary with the cache
off, and what a killed unpack left removed."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import seqlab
from seqlab.core.errors import SeqlabError

TEXT = "EU rejects German call to boycott British lamb. Peter Blackburn said so."


def _cached(tmp_path: Path) -> Path:
    (copy,) = (tmp_path / "cache" / "models").iterdir()
    return copy


@pytest.mark.parametrize("tamper, problem", [
    ("swap labels", "has vocabs.json altered"),
    ("extra member", "holds encoder.json, which the model file does not"),
    ("link out", "holds files/0/brown_paths.txt, which is not a regular file"),
    ("removed", "lacks model.pt"),
])
def test_an_altered_cached_copy_is_unpacked_again(model_file, tmp_path, monkeypatch, caplog, tamper, problem):
    _, path = model_file
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "nothing here"))
    expected = seqlab.load(path, "cpu").tag(TEXT).to_dict()
    copy = _cached(tmp_path)
    assert all(str(copy) in f["path"] for f in yaml.safe_load((copy / "config.yaml").read_text())["model"]["features"])
    target = copy / {"swap labels": "vocabs.json", "extra member": "encoder.json", "removed": "model.pt",
                     "link out": "files/0/brown_paths.txt"}[tamper]
    if target.exists():
        target.chmod(0o644)  # unpacked read-only
    if tamper == "swap labels":
        text = target.read_text()
        target.write_text(text.replace('"B-PER"', '"B-X"').replace('"B-LOC"', '"B-PER"').replace('"B-X"', '"B-LOC"'))
    elif tamper == "extra member":
        target.write_text('{"path": "/somewhere/else", "sha256": "0"}')
    elif tamper == "link out":
        outside = tmp_path / "outside.txt"
        outside.write_bytes(target.read_bytes())
        target.unlink()
        target.symlink_to(outside)
    else:
        target.unlink()
    assert seqlab.load(path, "cpu").tag(TEXT).to_dict() == expected
    assert problem in caplog.text and "unpacking it again" in caplog.text
    assert _cached(tmp_path) == copy and not (copy / "encoder.json").exists() and not target.is_symlink()


def test_with_the_cache_off_no_unpacked_copy_is_left_behind(model_file, tmp_path, monkeypatch):
    import tempfile

    _, path = model_file
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("SEQLAB_CACHE", "off")
    seqlab.load(path, "cpu").tag(TEXT)
    with pytest.raises(SeqlabError):
        seqlab.load(tmp_path / "missing.seqlab", "cpu")
    assert list(tmp_path.iterdir()) == []


def test_staging_folders_a_killed_unpack_left_are_removed_when_the_cache_is_next_used(model_file, tmp_path,
                                                                                       monkeypatch, caplog):
    import fcntl
    import logging
    import os
    import time

    from seqlab.apps.model_cache import ABANDONED_AFTER, unpack

    _, path = model_file
    models = tmp_path / "cache" / "models"
    hours_ago = time.time() - 2 * ABANDONED_AFTER
    for name in (".unpack-killed", ".stale-killed", ".unpack-fresh", ".unpack-busy"):
        member = models / name / "files" / "0" / "brown_paths.txt"  # half-unpacked, read-only as unpacking leaves it
        member.parent.mkdir(parents=True)
        member.write_text("0\tcat\t1\n")
        member.chmod(0o444)
        if name != ".unpack-fresh":
            os.utime(models / name, (hours_ago, hours_ago))
    busy = os.open(models / ".unpack-busy", os.O_RDONLY)  # as a live unpack that has taken hours holds it
    fcntl.flock(busy, fcntl.LOCK_EX)
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    try:
        with caplog.at_level(logging.INFO, logger="seqlab"):
            target = unpack(path)
    finally:
        os.close(busy)
    assert sorted(entry.name for entry in models.iterdir()) == sorted([".unpack-busy", ".unpack-fresh", target.name])
    assert "removed 2 unpacking folder(s) that an interrupted process left" in caplog.text
