"""Fixed per-token features for the neural taggers, read from files that ``features/`` makes.

Each configured representation becomes either *dense* columns (scaled C&W/HLBL/LS vectors,
one-hot Brown prefixes) or *discrete* ids (Brown prefixes at each depth, looked up in learned
embedding tables). Both are computed once per word type, so they cost nothing per token in
training. Because the files are read again when a model is loaded, words never seen in
training still get their representation at tagging time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from seqlab.config import FeatureConfig
from seqlab.errors import SeqlabError
from seqlab.paths import resolve_data_path

Dense = Callable[[Sequence[str]], np.ndarray]  # word types -> (n, dim) float32
Discrete = Callable[[Sequence[str]], np.ndarray]  # word types -> (n, k) int64 ids, 0 = unknown


@dataclass
class TokenFeatures:
    """The dense and discrete features of a tagger, with their sizes."""

    dense: list[tuple[Dense, int]] = field(default_factory=list)
    discrete: list[tuple[Discrete, tuple[int, ...], int]] = field(default_factory=list)  # fn, table sizes, dim

    @property
    def dense_dim(self) -> int:
        return sum(dim for _, dim in self.dense)

    @property
    def discrete_tables(self) -> list[tuple[int, int]]:
        """(number of ids, embedding size) of every learned table, in column order."""
        return [(size, dim) for _, sizes, dim in self.discrete for size in sizes]

    def dense_table(self, types: Sequence[str]) -> np.ndarray:
        return np.concatenate([fn(types) for fn, _ in self.dense], axis=1).astype(np.float32, copy=False)

    def discrete_table(self, types: Sequence[str]) -> np.ndarray:
        return np.concatenate([fn(types) for fn, _, _ in self.discrete], axis=1).astype(np.int64, copy=False)


def _load_brown(config: FeatureConfig, path: str, features: TokenFeatures) -> None:
    from features.brown import BrownClusters

    clusters = BrownClusters.load(path, prefixes=config.prefixes)
    if config.dim:
        features.discrete.append((clusters.prefix_ids, tuple(clusters.vocab_sizes), config.dim))
    else:
        features.dense.append((clusters, clusters.dim))


def _load_embeddings(config: FeatureConfig, path: str, features: TokenFeatures) -> None:
    from features.embeddings import EmbeddingFeatures

    vectors = EmbeddingFeatures.load(path, fmt=config.format, lowercase=config.lowercase, scale=config.scale)
    features.dense.append((vectors, vectors.dim))


LOADERS: dict[str, Callable[[FeatureConfig, str, TokenFeatures], None]] = {
    "brown": _load_brown,
    "embeddings": _load_embeddings,
}


def load_token_features(configs: Sequence[FeatureConfig]) -> TokenFeatures | None:
    """Read every configured representation; None when there are none."""
    if not configs:
        return None
    features = TokenFeatures()
    for i, config in enumerate(configs):
        key = f"model.features[{i}].path"
        path = str(resolve_data_path(config.path, key=key))
        try:
            LOADERS[config.type](config, path, features)
        except (ValueError, OSError) as err:  # features/ raises plain errors naming file and line
            raise SeqlabError(f"{key}: {err}") from None
    return features


def encode_options(features: TokenFeatures | None) -> dict[str, Callable[[Sequence[str]], np.ndarray] | None]:
    """Keyword arguments for :func:`seqlab.data.batching.encode` that attach these features."""
    return {
        "features": features.dense_table if features is not None and features.dense else None,
        "discrete": features.discrete_table if features is not None and features.discrete else None,
    }
