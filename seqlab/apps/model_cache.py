"""The unpacked copies of model files: a checked ``.seqlab`` file as an ordinary run directory that loading reads.

The members that :mod:`seqlab.apps.model_file` checked are unpacked into ``$SEQLAB_CACHE/models/<sha256 of the
file>/``, a run directory whose feature paths point inside it; the next load of the same file uses that copy only
when every file in it still matches the model file, and unpacks it again otherwise. With the cache off the copy is
temporary and removed once the model is loaded (:func:`unpacked`). Staging folders that a killed process left in
the cache are removed the next time the cache is used (:func:`remove_abandoned`).
"""
from __future__ import annotations

import atexit
import copy
import logging
import os
import shutil
import stat
import tempfile
import time
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import yaml

from seqlab.apps.model_file import (MANIFEST, ModelFile, check_model_file, config_tree, feature_entries, file_sha256,
                                    open_model_file, reading, sha256_hex, stream)
from seqlab.core import runfiles
from seqlab.core.errors import SeqlabError

log = logging.getLogger("seqlab")


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
    out[runfiles.CONFIG] = (len(config), sha256_hex(config))
    out[MANIFEST] = (len(model.manifest_bytes), sha256_hex(model.manifest_bytes))
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
        if (target / name).stat().st_size != size or file_sha256(target / name) != digest:
            return f"has {name} altered"
    return None


def _unpack_into(zf: zipfile.ZipFile, path: Path, staging: Path, target: Path) -> dict[str, tuple[int, str]]:
    """Check the model file and write its members into ``staging`` (to become ``target``), read-only; returns
    what the copy must hold."""
    model, tree = check_model_file(zf, path, staging)
    expected = _expected(model, tree, target)
    (staging / runfiles.CONFIG).unlink()
    for name, data in ((runfiles.CONFIG, _localised(tree, target)), (MANIFEST, model.manifest_bytes)):
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
    with reading(path) as zf:
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
        target = root / "models" / file_sha256(path)
        if target.is_dir():
            model = open_model_file(zf, path)
            raw = b"".join(stream(zf, model.entries[runfiles.CONFIG], runfiles.CONFIG, str(path)))
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
