"""LS lexical-similarity vectors (Ghaddar & Langlais, COLING 2018, section 3): load, look up, inspect.

Words and entity types share one fastText skip-gram space, learned from sentences concatenated
with their annotated version (mentions replaced by type tokens such as ``/person/politician``;
built by :func:`features.ls_build.build_ls`). A word's LS vector has one coefficient per type: the
cosine between the word's vector and the type's, then MinMax-scaled to [-1, 1] within the vector
(:func:`minmax_scale`). Through fastText's sub-word vectors, unknown words get LS vectors too.

An LS artefact is a folder::

    manifest.json      sources (paths, sizes, SHA-256 of the annotated files), options, counts
    types.txt          the type tokens, one a line, in the order of the LS coefficients
    type_vectors.npy   their fastText vectors, float32 (types, dim)
    words.txt          the fastText vocabulary (lower-cased), one a line
    ls.npy             its LS vectors, float32 (words, types)
    fasttext.bin       the fastText model, read only to give unknown words their vectors

``LSVectors.load(folder)(tokens)`` gives a ``(len(tokens), len(types))`` array. Known words come
from the table (numpy only); fastText is imported when the first unknown word is looked up.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

import numpy as np

from features.labels import LeakageError
from features.ls_corpus import sha256_file

PathLike = Union[str, "os.PathLike[str]"]
logger = logging.getLogger(__name__)

FORMAT = "seqlab-ls/1"
MANIFEST, TYPES, TYPE_VECTORS, WORDS, TABLE, MODEL = (
    "manifest.json", "types.txt", "type_vectors.npy", "words.txt", "ls.npy", "fasttext.bin",
)
FASTTEXT_HINT = "pip install fasttext  (or: pip install fasttext-wheel)"


def import_fasttext() -> Any:
    """The ``fasttext`` module, or an ImportError with an install hint."""
    try:
        import fasttext
    except ImportError as err:
        raise ImportError(f"LS vectors need the fasttext package ({err}); install it with: {FASTTEXT_HINT}") from None
    return fasttext


def minmax_scale(values: np.ndarray) -> np.ndarray:
    """Scale each row to [-1, 1]: its minimum to -1, its maximum to 1 (a constant row becomes 0).

    Ghaddar & Langlais (2018, section 3): ``[..., 0.095, ..., 0.20, ..., 0.76, ...]`` →
    ``[..., -1, ..., -0.68, ..., 1, ...]``.
    """
    values = np.asarray(values, dtype=np.float32)
    if values.ndim != 2:
        raise ValueError(f"values must be a 2-D matrix (rows are LS vectors), but got shape {values.shape}")
    low = values.min(axis=1, keepdims=True)  # shape: (n, 1)
    span = values.max(axis=1, keepdims=True) - low  # shape: (n, 1)
    safe = np.where(span > 0, span, 1.0)
    return np.where(span > 0, 2.0 * (values - low) / safe - 1.0, 0.0).astype(np.float32)  # shape: (n, k)


def cosine(words: np.ndarray, types: np.ndarray) -> np.ndarray:
    """Cosine similarities of every word vector with every type vector; a zero vector gives 0."""
    def unit(m: np.ndarray) -> np.ndarray:
        norm = np.linalg.norm(m, axis=1, keepdims=True)
        return m / np.where(norm > 0, norm, 1.0)

    return (unit(np.asarray(words, np.float32)) @ unit(np.asarray(types, np.float32)).T).astype(np.float32)


def ls_from_vectors(words: np.ndarray, types: np.ndarray) -> np.ndarray:
    """LS vectors: cosine with each type, MinMax-scaled per word. shape: (n_words, n_types)."""
    return minmax_scale(cosine(words, types))


class LSVectors:
    """LS vectors as an extractor: ``dim`` (number of types), ``__call__(tokens)`` → ``(len, dim)`` float32.

    Look-up is uncased, as the vectors are learned (Ghaddar & Langlais 2018, section 3). A word in
    ``words`` gets its row of ``table``; any other word gets LS computed from the fastText model's
    sub-word vector (``model`` or the ``model_path`` file, loaded on first use); without a model,
    unknown words get zeros (with a warning).
    """

    def __init__(self, types: Sequence[str], type_vectors: np.ndarray, words: Sequence[str], table: np.ndarray, *,
                 model: Any = None, model_path: PathLike | None = None, manifest: Mapping[str, Any] | None = None,
                 name: str = "LS vectors") -> None:
        type_vectors = np.asarray(type_vectors, dtype=np.float32)
        table = np.asarray(table, dtype=np.float32)
        if type_vectors.ndim != 2 or type_vectors.shape[0] != len(types) or not len(types):
            raise ValueError(f"{name}: type vectors must be ({len(types)} types, dim), but got shape {type_vectors.shape}")
        if table.shape != (len(words), len(types)):
            raise ValueError(f"{name}: the LS table must be ({len(words)} words, {len(types)} types), "
                             f"but got shape {table.shape}")
        self.types, self.words = list(types), list(words)
        self.type_vectors, self.table = type_vectors, table  # shapes: (k, d), (V, k)
        self.index = {w: i for i, w in enumerate(self.words)}
        self.dim = len(self.types)
        self.manifest = dict(manifest or {})
        self.name = name
        self._model, self._model_path = model, (None if model_path is None else Path(model_path))
        self._warned = False

    @classmethod
    def load(cls, path: PathLike) -> "LSVectors":
        """Read an LS artefact folder (see the module doc)."""
        folder = Path(path)
        if not folder.is_dir():
            raise FileNotFoundError(f"LS vectors not found: {folder} (build them with: seqlab features ls build ...)")
        for name in (MANIFEST, TYPES, TYPE_VECTORS, WORDS, TABLE):
            if not (folder / name).is_file():
                raise ValueError(f"{folder}: not a complete LS artefact, {name} is missing")
        try:
            manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{folder / MANIFEST}:{err.lineno}: not valid JSON ({err.msg})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            got = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
            raise ValueError(f"{folder / MANIFEST}: expected format {FORMAT!r}, but got {got!r}")
        types = _lines(folder / TYPES)
        words = _lines(folder / WORDS)
        type_vectors = np.load(folder / TYPE_VECTORS, allow_pickle=False)
        table = np.load(folder / TABLE, allow_pickle=False)
        model = folder / MODEL
        return cls(types, type_vectors, words, table, model_path=model if model.is_file() else None,
                   manifest=manifest, name=str(folder))

    # ------------------------------------------------------------ look-up

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        """Whether ``word`` is in the vocabulary (any word gets a vector; this says which way)."""
        return isinstance(word, str) and word.lower() in self.index

    def __call__(self, tokens: Sequence[str]) -> np.ndarray:  # shape: (len(tokens), dim), float32
        if isinstance(tokens, str):
            raise TypeError(f"tokens must be a sequence of words, but got the single string {tokens!r}")
        keys = [t.lower() for t in tokens]
        rows = np.fromiter((self.index.get(k, -1) for k in keys), dtype=np.int64, count=len(keys))
        out = np.zeros((len(keys), self.dim), dtype=np.float32)  # shape: (n, k)
        known = rows >= 0
        out[known] = self.table[rows[known]]
        unknown = sorted({k for k, r in zip(keys, rows) if r < 0})
        if unknown:
            vectors = self.word_vectors(unknown)  # shape: (u, d) or None
            if vectors is not None:
                scaled = ls_from_vectors(vectors, self.type_vectors)  # shape: (u, k)
                where = {w: i for i, w in enumerate(unknown)}
                missing = np.flatnonzero(~known)
                out[missing] = scaled[[where[keys[i]] for i in missing]]
        return out

    def lookup(self, word: str) -> np.ndarray:
        """The LS vector of one word, known or not. shape: (dim,)."""
        return self([word])[0]

    def word_vectors(self, words: Sequence[str]) -> np.ndarray | None:
        """fastText vectors of (lower-cased) words, from sub-words for unknown ones; None without a model."""
        model = self._fasttext()
        if model is None:
            return None
        return np.stack([model.get_word_vector(w.lower()) for w in words]).astype(np.float32)  # shape: (n, d)

    def _fasttext(self) -> Any:
        if self._model is None and self._model_path is not None:
            fasttext = import_fasttext()
            logger.info("loading %s for the sub-word vectors of unknown words", self._model_path)
            self._model = fasttext.load_model(str(self._model_path))
        if self._model is None and not self._warned:
            logger.warning("%s: no %s, so words outside the vocabulary get zero LS vectors", self.name, MODEL)
            self._warned = True
        return self._model

    def similarities(self, word: str) -> tuple[np.ndarray, np.ndarray | None]:
        """A word's LS vector and its raw cosines with each type (None for the cosines without a model)."""
        key = word.lower()
        vectors = self.word_vectors([key])
        raw = None if vectors is None else cosine(vectors, self.type_vectors)[0]
        return self.lookup(word), raw

    def top_types(self, word: str, n: int = 10) -> list[tuple[str, float, float | None]]:
        """The ``n`` types most similar to ``word``: (type, LS coefficient, cosine), best first."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive int, but got {n!r}")
        scaled, raw = self.similarities(word)
        order = np.argsort(-scaled, kind="stable")[:n]
        return [(self.types[j], float(scaled[j]), None if raw is None else float(raw[j])) for j in order]

    def show(self, word: str, n: int = 10) -> str:
        """A word's top types as text, as in the paper's Table 1."""
        how = "in the vocabulary" if word in self else "not in the vocabulary: from sub-words"
        rows = self.top_types(word, n)
        width = max(len(t) for t, _, _ in rows)
        head = f"{word} ({how}): top {len(rows)} of {self.dim} types   LS   cosine"
        lines = [f"{i:>4}  {t:<{width}}  {s:+.3f}  " + ("  n/a " if c is None else f"{c:+.3f}")
                 for i, (t, s, c) in enumerate(rows, start=1)]
        return "\n".join([head] + lines) + "\n"

    # ------------------------------------------------------------ provenance

    @property
    def sources(self) -> list[dict[str, Any]]:
        """The annotated files the vectors were learned from (``path``, ``sha256``, ...), from the manifest."""
        return list(self.manifest.get("sources", []))

    def check_not_built_from(self, files: Mapping[str, PathLike]) -> None:
        """Raise :class:`LeakageError` if an annotated source is one of ``files`` (e.g. ``{"data.dev": path}``).

        Sources match by SHA-256 of their content, so a copy under another name is caught too.
        """
        if not self.manifest:
            return
        by_hash = {src["sha256"]: src for src in self.sources if "sha256" in src}
        for key, path in files.items():
            if not Path(path).is_file():
                continue
            source = by_hash.get(sha256_file(path))
            if source is not None:
                raise LeakageError(
                    f"{self.name} was built from {source.get('path')!r}, which has the same content as {key} "
                    f"({path}): its annotations would leak into the evaluation. Rebuild the LS vectors "
                    f"without that file (seqlab features ls build --typed ... --out ...)"
                )


def _lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if not line:
            raise ValueError(f"{path}:{number}: expected one entry a line, but got an empty line")
    return lines
