"""Relation classifier: vocabularies, tensors, batches, the model and its optimizer, from a config.

The builders mirror :mod:`seqlab.build` for taggers (whose ``embedding_matrix`` is reused), with an
explicit optimizer table.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np
import torch
from torch import nn

from seqlab.build import embedding_matrix
from seqlab.data.semeval import LABELS, RelationExample, with_markers
from seqlab.data.vocab import Vocab, WordVocab, label_vocab
from seqlab.errors import SeqlabError
from seqlab.models.relation import RelationBatch, RelationClassifier, SelfAttentiveBiLSTM, SoftmaxHead, WordEmbedder
from seqlab.modules.attention import EntityAwareAttention, LatentEntityTyping, MultiHeadSelfAttention
from seqlab.modules.rnn import BiLSTM
from seqlab.relation.config import RelationConfig, RelationModelConfig, RelationTrainConfig

log = logging.getLogger(__name__)


@dataclass
class RelationData:
    """A split as tensors: word ids (N, T) padded with 0, lengths, entity spans and label ids (-1: none)."""

    ids: list[str]
    words: torch.Tensor  # shape: (N, T)
    lengths: torch.Tensor  # shape: (N,)
    e1: torch.Tensor  # shape: (N, 2)
    e2: torch.Tensor  # shape: (N, 2)
    labels: torch.Tensor  # shape: (N,)

    def __len__(self) -> int:
        return len(self.ids)


def model_inputs(examples: Sequence[RelationExample], model: RelationModelConfig) -> list[RelationExample]:
    """The examples as the model reads them: with the entity tags as tokens when ``model.entity_markers``."""
    return [with_markers(e) for e in examples] if model.entity_markers else list(examples)


def build_vocabs(config: RelationConfig, splits: dict[str, list[RelationExample]]
                 ) -> tuple[dict[str, Vocab], torch.Tensor | None]:
    """Word and label vocabularies, and the initial word-embedding matrix.

    As for the taggers: every word of every split that has a pretrained vector (as written, then
    lower-cased), plus training words seen ``min_count`` times; no labels of dev or test are used.
    """
    emb = config.model.embeddings
    normalize = WordVocab([], digits_to_zero=emb.digits_to_zero).normalize
    counts = Counter(normalize(w) for e in splits["train"] for w in e.tokens)
    found: dict[str, np.ndarray] = {}
    if emb.path:
        from features.vectors import load_vectors, select_vectors
        from seqlab.paths import resolve_data_path

        vectors = load_vectors(resolve_data_path(emb.path, key="model.embeddings.path"), emb.format)
        if vectors.dim != emb.dim:
            raise SeqlabError(f"model.embeddings.dim is {emb.dim}, but {emb.path} has {vectors.dim}-dimensional vectors")
        corpus = sorted({normalize(w) for split in splits.values() for e in split for w in e.tokens})
        for word, vec in select_vectors(vectors, corpus, lowercase_fallback=emb.lowercase_fallback).items():
            found.setdefault(word if word in vectors else word.lower(), vec)
    frequent = sorted(w for w, n in counts.items() if n >= emb.min_count and w not in found and w.lower() not in found)
    words = WordVocab(sorted(found) + frequent, lowercase_fallback=emb.lowercase_fallback,
                      digits_to_zero=emb.digits_to_zero)
    vocabs: dict[str, Vocab] = {"words": words, "labels": label_vocab(LABELS)}
    matrix = embedding_matrix(words, found, emb.dim, config.train.seed, emb.scale) if emb.path else None
    return vocabs, matrix


def encode(examples: Sequence[RelationExample], vocabs: dict[str, Vocab]) -> RelationData:
    """Examples as padded tensors (one pass over the tokens; no per-token work later)."""
    words, labels = vocabs["words"], vocabs["labels"]
    width = max((len(e.tokens) for e in examples), default=1)
    ids = torch.zeros(len(examples), width, dtype=torch.long)
    for row, example in enumerate(examples):
        ids[row, : len(example.tokens)] = torch.tensor([words.index(w) for w in example.tokens], dtype=torch.long)
    return RelationData(
        ids=[e.id for e in examples],
        words=ids,
        lengths=torch.tensor([len(e.tokens) for e in examples], dtype=torch.long),
        e1=torch.tensor([e.e1 for e in examples], dtype=torch.long).view(-1, 2),
        e2=torch.tensor([e.e2 for e in examples], dtype=torch.long).view(-1, 2),
        labels=torch.tensor([labels.index(e.label) if e.label else -1 for e in examples], dtype=torch.long),
    )


BUCKET_BATCHES = 50  # shuffled training batches are formed from length-sorted pools of this many batches


def _bucketed_order(lengths: torch.Tensor, batch_size: int, generator: torch.Generator | None) -> list[torch.Tensor]:
    """Random batches of similar length: shuffle, sort pools of ``BUCKET_BATCHES`` batches by length, shuffle batches."""
    order = torch.randperm(len(lengths), generator=generator)
    pool = batch_size * BUCKET_BATCHES
    chunks: list[torch.Tensor] = []
    for start in range(0, len(order), pool):
        part = order[start: start + pool]
        part = part[torch.argsort(lengths[part], stable=True)]
        chunks.extend(part.split(batch_size))
    return [chunks[i] for i in torch.randperm(len(chunks), generator=generator).tolist()]


def batches(data: RelationData, batch_size: int, *, shuffle: bool = False,
            generator: torch.Generator | None = None) -> Iterator[tuple[torch.Tensor, RelationBatch]]:
    """(row indices, batch) pairs; each batch is cut to its longest sentence.

    With ``shuffle``, batches are random but bucketed by length (less padding for the BiLSTM).
    """
    labelled = bool((data.labels >= 0).all()) if len(data) else False
    groups = _bucketed_order(data.lengths, batch_size, generator) if shuffle else \
        list(torch.arange(len(data)).split(batch_size))
    for rows in groups:
        lengths = data.lengths[rows]
        width = int(lengths.max())
        yield rows, RelationBatch(data.words[rows, :width], lengths, data.e1[rows], data.e2[rows],
                                  data.labels[rows] if labelled else None)


def build_model(config: RelationConfig, vocabs: dict[str, Vocab], pretrained: torch.Tensor | None = None
                ) -> RelationClassifier:
    """Assemble ``RelationClassifier(embedder, encoder, attention, head)`` from a config."""
    m = config.model
    words = nn.Embedding(len(vocabs["words"]), m.embeddings.dim, padding_idx=0)
    if pretrained is not None:
        if pretrained.shape != words.weight.shape:
            raise ValueError(f"pretrained matrix must match {tuple(words.weight.shape)}, but got {tuple(pretrained.shape)}")
        words.weight.data.copy_(pretrained)
    words.weight.requires_grad_(m.embeddings.trainable)
    dim = m.embeddings.dim
    self_attention = MultiHeadSelfAttention(dim, m.heads) if m.self_attention else None
    encoder = SelfAttentiveBiLSTM(self_attention, BiLSTM(dim, m.hidden), m.dropout_lstm)
    typing = LatentEntityTyping(encoder.output_dim, m.latent_types) if m.latent_types else None
    attention = EntityAwareAttention(encoder.output_dim, m.attention_dim, m.position_dim, m.max_length, typing)
    head = SoftmaxHead(encoder.output_dim, len(vocabs["labels"]), m.dropout_attention)
    return RelationClassifier(WordEmbedder(words, m.dropout_embedding), encoder, attention, head)


OPTIMIZERS: dict[str, Callable[[list[nn.Parameter], RelationTrainConfig], torch.optim.Optimizer]] = {
    "adadelta": lambda ps, t: torch.optim.Adadelta(ps, lr=t.lr, rho=t.rho, eps=t.eps, weight_decay=t.weight_decay),
    "adam": lambda ps, t: torch.optim.Adam(ps, lr=t.lr, weight_decay=t.weight_decay),
    "sgd": lambda ps, t: torch.optim.SGD(ps, lr=t.lr, weight_decay=t.weight_decay),
}


def build_optimizer(model: nn.Module, t: RelationTrainConfig) -> torch.optim.Optimizer:
    return OPTIMIZERS[t.optimizer]([p for p in model.parameters() if p.requires_grad], t)
