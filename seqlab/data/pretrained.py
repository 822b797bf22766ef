"""Pretrained word vectors into a model: the word vocabulary (a :class:`~seqlab.data.vocab.WordVocab`) and the
initial word-embedding matrix, by one rule for every task.

The vocabulary holds every word of every split that has a pretrained vector (looked up as written,
then lower-cased), plus the training words seen at least ``min_count`` times; this uses no labels of
dev or test. Rows without a pretrained vector start random.
"""
from __future__ import annotations

import logging
import math
from collections import Counter
from typing import Iterable, Sequence

import numpy as np
import torch

from features.scaling import scale_embeddings
from seqlab.core.config import EmbeddingsConfig
from seqlab.core.errors import SeqlabError
from seqlab.data.vocab import Vocab, WordVocab

log = logging.getLogger(__name__)


def word_vocabulary(emb: EmbeddingsConfig, train: Iterable[Sequence[str]], every: Iterable[Sequence[str]],
                    seed: int) -> tuple[WordVocab, torch.Tensor | None]:
    """The word vocabulary of ``train`` (training sentences) and ``every`` (the sentences of all splits),
    and, when ``emb.path`` names pretrained vectors, the initial embedding matrix (else None)."""
    normalize = WordVocab([], digits_to_zero=emb.digits_to_zero).normalize
    counts = Counter(normalize(w) for sentence in train for w in sentence)
    found: dict[str, np.ndarray] = {}
    if emb.path:
        from seqlab.core.paths import resolve_data_path
        from features.vectors import load_vectors, select_vectors

        # a spaCy pipeline is named by its package, not found under the data folder
        where = emb.path if emb.format == "spacy" else resolve_data_path(emb.path, key="model.embeddings.path")
        vectors = load_vectors(where, emb.format)
        if vectors.dim != emb.dim:
            raise SeqlabError(f"model.embeddings.dim is {emb.dim}, but {emb.path} has {vectors.dim}-dimensional vectors")
        corpus_words = sorted({normalize(w) for sentence in every for w in sentence})
        by_word = select_vectors(vectors, corpus_words, lowercase_fallback=emb.lowercase_fallback)
        for word, vec in by_word.items():  # store under the key that matched, so lookup finds it the same way
            found.setdefault(word if word in vectors else word.lower(), vec)
        log.info("pretrained vectors for %d of %d corpus word types", len(by_word), len(corpus_words))
        warn_coverage(emb, by_word, counts)
    frequent = sorted(w for w, n in counts.items() if n >= emb.min_count and w not in found and w.lower() not in found)
    words = WordVocab(sorted(found) + frequent, lowercase_fallback=emb.lowercase_fallback,
                      digits_to_zero=emb.digits_to_zero)
    matrix = embedding_matrix(words, found, emb.dim, seed, emb.scale) if emb.path else None
    return words, matrix


#: Below this share of the training word types with a pretrained vector, the vectors likely do not fit the text.
LOW_COVERAGE = 0.5


def warn_coverage(emb: EmbeddingsConfig, found: dict[str, np.ndarray], counts: Counter[str]) -> float:
    """The share of training word types with a pretrained vector; a warning below :data:`LOW_COVERAGE` (English
    GloVe covers 42% of CoNLL-2002 Spanish training types: vectors of another language, or another tokenization)."""
    share = sum(w in found for w in counts) / max(1, len(counts))
    if share < LOW_COVERAGE:
        log.warning("model.embeddings.path %s covers only %.0f%% of the %d training word types: vectors for another "
                    "language than the data's (data.language), or another tokenization? Vectors of the data's "
                    "language (format: spacy for an installed spaCy pipeline, fasttext_bin, or vectors trained on "
                    "your own text with seqlab features skipgram) or path: null (no pretrained vectors) may serve "
                    "better", emb.path, 100 * share, len(counts))
    return share


def embedding_matrix(words: Vocab, found: dict[str, np.ndarray], dim: int, seed: int,
                     scale: float | None = None) -> torch.Tensor:
    """Pretrained rows where a vector was found, uniform(±sqrt(3/dim)) elsewhere, zeros for padding.

    With ``scale`` (Turian et al. 2010 §7.2), the pretrained rows are rescaled together to standard
    deviation ``scale`` and the other rows are drawn uniform(±sqrt(3)·scale), which has the same std.
    """
    gen = torch.Generator().manual_seed(seed)
    bound = math.sqrt(3.0 / dim) if scale is None else math.sqrt(3.0) * scale
    matrix = (torch.rand(len(words), dim, generator=gen) * 2 - 1) * bound
    matrix[0] = 0.0
    hits = [(i, w) for i, w in enumerate(words.itos) if w in found]
    if hits:
        rows = torch.tensor([i for i, _ in hits])
        vectors = np.stack([found[w] for _, w in hits]).astype(np.float32)
        if scale is not None:
            if not vectors.std() > 0:
                raise SeqlabError(f"model.embeddings.scale: the {len(hits)} pretrained vectors found all hold one "
                                  "value (standard deviation 0), so they cannot be rescaled; set scale to null")
            vectors = scale_embeddings(vectors, scale)
        matrix[rows] = torch.from_numpy(vectors)
    return matrix
