"""The extractor contract shared by every word representation in ``features/``.

An extractor has a ``dim`` and maps one sentence's tokens to a float32 array of
shape ``(len(tokens), dim)``. Discrete extractors also give crfsuite-style
feature dicts. :class:`SentenceTransformer` wraps any extractor as a
scikit-learn transformer over lists of sentences. Nothing here imports torch or
seqlab, so another system can use a representation in two lines::

    from features.brown import BrownClusters
    vectors = BrownClusters.load("paths.txt")(["EU", "rejects", "German", "call"])
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class Extractor(Protocol):
    """Per-token feature vectors for a sentence."""

    dim: int

    def __call__(self, tokens: Sequence[str]) -> np.ndarray:  # shape: (len(tokens), dim), float32
        ...


@runtime_checkable
class DiscreteExtractor(Extractor, Protocol):
    """An extractor whose features are symbols, also available as crfsuite-style dicts."""

    def feature_dicts(self, tokens: Sequence[str]) -> list[dict[str, Any]]:
        ...


class SentenceTransformer:
    """A scikit-learn transformer: a list of sentences (token lists) → stacked ``(n_tokens, dim)`` array.

    ``fit`` does nothing (the representation is learned elsewhere), so it can sit in a
    ``sklearn.pipeline.Pipeline`` before any token-level classifier.
    """

    def __init__(self, extractor: Extractor) -> None:
        self.extractor = extractor

    def fit(self, sentences: Sequence[Sequence[str]], y: Any = None) -> "SentenceTransformer":
        return self

    def transform(self, sentences: Sequence[Sequence[str]]) -> np.ndarray:
        parts = [self.extractor(list(s)) for s in sentences]
        if not parts:
            return np.zeros((0, self.extractor.dim), dtype=np.float32)
        return np.concatenate(parts, axis=0).astype(np.float32, copy=False)

    def fit_transform(self, sentences: Sequence[Sequence[str]], y: Any = None) -> np.ndarray:
        return self.fit(sentences, y).transform(sentences)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"extractor": self.extractor}

    def set_params(self, **params: Any) -> "SentenceTransformer":
        for key, value in params.items():
            setattr(self, key, value)
        return self


class FeatureError(ValueError):
    """Bad input to ``features/`` (a file, a format name): the message says what was expected.

    An application shows the message without a traceback (``seqlab`` does).
    """


class MissingDependencyError(FeatureError, ImportError):
    """An optional package a reader needs (gensim, fasttext) is not installed; says how to install it."""


class FeatureFileError(FeatureError):
    """A malformed line in a representation file (paths, embeddings): names the file and line."""

    def __init__(self, path: str, line: int, message: str) -> None:
        self.path, self.line = str(path), line
        super().__init__(f"{path}:{line}: {message}")
