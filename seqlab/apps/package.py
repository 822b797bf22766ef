"""Portable model files: one ``.seqlab`` file holding everything a trained model needs to load.

``seqlab package RUN --out NAME.seqlab`` writes a zip archive of

* ``manifest.json``: format and version, seqlab's version, the task, the sha256 and size of every other member,
  the training data and the run's scores;
* ``config.yaml`` (feature paths rewritten to members of the file), ``vocabs.json``, ``features.json``;
* ``encoder.json``: which pretrained transformer the model reads (path and weights' sha256); the encoder itself
  is not packaged (a frozen one is installed separately; a fine-tuned one's weights are in ``model.pt``);
* ``model.pt``: the best weights, tensors only (``torch.load(weights_only=True)``);
* ``files/<i>/...``: every file a token feature reads at load time (Brown paths, word vectors, an LS folder),
  pruned to the words the model needs (:mod:`seqlab.tagging.prune`; ``--full-features`` keeps them whole).

Loading trusts nothing in the file: :mod:`seqlab.apps.model_file` checks member names, sizes, every checksum and
the contents before anything is used, and refuses a file that fails in one line naming the member. The checked
members are unpacked into ``$SEQLAB_CACHE/models/<sha256 of the file>/``, an ordinary run directory whose
feature paths point inside it; the next load of the same file uses that copy only when every file in it still
matches the model file, and unpacks it again otherwise. With the cache off the copy is temporary and removed
once the model is loaded (:func:`unpacked`). Staging folders that a killed process left in the cache are removed
the next time the cache is used (:func:`remove_abandoned`).
"""
from __future__ import annotations

import atexit
import copy
import hashlib
import json
import logging
import os
import shutil
import stat
import tempfile
import time
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import yaml

from seqlab.core.strict import load_yaml, read_mapping
from seqlab.apps.model_file import (CHUNK, FORMAT, FORMAT_VERSION, MANIFEST, MAX_RATIO, RATIO_FLOOR, ModelFile,
                                    check_model_file, config_tree, feature_entries, open_model_file, stream)
from seqlab.core import rundir
from seqlab.core.atomic import atomic_open
from seqlab.core.errors import SeqlabError
from seqlab.core.json_limits import read_json
from seqlab.data.vocab import load_vocabs

SUFFIX = ".seqlab"
_RUN_MEMBERS = (rundir.CONFIG, rundir.VOCABS, rundir.FEATURES, rundir.WEIGHTS, rundir.ENCODER, rundir.CALIBRATION,
                rundir.CARD)
log = logging.getLogger("seqlab")


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

    tree = read_mapping(run_dir / rundir.CONFIG, "run config")
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

    tree = load_yaml(members[rundir.CONFIG].decode("utf-8"))
    metrics_path = run_dir / rundir.METRICS
    metrics = read_json(metrics_path) if metrics_path.is_file() else {}
    if not isinstance(metrics, dict):
        raise SeqlabError(f"{metrics_path}: expected a JSON object of scores, got {type(metrics).__name__}")
    keys = ("f1", "official_macro_f1", "macro_f1", "accuracy")  # spans, SemEval, relation JSONL, token labels
    scores = {split: next((metrics[split][k] for k in keys if k in metrics[split]), None)
              for split in ("dev", "test") if isinstance(metrics.get(split), dict)}
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "seqlab_version": __version__,
            "task": tree.get("task", DEFAULT_TASK), "training_data": tree.get("data", {}),
            "scores": scores, "measure": metrics.get("measure"), "best_epoch": metrics.get("best_epoch"),
            "members": {name: _sha256(data) for name, data in sorted(members.items())},
            "sizes": {name: len(data) for name, data in sorted(members.items())}}


def package(run_dir: str | Path, out: str | Path, *, prune: bool = True, about: dict[str, str] | None = None,
            calibrate: bool = True) -> dict[str, Any]:
    """Write the model of ``run_dir`` as one ``.seqlab`` file at ``out`` (atomically); returns its manifest.
    With ``prune`` (the default) the feature tables are kept to the words the model needs; without, whole.
    The file gets a model card (:mod:`seqlab.apps.card`; ``about``: its person-written part) and, for a tagger
    with ``calibrate``, its confidences' temperature fitted on the dev set unless the run has one. A model
    file given as ``run_dir`` is rewritten with a new card (:func:`refresh`)."""
    run_dir, out = Path(run_dir), Path(out)
    if run_dir.is_file():
        return refresh(run_dir, out, about=about, calibrate=calibrate)
    if not (run_dir / rundir.CONFIG).is_file():
        raise SeqlabError(f"{run_dir}: not a seqlab run directory (no {rundir.CONFIG})")
    if out.is_dir():
        raise SeqlabError(f"--out {out}: is a directory; give a file name such as {out / run_dir.name}{SUFFIX}")
    check_run(run_dir)
    members = _members(run_dir, prune)
    from seqlab.apps.card import describe

    metrics = read_json(run_dir / rundir.METRICS) if (run_dir / rundir.METRICS).is_file() else {}
    added = describe(_load(run_dir), read_mapping(run_dir / rundir.CONFIG, "run config"),
                     metrics if isinstance(metrics, dict) else {}, about or {},
                     calibration=rundir.load_json(run_dir, rundir.CALIBRATION), calibrate=calibrate)
    members.update({name: json.dumps(value, indent=2).encode("utf-8") for name, value in added.items()})
    manifest = _manifest(run_dir, members)
    _write(out, manifest, members)
    return manifest


def _load(run_dir: Path) -> Any:
    """The model of a run directory (or an unpacked model file) on the CPU, by its config's task."""
    from seqlab.apps.tasks import task_of

    return task_of(read_mapping(run_dir / rundir.CONFIG, "run config"), run_dir / rundir.CONFIG).load(run_dir, "cpu")


def _write(out: Path, manifest: dict[str, Any], members: dict[str, bytes]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, "wb") as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2))
        for name, data in sorted(members.items()):
            _deflate(zf, name, data)


def refresh(path: str | Path, out: str | Path, *, about: dict[str, str] | None = None,
            calibrate_on: str | Path | None = None, calibrate: bool = True) -> dict[str, Any]:
    """Rewrite the model file ``path`` at ``out`` (the same path: atomically in place) with a new card
    (``about`` over the old card's person-written part) and, with ``calibrate_on`` (a labelled file, the dev
    set), a temperature fitted there; a tagger with no temperature yet (and ``calibrate``) gets one fitted on
    its dev set when that file is here. Every other member is kept byte for byte. Returns the new manifest."""
    from seqlab.apps.card import about_of, describe

    path, out = Path(path), Path(out)
    with unpacked(path) as run_dir:
        model = _load(run_dir)
    with _reading(path) as zf:
        checked, tree = check_model_file(zf, path)
        members = {name: b"".join(stream(zf, checked.entries[name], name, str(path)))
                   for name in checked.manifest["members"]}
    old_card = json.loads(members[rundir.CARD]) if rundir.CARD in members else None
    if calibrate_on:
        if model.task != "tagging":
            raise SeqlabError(f"{path}: calibration is for taggers; this is a {model.task} model")
        members[rundir.CALIBRATION] = json.dumps(model.calibrate(calibrate_on, strict=True), indent=2).encode("utf-8")
    recorded = {split: {"f1": value} for split, value in (checked.manifest.get("scores") or {}).items()
                if isinstance(value, (int, float))}
    calibration = members.get(rundir.CALIBRATION)
    added = describe(model, tree, recorded, about_of(old_card) | (about or {}), calibrate=calibrate,
                     calibration=json.loads(calibration) if calibration is not None else None)
    members.update({name: json.dumps(value, indent=2).encode("utf-8") for name, value in added.items()})
    manifest = dict(checked.manifest, members={name: _sha256(data) for name, data in sorted(members.items())},
                    sizes={name: len(data) for name, data in sorted(members.items())})
    _write(out, manifest, members)
    return manifest


def _deflate(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    """Write one member deflated, or stored when deflate would shrink it past what loading accepts
    (:data:`~seqlab.apps.model_file.MAX_RATIO`; a table of zeros deflates about 1,000 times)."""
    method = zipfile.ZIP_DEFLATED
    if len(data) > RATIO_FLOOR:
        packer = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
        if len(data) > MAX_RATIO * (len(packer.compress(data)) + len(packer.flush())):
            method = zipfile.ZIP_STORED
    zf.writestr(name, data, compress_type=method)


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The manifest of a ``.seqlab`` file, after every check of :mod:`seqlab.apps.model_file` (names, sizes,
    every member's checksum, contents)."""
    path = Path(path)
    with _reading(path) as zf:
        return check_model_file(zf, path)[0].manifest


@contextmanager
def _reading(path: Path) -> Iterator[zipfile.ZipFile]:
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


def _file_sha256(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            sha.update(chunk)
    return sha.hexdigest()


def _localised(tree: dict[str, Any], target: Path) -> bytes:
    """config.yaml as the unpacked folder holds it: each feature path (a member) made absolute inside ``target``."""
    for feature in feature_entries(tree, str(target)):
        if feature.get("path"):
            feature["path"] = str(target / feature["path"])
    return yaml.safe_dump(tree, sort_keys=False).encode("utf-8")


def _expected(model: ModelFile, tree: dict[str, Any], target: Path) -> dict[str, tuple[int, str]]:
    """(size, sha256) of every file an unpacked copy of ``model`` at ``target`` holds."""
    config = _localised(copy.deepcopy(tree), target)
    out = {name: (model.sizes[name], digest) for name, digest in model.manifest["members"].items()}
    out[rundir.CONFIG] = (len(config), _sha256(config))
    out[MANIFEST] = (len(model.manifest_bytes), _sha256(model.manifest_bytes))
    return out


def _cache_problem(target: Path, expected: dict[str, tuple[int, str]]) -> str | None:
    """What is wrong with the unpacked copy at ``target`` (a file missing, altered, extra, or a link), or None."""
    seen = set()
    for folder, dirs, files in os.walk(target):
        for entry in dirs + files:
            full = Path(folder) / entry
            name = full.relative_to(target).as_posix()
            if full.is_symlink() or (entry in files and not stat.S_ISREG(full.lstat().st_mode)):
                return f"holds {name}, which is not a regular file"
            if entry in files:
                if name not in expected:
                    return f"holds {name}, which the model file does not"
                seen.add(name)
    for name, (size, digest) in sorted(expected.items()):
        if name not in seen:
            return f"lacks {name}"
        if (target / name).stat().st_size != size or _file_sha256(target / name) != digest:
            return f"has {name} altered"
    return None


def _unpack_into(zf: zipfile.ZipFile, path: Path, staging: Path, target: Path) -> dict[str, tuple[int, str]]:
    """Check the model file and write its members into ``staging`` (to become ``target``), read-only; returns
    what the copy must hold."""
    model, tree = check_model_file(zf, path, staging)
    expected = _expected(model, tree, target)
    (staging / rundir.CONFIG).unlink()
    for name, data in ((rundir.CONFIG, _localised(tree, target)), (MANIFEST, model.manifest_bytes)):
        (staging / name).write_bytes(data)
    for name in expected:
        (staging / name).chmod(0o444)
    return expected


def _install(staging: Path, target: Path, expected: dict[str, tuple[int, str]]) -> None:
    """Move ``staging`` to ``target`` atomically; a copy there already is kept when sound (another process
    unpacked it first), else set aside and removed."""
    try:
        os.replace(staging, target)  # atomic: another process sees the whole folder or none
        return
    except OSError:
        if not target.is_dir():
            raise
    if _cache_problem(target, expected) is None:
        shutil.rmtree(staging, ignore_errors=True)
        return
    stale = Path(tempfile.mkdtemp(prefix=".stale-", dir=target.parent))
    os.replace(target, stale / target.name)
    os.replace(staging, target)
    shutil.rmtree(stale, ignore_errors=True)


#: Unpacked copies in the temporary folder (the cache off): removed by :func:`unpacked`, or at exit.
_TEMPORARY: set[Path] = set()
#: Folders that unpacking leaves in ``$SEQLAB_CACHE/models/`` only while at work (a staging copy, a copy set aside).
_WORK_PREFIXES = (".unpack-", ".stale-")
#: Seconds after which such a folder that no process holds locked was left by a killed process and is removed.
ABANDONED_AFTER = 3600.0


def _lock(folder: Path) -> int | None:
    """An open descriptor of ``folder`` holding an exclusive ``flock`` on it (released when closed, or when the
    process dies: a kill -9 leaves no stale lock); None where flock is unavailable. Raises BlockingIOError
    when another process holds the lock."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return None
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise
    except OSError:  # a file system without flock: the age alone decides
        os.close(fd)
        return None
    return fd


def remove_abandoned(models: Path, *, older_than: float = ABANDONED_AFTER) -> int:
    """Remove what a killed unpack left in the model cache folder ``models``: ``.unpack-*`` staging folders and
    ``.stale-*`` set-aside copies last changed more than ``older_than`` seconds ago that no process holds locked
    (a live unpack holds its staging folder's lock, :func:`_lock`). Returns how many were removed."""
    try:
        entries = [entry for entry in models.iterdir() if entry.name.startswith(_WORK_PREFIXES)]
    except OSError:  # no cache folder yet, or unreadable: nothing to sweep
        return 0
    removed, now = 0, time.time()
    for entry in entries:
        try:
            info = entry.lstat()
            if not stat.S_ISDIR(info.st_mode) or now - info.st_mtime < older_than:
                continue
            fd = _lock(entry)
        except OSError:  # BlockingIOError: in use by a live process; else gone meanwhile
            continue
        try:
            shutil.rmtree(entry, ignore_errors=True)
        finally:
            if fd is not None:
                os.close(fd)
        removed += not entry.exists()
    if removed:
        log.info("%s: removed %d unpacking folder(s) that an interrupted process left", models, removed)
    return removed


def _remove_temporary(target: Path) -> None:
    if target in _TEMPORARY:
        _TEMPORARY.discard(target)
        shutil.rmtree(target, ignore_errors=True)


atexit.register(lambda: [_remove_temporary(target) for target in list(_TEMPORARY)])


def unpack(path: str | Path) -> Path:
    """Check a ``.seqlab`` file and unpack it into a run directory; returns it. With the cache on, the copy in
    ``$SEQLAB_CACHE/models/<sha256 of the file>/`` is used when every file in it still matches the model file
    (size and sha256; a copy altered, with a file missing or added, is unpacked again); with the cache off, a
    new temporary folder, removed at exit (:func:`unpacked` removes it as soon as the model is loaded)."""
    from features.vector_cache import cache_root

    path = Path(path)
    root = cache_root()
    with _reading(path) as zf:
        if root is None:
            target = Path(tempfile.mkdtemp(prefix="seqlab-model-"))
            _TEMPORARY.add(target)
            try:
                _unpack_into(zf, path, target, target)
            except BaseException as err:
                _remove_temporary(target)
                if isinstance(err, OSError):
                    raise SeqlabError(f"{path}: cannot unpack into {target}: {err.strerror or err}") from None
                raise
            return target
        remove_abandoned(root / "models")
        target = root / "models" / _file_sha256(path)
        if target.is_dir():
            model = open_model_file(zf, path)
            raw = b"".join(stream(zf, model.entries[rundir.CONFIG], rundir.CONFIG, str(path)))
            problem = _cache_problem(target, _expected(model, config_tree(raw, str(path)), target))
            if problem is None:
                return target
            log.warning("%s: its unpacked copy %s %s; unpacking it again", path, target, problem)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent))
            lock = _lock(staging)  # held while unpacking: another process's sweep leaves the folder alone
        except OSError as err:
            raise SeqlabError(f"{path}: cannot unpack into {target}: {err.strerror or err}") from None
        try:
            _install(staging, target, _unpack_into(zf, path, staging, target))
        except OSError as err:
            raise SeqlabError(f"{path}: cannot unpack into {target}: {err.strerror or err}") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            if lock is not None:
                os.close(lock)
    return target


@contextmanager
def unpacked(path: str | Path) -> Iterator[Path]:
    """:func:`unpack` for as long as a model loads: a temporary copy (the cache off) is removed afterwards
    (a loaded model holds what it read in memory)."""
    target = unpack(path)
    try:
        yield target
    finally:
        _remove_temporary(target)
