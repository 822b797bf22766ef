"""A binary cache of parsed word-vector files.

Parsing GloVe 6B 50d (400,000 gzipped text lines) took 18 s (features.embeddings) and 71 s (gensim) on this
2-core machine with three trainings running, at the start of every training run and every ``seqlab tag`` of a
window model; reading the cached matrix took 0.11 s and 0.65 s (RESULTS.md, Speed). An entry is keyed by the
file's resolved path, size and modification time and by the reader (``kind``), so an edited or replaced
file is parsed again.

Entries live in ``$SEQLAB_CACHE/vectors/<key>/`` (``words.txt``, ``matrix.npy``, ``meta.json``);
``SEQLAB_CACHE`` defaults to ``$XDG_CACHE_HOME/seqlab`` (``~/.cache/seqlab``) and ``SEQLAB_CACHE=off``
turns the cache off. An entry is written to a temporary folder and renamed into place, so a reader never
sees half of one; an entry that cannot be read is parsed again, and a cache folder that cannot be written
(a read-only home) only costs the speed-up. The matrix is read with ``allow_pickle=False``.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

ENV = "SEQLAB_CACHE"
OFF = ("off", "0", "no", "false", "none")
VERSION = 1  # bump when the entry layout changes
WORDS, MATRIX, META = "words.txt", "matrix.npy", "meta.json"

Vectors = tuple[list[str], np.ndarray]


def cache_root() -> Path | None:
    """The cache folder, or None when ``SEQLAB_CACHE`` turns the cache off."""
    value = os.environ.get(ENV, "").strip()
    if value and value.lower() in OFF:
        return None
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "seqlab"


def entry_for(path: Path, kind: str, root: Path) -> Path:
    """The entry folder of ``path`` as read by ``kind``."""
    stat = path.stat()
    key = f"{VERSION}|{kind}|{path}|{stat.st_size}|{stat.st_mtime_ns}"
    return root / "vectors" / hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]


def cached_vectors(path: str | os.PathLike[str], kind: str, read: Callable[[], Vectors]) -> Vectors:
    """``read()``'s words and ``(len(words), dim)`` float32 matrix for the file at ``path``, from the cache
    when an entry for this file and ``kind`` exists, else parsed by ``read`` and stored."""
    root = cache_root()
    if root is None:
        return read()
    path = Path(path).resolve()
    entry = entry_for(path, kind, root)
    start = time.perf_counter()
    found = _load(entry)
    if found is not None:
        logger.info("%s: %d vectors from the cache %s (%.2f s)", path, len(found[0]), entry,
                    time.perf_counter() - start)
        return found
    words, matrix = read()
    _store(entry, words, matrix, {"source": str(path), "kind": kind, "rows": len(words),
                                  "dim": int(matrix.shape[1]) if matrix.ndim == 2 else 0})
    return words, matrix


def _load(entry: Path) -> Vectors | None:
    if not (entry / META).is_file():
        return None
    try:
        with open(entry / WORDS, encoding="utf-8", newline="") as handle:  # no newline translation: a word may hold \r
            text = handle.read()
        words = text.split("\n") if text else []
        matrix = np.load(entry / MATRIX, allow_pickle=False)
    except (OSError, ValueError, UnicodeDecodeError) as err:
        logger.warning("ignoring the unreadable vector cache entry %s (%s); parsing the file again", entry, err)
        return None
    if matrix.ndim != 2 or matrix.shape[0] != len(words) or matrix.dtype != np.float32:
        logger.warning("ignoring the vector cache entry %s (%d words, matrix %s %s); parsing the file again",
                       entry, len(words), matrix.shape, matrix.dtype)
        return None
    return words, matrix


def _store(entry: Path, words: list[str], matrix: np.ndarray, meta: dict[str, object]) -> None:
    if any("\n" in word for word in words) or matrix.dtype != np.float32 or matrix.ndim != 2:
        return  # not representable in this layout: keep parsing such files
    tmp: Path | None = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
        with open(tmp / WORDS, "w", encoding="utf-8", newline="") as handle:
            handle.write("\n".join(words))
        np.save(tmp / MATRIX, matrix, allow_pickle=False)
        (tmp / META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        tmp.chmod(0o755)
        os.replace(tmp, entry)  # fails if another process stored the entry first: theirs stays
        tmp = None
        logger.info("cached %d vectors of %s in %s", len(words), meta["source"], entry)
    except OSError as err:
        if (entry / META).is_file():  # another process stored the same entry first
            return
        logger.warning("could not write the vector cache entry %s (%s); set %s=off to skip the cache",
                       entry, err, ENV)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
