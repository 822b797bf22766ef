"""seqlab.apps.model_file: a .seqlab file is trusted for nothing. Files whose checksums were recomputed after they
were made to reach outside themselves, inflate without bound or hold malformed members are refused in one line
naming the member, before anything in them is used."""
from __future__ import annotations

import json
import os
import re
import zipfile
from pathlib import Path
from typing import Callable

import pytest
import yaml

import seqlab
from probes.hostile import forge  # an attacker's rewrite: the checksums and sizes recomputed
from seqlab.apps.model_file import MAX_RATIO, RATIO_FLOOR, member_name, read_manifest
from seqlab.apps.package import _deflate, package
from seqlab.core.errors import SeqlabError
from tests.conftest import FIXTURES, forget_new_log_handlers

NER = FIXTURES / "ner"
BROWN = "model.features=[{type: brown, path: brown_paths.txt, prefixes: [2, 4], dim: 3}]"
TEXT = "EU rejects German call to boycott British lamb. Peter Blackburn said so."


@pytest.fixture(scope="module")
def packaged(tmp_path_factory) -> Path:
    """A tiny tagger with a Brown-cluster feature, packaged."""
    folder = tmp_path_factory.mktemp("model_file")
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(NER))
        seqlab.train(NER / "tiny.yaml", folder / "run", overrides=(BROWN, "train.threads=1", "train.epochs=1"),
                     progress=False)
        package(folder / "run", folder / "tiny.seqlab")
    return folder / "tiny.seqlab"


def members_of(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def with_feature_path(value: str) -> Callable[[dict[str, bytes]], None]:
    def change(members: dict[str, bytes]) -> None:
        tree = yaml.safe_load(members["config.yaml"])
        tree["model"]["features"][0]["path"] = value
        members["config.yaml"] = yaml.safe_dump(tree).encode()
    return change


def with_member(name: str, data: bytes) -> Callable[[dict[str, bytes]], None]:
    return lambda members: members.__setitem__(name, data)


def empty_labels(members: dict[str, bytes]) -> None:
    vocabs = json.loads(members["vocabs.json"])
    vocabs["tags"]["itos"] = []
    members["vocabs.json"] = json.dumps(vocabs).encode()


DEEP = b"[" * 100_000 + b"]" * 100_000
MALFORMED = {
    "feature path absolute": (with_feature_path("/etc/passwd"),
                              "model.features[0].path '/etc/passwd' is not a member"),
    "feature path climbs out": (with_feature_path("../../../../etc/passwd"), "is not a member of this model file"),
    "feature path a device": (with_feature_path("/dev/zero"), "'/dev/zero' is not a member"),
    "feature path dotted": (with_feature_path("./files/0/brown_paths.txt"), "is not a member"),
    "config not UTF-8": (with_member("config.yaml", "caf\xe9: 1\n".encode("latin-1")),
                         "member 'config.yaml': not valid UTF-8 (byte 0xe9 at offset 3)"),
    "config a list": (with_member("config.yaml", b"- a\n- b\n"), "'config.yaml': expected a mapping of config "
                                                                  "sections, got a list"),
    "config empty": (with_member("config.yaml", b""), "got an empty document"),
    "config python tag": (with_member("config.yaml", b"!!python/object/apply:os.system [true]\n"),
                          "'config.yaml' line 1, column 1: not a seqlab config: could not determine a constructor"),
    "config features not a list": (with_member("config.yaml", b"model: {features: 3}\n"),
                                   "must be a mapping and a list"),
    "vocabs nested 100000 deep": (with_member("vocabs.json", DEEP), "'vocabs.json': JSON nested deeper than 64"),
    "features nested 100000 deep": (with_member("features.json", DEEP), "'features.json': JSON nested deeper"),
    "vocabs not JSON": (with_member("vocabs.json", b"{"), "'vocabs.json':1:2: not valid JSON"),
    "vocabs a list": (with_member("vocabs.json", b"[1, 2]"), "'vocabs.json': expected a JSON object, got list"),
    "empty label table": (empty_labels, "'vocabs.json': the label table 'tags' is empty"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_self_consistent_file_with_a_malformed_member_is_refused_naming_it(packaged, tmp_path, monkeypatch, case):
    change, message = MALFORMED[case]
    bad = forge(packaged, tmp_path / "bad.seqlab", change)
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(SeqlabError, match=re.escape(message)) as info:
        seqlab.load(bad, "cpu")
    assert "\n" not in str(info.value) and str(bad) in str(info.value)
    assert not list((tmp_path / "cache").glob("models/*/*"))  # nothing of it was unpacked


@pytest.mark.parametrize("manifest, message", [
    (lambda m: m.__setitem__("members", list(m["members"])),
     "'members' must map each member's name to its sha256, got list"),
    (lambda m: m["members"].__setitem__("model.pt", "x"), "member 'model.pt': expected a sha256"),
    (lambda m: m["sizes"].__setitem__("model.pt", 5),
     "member 'model.pt' is .* bytes in the archive, 5 in the manifest"),
    (lambda m: m.__setitem__("sizes", {}), "'sizes' must give the size of each member"),
    (lambda m: m.__setitem__("extra", json.loads("[" * 70 + "]" * 70)),
     "manifest.json: JSON nested deeper than 64 levels"),
    (lambda m: m.__setitem__("junk", "x" * (1 << 20)), "manifest.json is .* bytes; a manifest is at most 1048576"),
])
def test_a_malformed_or_oversized_manifest_is_refused(packaged, tmp_path, manifest, message):
    bad = forge(packaged, tmp_path / "bad.seqlab", manifest=manifest)
    with pytest.raises(SeqlabError, match=message) as info:
        read_manifest(bad)
    assert "\n" not in str(info.value)


def test_a_manifest_giving_a_key_twice_is_refused(packaged, tmp_path):
    members = members_of(packaged)
    text = members["manifest.json"].decode().replace('"members": {', '"members": {"model.pt": "' + "0" * 64 + '", ', 1)
    with zipfile.ZipFile(tmp_path / "bad.seqlab", "w") as zf:
        for name, data in {**members, "manifest.json": text.encode()}.items():
            zf.writestr(name, data)
    with pytest.raises(SeqlabError, match="manifest.json: refused: key 'model.pt' given twice"):
        read_manifest(tmp_path / "bad.seqlab")


@pytest.mark.parametrize("name, message", [
    ("./vocabs.json", "members 'vocabs.json' and './vocabs.json' are one name"),
    ("VOCABS.json", "members 'vocabs.json' and 'VOCABS.json' are one name"),
    ("/etc/cron.d/x", "member name '/etc/cron.d/x' is absolute"),
    ("../../x.py", "member name '../../x.py' climbs out"),
    ("files\\0\\x", "holds a backslash"),
    ("files/", "member 'files/' is a folder entry"),
])
def test_member_names_are_normalised_and_unique_before_any_checksum_is_trusted(packaged, tmp_path, name, message):
    bad = tmp_path / "bad.seqlab"
    with zipfile.ZipFile(bad, "w") as zf:
        for member, data in members_of(packaged).items():
            zf.writestr(member, data)
        zf.writestr(name, b'{"words": {"itos": ["evil"]}}')  # the second copy a loader might unpack instead
    with pytest.raises(SeqlabError, match=re.escape(message)):
        read_manifest(bad)


def test_member_name_normal_form():
    assert member_name("./files//0/./x.txt", "f") == "files/0/x.txt"
    with pytest.raises(SeqlabError, match="is absolute"):
        member_name("C:/x", "f")


def test_an_encrypted_member_or_an_unsupported_method_is_refused(packaged, tmp_path):
    lzma = forge(packaged, tmp_path / "lzma.seqlab", method=zipfile.ZIP_LZMA)
    with pytest.raises(SeqlabError, match="is compressed with zip method 14; a seqlab model file's members are "
                                          "stored or deflated"):
        read_manifest(lzma)
    data = bytearray(packaged.read_bytes())
    at = data.find(b"PK\x01\x02")  # the first central directory entry: set its "encrypted" flag
    data[at + 8] |= 1
    (tmp_path / "enc.seqlab").write_bytes(bytes(data))
    with pytest.raises(SeqlabError, match="is encrypted; a seqlab model file never is"):
        read_manifest(tmp_path / "enc.seqlab")


def test_a_member_that_would_inflate_past_the_bound_is_refused_before_inflating(packaged, tmp_path, monkeypatch):
    """64 MiB of zeros deflate to 64 KB; the manifest says 64 MiB too, so only the ratio bound stops it."""
    bomb = forge(packaged, tmp_path / "bomb.seqlab", with_member("files/0/brown_paths.txt", bytes(64 << 20)))
    assert bomb.stat().st_size < 1 << 20
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(SeqlabError, match=r"member 'files/0/brown_paths.txt' would inflate from \d+ to 67108864 "
                                          "bytes; refused"):
        seqlab.load(bomb, "cpu")
    assert not list((tmp_path / "cache").rglob("brown_paths.txt"))


def test_the_manifest_records_sizes_and_a_file_without_them_still_loads(packaged, tmp_path, monkeypatch):
    manifest = read_manifest(packaged)
    assert manifest["sizes"] == {name: len(data) for name, data in members_of(packaged).items()
                                 if name != "manifest.json"}
    old = forge(packaged, tmp_path / "old.seqlab", manifest=lambda m: m.pop("sizes"))  # as files made before
    monkeypatch.setenv("SEQLAB_CACHE", "off")
    assert seqlab.load(old, "cpu").tag(TEXT).to_dict() == seqlab.load(packaged, "cpu").tag(TEXT).to_dict()


def test_packing_stores_a_member_that_deflate_would_shrink_past_the_bound(tmp_path):
    with zipfile.ZipFile(tmp_path / "x.zip", "w") as zf:
        _deflate(zf, "zeros", bytes(RATIO_FLOOR + 1))
        _deflate(zf, "text", b"EU rejects German call .\n" * 100)
    with zipfile.ZipFile(tmp_path / "x.zip") as zf:
        zeros, text = zf.getinfo("zeros"), zf.getinfo("text")
    assert zeros.compress_type == zipfile.ZIP_STORED and text.compress_type == zipfile.ZIP_DEFLATED
    assert text.file_size > MAX_RATIO * text.compress_size  # small members may: the floor


def test_a_missing_required_member_is_named(packaged, tmp_path):
    bad = forge(packaged, tmp_path / "bad.seqlab", lambda m: m.pop("vocabs.json"))
    with pytest.raises(SeqlabError, match="no member 'vocabs.json'; a seqlab model file holds config.yaml, "
                                          "vocabs.json, model.pt"):
        read_manifest(bad)


def test_a_fifo_given_as_the_model_file_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "model.seqlab"
    os.mkfifo(fifo)
    with pytest.raises(SeqlabError, match="not a regular file"):
        read_manifest(fifo)
