"""Portable model files: one ``.seqlab`` file holding everything a trained model needs to load.

``seqlab package RUN --out NAME.seqlab`` writes a zip archive of

* ``manifest.json``: format and version, seqlab's version, the task, the sha256 of every other member,
  the training data and the run's scores;
* ``config.yaml`` (feature paths rewritten to members of the file), ``vocabs.json``, ``features.json``;
* ``encoder.json``: which pretrained transformer the model reads (path and weights' sha256); the encoder itself
  is not packaged (a frozen one is installed separately; a fine-tuned one's weights are in ``model.pt``);
* ``model.pt``: the best weights, tensors only (``torch.load(weights_only=True)``);
* ``files/<i>/...``: every file a token feature reads at load time (Brown paths, word vectors, an LS folder),
  pruned to the words the model needs (:mod:`seqlab.tagging.prune`; ``--full-features`` keeps them whole).

Loading checks the format and every checksum before anything is read, so a truncated, altered or foreign
file is refused with one line naming what failed; the verified members are unpacked once into
``$SEQLAB_CACHE/models/<sha256 of the file>/`` (a temporary folder when the cache is off), which is then an
ordinary run directory: the next load of the same file reads from there.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any, Iterator

import yaml

from seqlab.core import rundir
from seqlab.core.atomic import atomic_open
from seqlab.core.errors import SeqlabError
from seqlab.data.vocab import load_vocabs

FORMAT = "seqlab-model"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SUFFIX = ".seqlab"
_RUN_MEMBERS = (rundir.CONFIG, rundir.VOCABS, rundir.FEATURES, rundir.WEIGHTS, rundir.ENCODER)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _feature_files(tree: dict[str, Any], run_dir: Path) -> Iterator[tuple[str, Path]]:
    """(member prefix, file or folder on disk) for every token feature that reads one; rewrites the config
    tree's paths to the members they become."""
    from seqlab.core.paths import resolve_data_path

    for i, feature in enumerate((tree.get("model") or {}).get("features") or ()):
        value = feature.get("path")
        if not value:
            continue
        source = resolve_data_path(value, key=f"model.features[{i}].path")
        if not source.exists():
            raise SeqlabError(f"{run_dir}: model.features[{i}].path {value!r} ({source}) does not exist, so it "
                              "cannot be packaged; give the file (SEQLAB_DATA) it was trained with")
        prefix = f"files/{i}/{source.name}"
        feature["path"] = prefix
        yield prefix, source


def _members(run_dir: Path, prune: bool = True) -> dict[str, bytes]:
    """The archive's members (manifest excluded), as bytes; with ``prune``, a tagger's feature tables kept to
    the words it needs (:mod:`seqlab.tagging.prune`)."""
    from seqlab.apps.tasks import task_of
    from seqlab.tagging.prune import PRUNERS, copy_whole, pruned_members

    tree = yaml.safe_load((run_dir / rundir.CONFIG).read_text(encoding="utf-8"))
    members: dict[str, bytes] = {}
    features = (tree.get("model") or {}).get("features") or ()
    run_words = task_of(tree, run_dir / rundir.CONFIG).words
    words = run_words(run_dir) if prune and run_words is not None and features else None
    for (prefix, source), feature in zip(list(_feature_files(tree, run_dir)), [f for f in features if f.get("path")]):
        try:
            if words is not None and feature.get("type") in PRUNERS:
                members.update(pruned_members(feature, source, prefix, words))
            else:
                members.update(copy_whole(source, prefix))
        except (ValueError, OSError) as err:  # features/ names the file and what was wrong
            raise SeqlabError(f"{run_dir}: cannot package {source}: {err}") from None
    members[rundir.CONFIG] = yaml.safe_dump(tree, sort_keys=False).encode("utf-8")
    for name in _RUN_MEMBERS[1:]:
        if (run_dir / name).is_file():
            members[name] = (run_dir / name).read_bytes()
    return members


def check_run(run_dir: Path) -> None:
    """Refuse a run directory that would make a model file which cannot load: its config (read strictly), its
    vocabularies, its fitted features' state and its weights (``weights_only``) are each read once here."""
    from seqlab.apps.tasks import read_config

    if not (run_dir / rundir.WEIGHTS).is_file():
        raise SeqlabError(f"{run_dir}: no {rundir.WEIGHTS} (is it a finished seqlab run directory?)")
    read_config(run_dir / rundir.CONFIG)
    load_vocabs(run_dir / rundir.VOCABS)
    rundir.load_feature_state(run_dir)
    rundir.load_weights(run_dir)


def _manifest(run_dir: Path, members: dict[str, bytes]) -> dict[str, Any]:
    from seqlab.apps.tasks import DEFAULT_TASK
    from seqlab.core.version import __version__

    tree = yaml.safe_load(members[rundir.CONFIG])
    metrics_path = run_dir / rundir.METRICS
    metrics = json.loads(metrics_path.read_text(encoding="utf-8")) if metrics_path.is_file() else {}
    keys = ("f1", "official_macro_f1", "accuracy")  # span tagging, relation, token labels (POS)
    scores = {split: next((metrics[split][k] for k in keys if k in metrics[split]), None)
              for split in ("dev", "test") if isinstance(metrics.get(split), dict)}
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "seqlab_version": __version__,
            "task": tree.get("task", DEFAULT_TASK), "training_data": tree.get("data", {}),
            "scores": scores, "measure": metrics.get("measure"), "best_epoch": metrics.get("best_epoch"),
            "members": {name: _sha256(data) for name, data in sorted(members.items())}}


def package(run_dir: str | Path, out: str | Path, *, prune: bool = True) -> dict[str, Any]:
    """Write the model of ``run_dir`` as one ``.seqlab`` file at ``out`` (atomically); returns its manifest.
    With ``prune`` (the default) the feature tables are kept to the words the model needs; without, whole."""
    run_dir, out = Path(run_dir), Path(out)
    if not (run_dir / rundir.CONFIG).is_file():
        raise SeqlabError(f"{run_dir}: not a seqlab run directory (no {rundir.CONFIG})")
    if out.is_dir():
        raise SeqlabError(f"--out {out}: is a directory; give a file name such as {out / run_dir.name}{SUFFIX}")
    check_run(run_dir)
    members = _members(run_dir, prune)
    manifest = _manifest(run_dir, members)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, "wb") as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2))
        for name, data in sorted(members.items()):
            zf.writestr(name, data)
    return manifest


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The manifest of a ``.seqlab`` file, after checking its format, version and every member's checksum."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            return _verified(zf, path)
    except (zipfile.BadZipFile, EOFError, zlib.error) as err:  # zlib: a damaged compressed member
        raise SeqlabError(f"{path}: not a seqlab model file, or a truncated one ({err})") from None
    except OSError as err:
        raise SeqlabError(f"{path}: cannot be read: {err.strerror or err}") from None


def _verified(zf: zipfile.ZipFile, path: Path) -> dict[str, Any]:
    if MANIFEST not in zf.namelist():
        raise SeqlabError(f"{path}: not a seqlab model file (no {MANIFEST})")
    try:
        manifest = json.loads(zf.read(MANIFEST))
    except ValueError as err:
        raise SeqlabError(f"{path}: {MANIFEST} is not valid JSON ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SeqlabError(f"{path}: not a seqlab model file ({MANIFEST} does not say format {FORMAT!r})")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise SeqlabError(f"{path}: model file format version {manifest.get('format_version')!r}; this seqlab "
                          f"reads version {FORMAT_VERSION} (made by seqlab {manifest.get('seqlab_version')})")
    listed = manifest.get("members") or {}
    for name in sorted(set(zf.namelist()) - {MANIFEST} - set(listed)):
        raise SeqlabError(f"{path}: member {name!r} is not in the manifest (the file was altered)")
    for name, digest in listed.items():
        if name not in zf.namelist():
            raise SeqlabError(f"{path}: member {name!r} is missing (the file was altered or truncated)")
        if _sha256(zf.read(name)) != digest:
            raise SeqlabError(f"{path}: member {name!r} fails its sha256 check (the file was altered or corrupted)")
    return manifest


def unpack(path: str | Path) -> Path:
    """Verify a ``.seqlab`` file and unpack it into a run directory (cached by the file's sha256); returns it."""
    from features.vector_cache import cache_root

    path = Path(path)
    if not path.is_file():
        raise SeqlabError(f"{path}: no such model file")
    data = path.read_bytes()
    root = cache_root()
    target = (root / "models" / _sha256(data)) if root is not None else Path(tempfile.mkdtemp(prefix="seqlab-model-"))
    if (target / rundir.CONFIG).is_file():
        return target
    read_manifest(path)
    if root is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent if root is not None else None))
    try:
        with zipfile.ZipFile(path) as zf:
            zf.extractall(staging)
        tree = yaml.safe_load((staging / rundir.CONFIG).read_text(encoding="utf-8"))
        for feature in (tree.get("model") or {}).get("features") or ():
            if feature.get("path"):
                feature["path"] = str(target / feature["path"])  # absolute: read from the unpacked copy
        (staging / rundir.CONFIG).write_text(yaml.safe_dump(tree, sort_keys=False), encoding="utf-8")
        if root is None:
            shutil.rmtree(target)
        os.replace(staging, target)  # atomic: another process either sees the whole folder or none
    except OSError as err:
        shutil.rmtree(staging, ignore_errors=True)
        if (target / rundir.CONFIG).is_file():  # another process unpacked it first
            return target
        raise SeqlabError(f"{path}: cannot unpack into {target}: {err.strerror or err}") from None
    return target
