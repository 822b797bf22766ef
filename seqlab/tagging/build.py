"""A config and vocabularies become a tagger, built from the tables of seqlab.tagging.parts, and its parameter groups."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Sequence

import torch
from torch import nn

from seqlab.tagging.config import Config, ModelConfig, TrainConfig
from seqlab.data.labelling import Labelling
from seqlab.data.vocab import CAPS, Vocab
from seqlab.core.errors import SeqlabError
from seqlab.core.optim import transformer_groups
from seqlab.models.tagger import Tagger
from seqlab.modules.decoders import SoftmaxDecoder
from seqlab.modules.dropout import LockedDropout
from seqlab.modules.embedder import CharBiLSTM, TokenEmbedder
from seqlab.modules.rnn import set_forget_bias
from seqlab.tagging.parts import DECODERS, ENCODERS, output_filters, post_viterbi
from seqlab.tagging.features import TokenFeatures

if TYPE_CHECKING:
    from seqlab.modules.transformer import EncoderRecord

log = logging.getLogger(__name__)


def use_post_viterbi(model: Tagger, labels: Sequence[str], labelling: Labelling) -> None:
    """Decode a softmax tagger's per-token probabilities by Viterbi under ``labelling``'s allowed transitions.

    Turian et al. (2009)'s "post-Viterbi" decoding, chosen at evaluation time: the weights are
    unchanged (the softmax and post-Viterbi decoders share them), only the decoding differs.
    """
    if not isinstance(model.decoder, SoftmaxDecoder):
        raise SeqlabError(f"post-Viterbi decoding applies to softmax taggers; this model decodes with "
                          f"{type(model.decoder).__name__}")
    model.decoder = post_viterbi(labels, labelling).to(next(model.parameters()).device)


def build_projection(in_dim: int, num_tags: int, m: ModelConfig) -> nn.Module:
    """The output layer O: linear, or with quadratic filters (Turian et al. 2009 §3).

    With ``m.output_hidden``, a tanh layer of that size comes first, as in Lample et al. (2016)'s
    released tagger, where it sits between the BiLSTM and the CRF's scores.
    """
    filters = output_filters(m)
    hidden = m.output_hidden or in_dim
    if not filters:
        out: nn.Module = nn.Linear(hidden, num_tags)
    else:
        from features.quadratic import QuadraticLayer

        out = QuadraticLayer(hidden, num_tags, filters, sqrt=m.quadratic_sqrt)
    if not m.output_hidden:
        return out
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.Tanh(), out)


def build_embedder(m: ModelConfig, vocabs: dict[str, Vocab], token_features: TokenFeatures | None = None,
                   pretrained: torch.Tensor | None = None,
                   encoder_record: "EncoderRecord | None" = None) -> TokenEmbedder:
    """The token representations a model config names, concatenated: word embeddings (``pretrained`` copied in),
    the character BiLSTM, capitalization, token features and a transformer's vectors, made in that order (the
    order in which they draw their initial weights)."""
    words = nn.Embedding(len(vocabs["words"]), m.embeddings.dim, padding_idx=0) if m.embeddings else None
    if pretrained is not None and words is not None:
        if pretrained.shape != words.weight.shape:
            raise ValueError(f"pretrained matrix must match {tuple(words.weight.shape)}, but got {tuple(pretrained.shape)}")
        words.weight.data.copy_(pretrained)
    if words is not None:
        words.weight.requires_grad_(m.embeddings.trainable)
    chars = CharBiLSTM(len(vocabs["chars"]), m.chars.dim, m.chars.hidden, m.chars.dropout) if m.chars else None
    caps = nn.Embedding(len(CAPS), m.capitalization.dim, padding_idx=0) if m.capitalization else None
    tf = token_features
    discrete = [nn.Embedding(size, dim, padding_idx=0) for size, dim in (tf.discrete_tables if tf else [])]
    contextual = None
    if m.transformer is not None:
        from seqlab.modules.transformer import TransformerEmbedder

        contextual = TransformerEmbedder(m.transformer, expected=encoder_record)
    return TokenEmbedder(words, chars, caps, tf.dense_dim if tf else 0, discrete, contextual)


def build_tagger(
    config: Config,
    vocabs: dict[str, Vocab],
    *,
    token_features: TokenFeatures | None = None,
    pretrained: torch.Tensor | None = None,
    encoder_record: "EncoderRecord | None" = None,
) -> Tagger:
    """Assemble ``Tagger(embedder, encoder, decoder)`` from a config, the encoder and decoder through their tables;
    ``encoder_record`` is the transformer a trained model needs (a different one is refused)."""
    m = config.model
    embedder = build_embedder(m, vocabs, token_features, pretrained, encoder_record)
    encoder = ENCODERS.get(m.encoder, "model.encoder").build(embedder.output_dim, m)
    labels = vocabs["tags"].itos
    decoder = DECODERS.get(m.decoder, "model.decoder")(labels, config.data.labelling)
    projection = build_projection(encoder.output_dim, len(labels), m)
    drop = LockedDropout if m.dropout_mode == "locked" else nn.Dropout
    output_dropout = None if m.output_dropout is None else drop(m.output_dropout)
    tagger = Tagger(embedder, encoder, decoder, projection, drop(m.dropout), output_dropout=output_dropout)
    if m.forget_bias is not None:
        set_forget_bias(tagger, m.forget_bias)
    return tagger


def parameter_groups(model: nn.Module, t: TrainConfig, transformer: Any = None) -> list[Any]:
    """The trainable parameters, with the word embeddings (``model.embedder.words``) in a group of their
    own at ``t.embedding_lr × t.lr`` when that multiple is not 1 (the decay scales both groups alike), and a
    fine-tuned transformer's in one at its own rate (:func:`seqlab.core.optim.transformer_groups`;
    ``transformer`` is its config)."""
    embedder = getattr(model, "embedder", None)
    groups = transformer_groups(model, getattr(embedder, "contextual", None), transformer)
    if isinstance(groups[0], dict):  # [the rest, the encoder]
        rest, more = groups[0]["params"], groups[1:]
    else:
        rest, more = groups, []
    words = getattr(embedder, "words", None)
    if t.embedding_lr == 1.0 or words is None or not words.weight.requires_grad:  # Config refuses the rest
        return [{"params": rest}, *more] if more else rest
    rest = [p for p in rest if p is not words.weight]
    return [{"params": rest}, {"params": [words.weight], "lr": t.lr * t.embedding_lr}, *more]
