"""Reading a ``.seqlab`` model file without trusting it (the file :mod:`seqlab.apps.package` writes).

A model file is a zip archive whose ``manifest.json`` names every other member with its sha256 (and, in files
written since sizes were recorded, its size). Anyone can recompute those checksums, so a file that passes them
is only self-consistent; before any member is used, :func:`check_model_file` refuses, in one line naming the
member:

1. member names that are absolute, climb out (``..``), hold a backslash, or name one member twice once
   normalised (``./config.yaml`` is ``config.yaml``; names differing only in case are one name on some disks);
   encrypted members and compression other than stored or deflated;
2. a manifest over :data:`MAX_MANIFEST_BYTES` or nested deeper than JSON's bound, not a mapping, or whose
   ``members`` is not a mapping of names to sha256 digests matching the archive's members exactly;
3. sizes: a member whose size differs from the manifest's, or that inflates more than :data:`MAX_RATIO` times
   its compressed size (beyond :data:`RATIO_FLOOR`), or members that add up past that bound; checked before
   anything is inflated, and every member is then read as a stream capped at its size;
4. a checksum that fails (each member hashed as it streams, written to the unpacking folder if one is given);
5. contents: ``config.yaml`` not UTF-8, not YAML, not a mapping, or with a ``!!python`` tag; a feature path
   that is not a member of the file; JSON members not UTF-8, too deep or malformed; an empty label table.
"""
from __future__ import annotations

import hashlib
import os
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import yaml

from seqlab.core.json_limits import load_json
from seqlab.core import runfiles
from seqlab.core.errors import SeqlabError
from seqlab.core.strict import load_yaml
from seqlab.tagging.locate import MODEL_FILE_MANIFEST as MANIFEST

FORMAT = "seqlab-model"
FORMAT_VERSION = 1
#: Largest manifest read: a real one is a few kilobytes.
MAX_MANIFEST_BYTES = 1 << 20
#: Largest config.yaml or JSON member, each read whole into memory (a 400,000-word vocabulary is about 10 MB).
MAX_TEXT_BYTES = 256 << 20
MAX_MEMBERS = 10_000
#: A member may inflate to at most this many times its compressed size, or to :data:`RATIO_FLOOR` bytes,
#: whichever is more (deflate reaches about 1,000 on zeros; a model's text tables reach about 5, its weights
#: about 1.1; ``seqlab package`` stores a member uncompressed rather than exceed it).
MAX_RATIO = 32
RATIO_FLOOR = 1 << 20
CHUNK = 1 << 20
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
#: The members every model file holds; the JSON ones among those that may be present.
REQUIRED = (runfiles.CONFIG, runfiles.VOCABS, runfiles.WEIGHTS)
JSON_MEMBERS = (runfiles.VOCABS, runfiles.FEATURES, runfiles.ENCODER, runfiles.CALIBRATION, runfiles.CARD, runfiles.TEXT)
_HEX = frozenset("0123456789abcdef")


def member_name(raw: str, where: str) -> str:
    """A member's name in its normal form (``./`` and empty parts dropped), or a refusal naming it."""
    if "\\" in raw or "\0" in raw:
        raise SeqlabError(f"{where}: member name {raw!r} holds a backslash or NUL; a model file's names use '/'")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise SeqlabError(f"{where}: member name {raw!r} is absolute; a model file's members lie inside it")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise SeqlabError(f"{where}: member name {raw!r} climbs out with '..'; a model file's members lie inside it")
    if not parts or raw.endswith("/"):
        raise SeqlabError(f"{where}: member {raw!r} is a folder entry; a model file holds files only")
    return "/".join(parts)


@dataclass
class ModelFile:
    """A model file's checked table of contents: its manifest (and the manifest's bytes), each member's zip entry
    by normal name, and each member's size."""

    path: Path
    manifest: dict[str, Any]
    manifest_bytes: bytes
    entries: dict[str, zipfile.ZipInfo]
    sizes: dict[str, int]


def _names(zf: zipfile.ZipFile, where: str) -> dict[str, zipfile.ZipInfo]:
    """Every entry by normal name, after the checks of names, encryption and compression (step 1)."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise SeqlabError(f"{where}: {len(infos)} members; a model file holds at most {MAX_MEMBERS}")
    entries: dict[str, zipfile.ZipInfo] = {}
    folded: dict[str, str] = {}
    for info in infos:
        name = member_name(info.filename, where)
        if name.casefold() in folded:
            raise SeqlabError(f"{where}: members {folded[name.casefold()]!r} and {info.filename!r} are one name; "
                              "a model file names each member once")
        folded[name.casefold()] = info.filename
        if info.flag_bits & 0x1:
            raise SeqlabError(f"{where}: member {name!r} is encrypted; a seqlab model file never is")
        if info.compress_type not in METHODS:
            raise SeqlabError(f"{where}: member {name!r} is compressed with zip method {info.compress_type}; a "
                              f"seqlab model file's members are {' or '.join(METHODS.values())}")
        entries[name] = info
    return entries


def _manifest(zf: zipfile.ZipFile, entries: dict[str, zipfile.ZipInfo], where: str) -> tuple[dict[str, Any], bytes]:
    """The manifest, parsed within bounds, with its format, version and member table checked (step 2)."""
    info = entries.get(MANIFEST)
    if info is None:
        raise SeqlabError(f"{where}: not a seqlab model file (no {MANIFEST})")
    if info.file_size > MAX_MANIFEST_BYTES:
        raise SeqlabError(f"{where}: {MANIFEST} is {info.file_size} bytes; a manifest is at most {MAX_MANIFEST_BYTES}")
    raw = b"".join(stream(zf, info, MANIFEST, where))
    manifest = load_json(raw, f"{where}: {MANIFEST}", unique_keys=True)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SeqlabError(f"{where}: not a seqlab model file ({MANIFEST} does not say format {FORMAT!r})")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise SeqlabError(f"{where}: model file format version {manifest.get('format_version')!r}; this seqlab "
                          f"reads version {FORMAT_VERSION} (made by seqlab {manifest.get('seqlab_version')})")
    listed = manifest.get("members")
    if not isinstance(listed, dict):
        raise SeqlabError(f"{where}: {MANIFEST}: 'members' must map each member's name to its sha256, got "
                          f"{type(listed).__name__}")
    for name, digest in listed.items():
        if name == MANIFEST or member_name(name, f"{where}: {MANIFEST}") != name:
            raise SeqlabError(f"{where}: {MANIFEST}: member name {name!r} is not in its normal form")
        if not (isinstance(digest, str) and len(digest) == 64 and set(digest) <= _HEX):
            raise SeqlabError(f"{where}: {MANIFEST}: member {name!r}: expected a sha256 (64 hex digits), got "
                              f"{str(digest)[:80]!r}")
    return manifest, raw


def _sizes(manifest: dict[str, Any], entries: dict[str, zipfile.ZipInfo], archive_bytes: int, where: str
           ) -> dict[str, int]:
    """Each member's size (the manifest's when it records them), bounded before anything inflates (step 3)."""
    listed: dict[str, str] = manifest["members"]
    for name in sorted(set(entries) - {MANIFEST} - set(listed)):
        raise SeqlabError(f"{where}: member {name!r} is not in the manifest (the file was altered)")
    for name in sorted(set(listed) - set(entries)):
        raise SeqlabError(f"{where}: member {name!r} is missing (the file was altered or truncated)")
    for name in REQUIRED:
        if name not in listed:
            raise SeqlabError(f"{where}: no member {name!r}; a seqlab model file holds {', '.join(REQUIRED)}")
    recorded = manifest.get("sizes")
    if recorded is not None and (not isinstance(recorded, dict) or set(recorded) != set(listed)):
        raise SeqlabError(f"{where}: {MANIFEST}: 'sizes' must give the size of each member and no other")
    sizes, total = {}, 0
    for name, info in sorted(entries.items()):
        size = info.file_size
        if recorded is not None and name in recorded and recorded[name] != size:
            raise SeqlabError(f"{where}: member {name!r} is {size} bytes in the archive, {recorded[name]!r} in the "
                              f"manifest (the file was altered)")
        if size > max(MAX_RATIO * info.compress_size, RATIO_FLOOR):
            raise SeqlabError(f"{where}: member {name!r} would inflate from {info.compress_size} to {size} bytes; "
                              f"refused (a model file's members inflate at most {MAX_RATIO} times)")
        if name in (runfiles.CONFIG, *JSON_MEMBERS) and size > MAX_TEXT_BYTES:
            raise SeqlabError(f"{where}: member {name!r} is {size} bytes; at most {MAX_TEXT_BYTES}")
        sizes[name], total = size, total + size
    if total > MAX_RATIO * archive_bytes + RATIO_FLOOR:
        raise SeqlabError(f"{where}: its members add up to {total} bytes from a {archive_bytes}-byte file; refused "
                          f"(at most {MAX_RATIO} times the file)")
    return sizes


def open_model_file(zf: zipfile.ZipFile, path: Path) -> ModelFile:
    """Steps 1 to 3 of the module doc: names, manifest and sizes, before any member but the manifest is read."""
    where = str(path)
    entries = _names(zf, where)
    manifest, raw = _manifest(zf, entries, where)
    sizes = _sizes(manifest, entries, path.stat().st_size, where)
    return ModelFile(path, manifest, raw, entries, sizes)


def stream(zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, where: str) -> Iterator[bytes]:
    """A member's bytes in chunks, never more than its recorded size (a member that inflates past it is refused)."""
    left = info.file_size
    with zf.open(info) as handle:
        while chunk := handle.read(min(CHUNK, left + 1)):
            left -= len(chunk)
            if left < 0:
                raise SeqlabError(f"{where}: member {name!r} inflates past its recorded size {info.file_size}")
            yield chunk


def verify_members(zf: zipfile.ZipFile, model: ModelFile, into: Path | None = None) -> dict[str, bytes]:
    """Step 4: every member's sha256 checked as it streams (and written under ``into`` when given, each file
    created new); returns the bytes of config.yaml and the JSON members, for :func:`check_contents`."""
    where, texts = str(model.path), {}
    for name, digest in sorted(model.manifest["members"].items()):
        sha = hashlib.sha256()
        keep = name in (runfiles.CONFIG, *JSON_MEMBERS)
        chunks = []
        out = None
        if into is not None:
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            out = os.open(into / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            for chunk in stream(zf, model.entries[name], name, where):
                sha.update(chunk)
                if keep:
                    chunks.append(chunk)
                if out is not None:
                    os.write(out, chunk)
        finally:
            if out is not None:
                os.close(out)
        if sha.hexdigest() != digest:
            raise SeqlabError(f"{where}: member {name!r} fails its sha256 check (the file was altered or corrupted)")
        if keep:
            texts[name] = b"".join(chunks)
    return texts


def config_tree(data: bytes, where: str) -> dict[str, Any]:
    """The member config.yaml as a non-empty mapping (YAML's safe loader, strict bounds), or a one-line refusal."""
    what = f"{where}: member {runfiles.CONFIG!r}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SeqlabError(f"{what}: not valid UTF-8 (byte {err.object[err.start]:#04x} at offset {err.start})"
                          ) from None
    try:
        tree = load_yaml(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise SeqlabError(f"{what}{at}: not a seqlab config: {problem}") from None
    if not isinstance(tree, dict) or not tree:
        got = "an empty document" if not tree else f"a {type(tree).__name__}"
        raise SeqlabError(f"{what}: expected a mapping of config sections, got {got}")
    return tree


def feature_entries(tree: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The config tree's ``model.features`` entries, each checked to be a mapping (none: an empty list)."""
    model = tree.get("model")
    if model is None:
        return []
    features = model.get("features") if isinstance(model, dict) else None
    if not isinstance(model, dict) or not isinstance(features, (list, type(None))):
        raise SeqlabError(f"{where}: member {runfiles.CONFIG!r}: model and model.features must be a mapping and a list")
    for i, feature in enumerate(features or ()):
        if not isinstance(feature, dict) or not isinstance(feature.get("path"), (str, type(None))):
            raise SeqlabError(f"{where}: member {runfiles.CONFIG!r}: model.features[{i}] must be a mapping whose "
                              "path is a string")
    return list(features or ())


def check_contents(model: ModelFile, texts: dict[str, bytes]) -> dict[str, Any]:
    """Step 5: config.yaml, its feature paths (each a member of this file, or a folder of members) and the JSON
    members; returns the config tree."""
    where, members = str(model.path), model.manifest["members"]
    tree = config_tree(texts[runfiles.CONFIG], where)
    for i, feature in enumerate(feature_entries(tree, where)):
        value = feature.get("path")
        if value and value not in members and not any(name.startswith(f"{value}/") for name in members):
            raise SeqlabError(f"{where}: member {runfiles.CONFIG!r}: model.features[{i}].path {value!r} is not a "
                              "member of this model file (its feature files are read from the file itself, files/...)")
    parsed = {name: load_json(texts[name], f"{where}: member {name!r}") for name in JSON_MEMBERS if name in texts}
    for name, value in parsed.items():
        if not isinstance(value, dict):
            raise SeqlabError(f"{where}: member {name!r}: expected a JSON object, got {type(value).__name__}")
    _check_vocabularies(parsed[runfiles.VOCABS], f"{where}: member {runfiles.VOCABS!r}")
    return tree


def _check_vocabularies(vocabs: dict[str, Any], what: str) -> None:
    """Each vocabulary a mapping with an ``itos`` list of strings; a label table (no padding or unknown entry)
    not empty."""
    for key, vocab in vocabs.items():
        itos = vocab.get("itos") if isinstance(vocab, dict) else None
        if not isinstance(itos, list) or not all(isinstance(item, str) for item in itos):
            raise SeqlabError(f"{what}: vocabulary {key!r} must be a mapping whose itos is a list of strings")
        if not itos and not vocab.get("pad") and not vocab.get("unk"):
            raise SeqlabError(f"{what}: the label table {key!r} is empty; a model predicts at least one label")


def check_model_file(zf: zipfile.ZipFile, path: Path, into: Path | None = None) -> tuple[ModelFile, dict[str, Any]]:
    """Every check of the module doc, in order; with ``into``, the members are written there as they are
    verified. Returns the checked table of contents and the config tree."""
    model = open_model_file(zf, path)
    return model, check_contents(model, verify_members(zf, model, into))


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data`` in hex, as the manifest records every member's."""
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    """The sha256 of a file in hex, read in chunks (a model file, a member of an unpacked copy)."""
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            sha.update(chunk)
    return sha.hexdigest()


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The manifest of a ``.seqlab`` file, after every check of this module (names, sizes, every member's
    checksum, contents)."""
    path = Path(path)
    with reading(path) as zf:
        return check_model_file(zf, path)[0].manifest


@contextmanager
def reading(path: Path) -> Iterator[zipfile.ZipFile]:
    """The model file open as a zip archive; what the zip module raises on a damaged file is one line naming it."""
    if not path.is_file():
        raise SeqlabError(f"{path}: no such model file" if not path.exists() else
                          f"{path}: not a regular file; a model file is a .seqlab file")
    try:
        with zipfile.ZipFile(path) as zf:
            yield zf
    except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError) as err:
        raise SeqlabError(f"{path}: not a seqlab model file, or a truncated one ({err})") from None
    except OSError as err:
        raise SeqlabError(f"{path}: cannot be read: {err.strerror or err}") from None
