"""Fixed per-token features for the neural taggers, read from files that ``features/`` makes.

Each configured representation becomes either *dense* columns (scaled C&W/HLBL/LS vectors,
one-hot Brown prefixes) or *discrete* ids (Brown prefixes at each depth, looked up in learned
embedding tables). Both are computed once per word type, so they cost nothing per token in
training. Because the files are read again when a model is loaded, words never seen in
training still get their representation at tagging time.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path

#: A ``model.features[]`` entry (:class:`seqlab.tagging.config.FeatureConfig`), read duck-typed: the loaders sit
#: below the config, which checks feature types against :data:`seqlab.tagging.parts.TOKEN_FEATURES`.
FeatureEntry = Any
Dense = Callable[[Sequence[str]], np.ndarray]  # word types -> (n, dim) float32
Discrete = Callable[[Sequence[str]], np.ndarray]  # word types -> (n, k) int64 ids, 0 = unknown


@dataclass
class TokenFeatures:
    """The dense and discrete features of a tagger, with their sizes."""

    dense: list[tuple[Dense, int]] = field(default_factory=list)
    discrete: list[tuple[Discrete, tuple[int, ...], int]] = field(default_factory=list)  # fn, table sizes, dim
    column_dense: list[tuple[str, Dense, int]] = field(default_factory=list)  # data column, fn(values), dim
    state: dict[str, Any] = field(default_factory=dict)  # fitted features' state, saved as features.json

    @property
    def dense_dim(self) -> int:
        return sum(dim for _, dim in self.dense) + sum(dim for _, _, dim in self.column_dense)

    @property
    def columns(self) -> tuple[str, ...]:
        """Data columns besides the words that these features read (e.g. ``pos``)."""
        return tuple(sorted({name for name, _, _ in self.column_dense}))

    @property
    def discrete_tables(self) -> list[tuple[int, int]]:
        """(number of ids, embedding size) of every learned table, in column order."""
        return [(size, dim) for _, sizes, dim in self.discrete for size in sizes]

    def dense_table(self, types: Sequence[str], columns: Mapping[str, Sequence[str]] | None = None) -> np.ndarray:
        parts = [fn(types) for fn, _ in self.dense]
        parts += [fn((columns or {})[name]) for name, fn, _ in self.column_dense]
        return np.concatenate(parts, axis=1).astype(np.float32, copy=False)

    def discrete_table(self, types: Sequence[str]) -> np.ndarray:
        return np.concatenate([fn(types) for fn, _, _ in self.discrete], axis=1).astype(np.int64, copy=False)


def _load_brown(config: FeatureEntry, path: str, features: TokenFeatures) -> None:
    from features.brown import BrownClusters

    clusters = BrownClusters.load(path, prefixes=config.prefixes)
    if config.dim:
        features.discrete.append((clusters.prefix_ids, tuple(clusters.vocab_sizes), config.dim))
    else:
        features.dense.append((clusters, clusters.dim))


@functools.lru_cache(maxsize=2)
def _read_embeddings(path: str, mtime: float, fmt: str, lowercase: bool, scale: float | None) -> Any:
    """Vectors read once per process (a sweep trains many models on the same file); read-only after."""
    from features.embeddings import EmbeddingFeatures

    return EmbeddingFeatures.load(path, fmt=fmt, lowercase=lowercase, scale=scale)


def _load_embeddings(config: FeatureEntry, path: str, features: TokenFeatures) -> None:
    vectors = _read_embeddings(path, os.path.getmtime(path), config.format, config.lowercase, config.scale)
    features.dense.append((vectors, vectors.dim))


_FILE_LOADERS: dict[str, Callable[[FeatureEntry, str, TokenFeatures], None]] = {
    "brown": _load_brown,
    "embeddings": _load_embeddings,
}


def load_file_feature(config: FeatureEntry, index: int, features: TokenFeatures) -> None:
    """Read feature ``index`` (Brown paths or word vectors) from its file into ``features``."""
    key = f"model.features[{index}].path"
    path = str(resolve_data_path(config.path, key=key))
    try:
        _FILE_LOADERS[config.type](config, path, features)
    except (ValueError, OSError) as err:  # features/ raises plain errors naming file and line
        raise SeqlabError(f"{key}: {err}") from None


def encode_options(features: TokenFeatures | None,
                   columns: Mapping[str, Sequence[Sequence[str]]] | None = None) -> dict[str, Any]:
    """Keyword arguments for :func:`seqlab.data.batching.encode` that attach these features.

    ``columns`` are the data's other columns (``Split.columns``); features that read one (``pos``)
    need it, so raw text cannot be tagged by such a model.
    """
    needed = features.columns if features is not None else ()
    missing = [c for c in needed if c not in (columns or {})]
    if missing:
        raise SeqlabError(f"this model reads the data column(s) {missing} (model.features), which this input does "
                          "not have; give a CoNLL file with those columns (seqlab eval), not raw text")
    return {
        "features": features.dense_table if features is not None and (features.dense or features.column_dense) else None,
        "discrete": features.discrete_table if features is not None and features.discrete else None,
        "columns": {c: columns[c] for c in needed} if needed and columns is not None else None,
    }
