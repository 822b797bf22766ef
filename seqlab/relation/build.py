"""Relation classifier: tensors, batches and the model, from a config.

The vocabulary rule and the optimizer table are the taggers' (:mod:`seqlab.data.pretrained`,
:mod:`seqlab.core.optim`), and so is the length bucketing of training batches.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Sequence

import torch
from torch import nn

from seqlab.data.batching import bucketed_batches
from seqlab.data.semeval import RelationExample, with_markers
from seqlab.data.vocab import Vocab
from seqlab.models.relation import RelationBatch, RelationClassifier, SelfAttentiveBiLSTM, SoftmaxHead, WordEmbedder
from seqlab.modules.attention import EntityAwareAttention, LatentEntityTyping, MultiHeadSelfAttention
from seqlab.modules.rnn import BiLSTM
from seqlab.relation.config import RelationConfig, RelationModelConfig

if TYPE_CHECKING:
    from seqlab.modules.transformer import EncoderRecord

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
    tokens: list[tuple[str, ...]]

    def __len__(self) -> int:
        return len(self.ids)


def model_inputs(examples: Sequence[RelationExample], model: RelationModelConfig) -> list[RelationExample]:
    """The examples as the model reads them: with the entity tags as tokens when ``model.entity_markers``
    (naming the entities' types when ``model.typed_markers``)."""
    if not model.entity_markers:
        return list(examples)
    return [with_markers(e, typed=model.typed_markers) for e in examples]


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
        tokens=[tuple(e.tokens) for e in examples],
    )


def batches(data: RelationData, batch_size: int, *, shuffle: bool = False, generator: torch.Generator | None = None,
            bucket_factor: int = 50, shard: tuple[int, int] = (0, 1)) -> Iterator[tuple[torch.Tensor, RelationBatch]]:
    """(row indices, batch) pairs; each batch is cut to its longest sentence.

    With ``shuffle``, batches are random but bucketed by length (less padding for the BiLSTM), and
    ``shard`` = (rank, ranks) gives a data-parallel rank its part of each step
    (:func:`seqlab.data.batching.bucketed_batches`).
    """
    labelled = bool((data.labels >= 0).all()) if len(data) else False
    groups = bucketed_batches(data.lengths, batch_size, generator=generator, bucket_factor=bucket_factor,
                              shard=shard) if shuffle else list(torch.arange(len(data)).split(batch_size))
    for rows in groups:
        lengths = data.lengths[rows]
        width = int(lengths.max())
        yield rows, RelationBatch(data.words[rows, :width], lengths, data.e1[rows], data.e2[rows],
                                  data.labels[rows] if labelled else None, [data.tokens[i] for i in rows.tolist()])


def build_model(config: RelationConfig, vocabs: dict[str, Vocab], pretrained: torch.Tensor | None = None,
                encoder: EncoderRecord | None = None) -> RelationClassifier:
    """Assemble ``RelationClassifier(embedder, encoder, attention, head)`` from a config; ``encoder`` is the
    record of the transformer a trained model needs (a different one is refused)."""
    m = config.model
    words = nn.Embedding(len(vocabs["words"]), m.embeddings.dim, padding_idx=0)
    if pretrained is not None:
        if pretrained.shape != words.weight.shape:
            raise ValueError(f"pretrained matrix must match {tuple(words.weight.shape)}, but got {tuple(pretrained.shape)}")
        words.weight.data.copy_(pretrained)
    words.weight.requires_grad_(m.embeddings.trainable)
    contextual = None
    if m.transformer is not None:
        from seqlab.modules.transformer import TransformerEmbedder

        contextual = TransformerEmbedder(m.transformer, expected=encoder)
    embedder = WordEmbedder(words, m.dropout_embedding, contextual)
    dim = embedder.output_dim
    self_attention = MultiHeadSelfAttention(dim, m.heads) if m.self_attention else None
    lstm = SelfAttentiveBiLSTM(self_attention, BiLSTM(dim, m.hidden), m.dropout_lstm)
    typing = LatentEntityTyping(lstm.output_dim, m.latent_types) if m.latent_types else None
    attention = EntityAwareAttention(lstm.output_dim, m.attention_dim, m.position_dim, m.max_length, typing)
    head = SoftmaxHead(lstm.output_dim, len(vocabs["labels"]), m.dropout_attention)
    return RelationClassifier(embedder, lstm, attention, head, label_weights(config, vocabs["labels"]))


def label_weights(config: RelationConfig, labels: Vocab) -> torch.Tensor | None:
    """The loss weight of each label: ``model.negative_weight`` for ``data.negative_label``, 1 for the others
    (None: all 1)."""
    if config.model.negative_weight == 1.0 or config.data.negative_label not in labels.itos:
        return None
    weights = torch.ones(len(labels))  # shape: (C,)
    weights[labels.index(config.data.negative_label)] = config.model.negative_weight
    return weights
