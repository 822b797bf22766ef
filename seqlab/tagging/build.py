"""Explicit name → builder tables: a config and vocabularies become a model and an optimizer."""
from __future__ import annotations

import logging
import math
from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch import nn

from features.scaling import scale_embeddings
from seqlab.tagging.config import Config, ModelConfig, TrainConfig
from seqlab.data.schemes import allowed_transitions
from seqlab.data.vocab import CAPS, Vocab
from seqlab.core.errors import SeqlabError
from seqlab.models.tagger import Tagger
from seqlab.modules.crf import CRF
from seqlab.modules.decoders import PostViterbiDecoder, SoftmaxDecoder
from seqlab.modules.dropout import LockedDropout
from seqlab.modules.embedder import CharBiLSTM, TokenEmbedder
from seqlab.modules.encoders import BiLSTMEncoder
from seqlab.modules.rnn import set_forget_bias
from seqlab.modules.window import WindowEncoder, output_filters
from seqlab.tagging.features import TokenFeatures

log = logging.getLogger(__name__)


def _crf(labels: Sequence[str], scheme: str) -> nn.Module:
    allowed, start, end = allowed_transitions(labels, scheme)
    return CRF(len(labels), torch.tensor(allowed), torch.tensor(start), torch.tensor(end))


def _softmax(labels: Sequence[str], scheme: str) -> nn.Module:
    return SoftmaxDecoder(len(labels))


def _post_viterbi(labels: Sequence[str], scheme: str) -> nn.Module:
    allowed, start, end = allowed_transitions(labels, scheme)
    return PostViterbiDecoder(len(labels), torch.tensor(allowed), torch.tensor(start), torch.tensor(end))


def _window(input_dim: int, m: ModelConfig) -> nn.Module:
    w = m.window
    return WindowEncoder.from_architecture(input_dim, w.architecture, size=w.size, filters=w.filters,
                                           sqrt=m.quadratic_sqrt, dropout=w.dropout)


DECODERS: dict[str, Callable[[Sequence[str], str], nn.Module]] = {
    "crf": _crf, "softmax": _softmax, "softmax_viterbi": _post_viterbi,
}
ENCODERS: dict[str, Callable[[int, ModelConfig], nn.Module]] = {
    "bilstm": lambda input_dim, m: BiLSTMEncoder(input_dim, m.hidden, m.layers, m.layer_dropout),
    "window": _window,  # Turian, Bergstra & Bengio 2009: I-T(150)-W(310)-O and friends
}


def use_post_viterbi(model: Tagger, labels: Sequence[str], scheme: str) -> None:
    """Decode a softmax tagger's per-token probabilities by Viterbi under ``scheme``'s allowed transitions.

    Turian et al. (2009)'s "post-Viterbi" decoding, chosen at evaluation time: the weights are
    unchanged (the softmax and post-Viterbi decoders share them), only the decoding differs.
    """
    if not isinstance(model.decoder, SoftmaxDecoder):
        raise SeqlabError(f"post-Viterbi decoding applies to softmax taggers; this model decodes with "
                          f"{type(model.decoder).__name__}")
    model.decoder = _post_viterbi(labels, scheme).to(next(model.parameters()).device)


def build_projection(in_dim: int, num_tags: int, m: ModelConfig) -> nn.Module:
    """The output layer O: linear, or with quadratic filters (Turian et al. 2009 §3).

    With ``m.output_hidden``, a tanh layer of that size comes first, as in Lample et al. (2016)'s
    released tagger, where it sits between the BiLSTM and the CRF's scores.
    """
    filters = output_filters(m.window.architecture, m.window.filters) if m.window is not None else m.output_filters
    hidden = m.output_hidden or in_dim
    if not filters:
        out: nn.Module = nn.Linear(hidden, num_tags)
    else:
        from features.quadratic import QuadraticLayer

        out = QuadraticLayer(hidden, num_tags, filters, sqrt=m.quadratic_sqrt)
    if not m.output_hidden:
        return out
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.Tanh(), out)


def build_tagger(
    config: Config,
    vocabs: dict[str, Vocab],
    *,
    token_features: TokenFeatures | None = None,
    pretrained: torch.Tensor | None = None,
) -> Tagger:
    """Assemble ``Tagger(embedder, encoder, decoder)`` from a config."""
    m = config.model
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
    embedder = TokenEmbedder(words, chars, caps, tf.dense_dim if tf else 0, discrete)
    encoder = ENCODERS[m.encoder](embedder.output_dim, m)
    labels = vocabs["tags"].itos
    decoder = DECODERS[m.decoder](labels, config.data.tag_scheme)
    projection = build_projection(encoder.output_dim, len(labels), m)
    drop = LockedDropout if m.dropout_mode == "locked" else nn.Dropout
    output_dropout = None if m.output_dropout is None else drop(m.output_dropout)
    tagger = Tagger(embedder, encoder, decoder, len(labels), drop(m.dropout), projection=projection,
                    output_dropout=output_dropout)
    if m.forget_bias is not None:
        set_forget_bias(tagger, m.forget_bias)
    return tagger


#: Optimizer name → builder over the trainable parameters (``momentum`` is SGD's alone).
OPTIMIZERS: dict[str, Callable[[list[Any], TrainConfig], torch.optim.Optimizer]] = {
    "sgd": lambda ps, t: torch.optim.SGD(ps, lr=t.lr, momentum=t.momentum, weight_decay=t.weight_decay),
    "adam": lambda ps, t: torch.optim.Adam(ps, lr=t.lr, weight_decay=t.weight_decay),
    "nadam": lambda ps, t: torch.optim.NAdam(ps, lr=t.lr, weight_decay=t.weight_decay),
}


def build_optimizer(model: nn.Module, t: TrainConfig) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    """The optimizer ``t.optimizer`` names, with per-epoch exponential learning-rate decay.

    The word embeddings (``model.embedder.words``) form their own parameter group at
    ``t.embedding_lr × t.lr`` when that multiple is not 1; the decay scales both groups alike.
    """
    trainable = [p for p in model.parameters() if p.requires_grad]
    words = getattr(getattr(model, "embedder", None), "words", None)
    groups: list[Any] = trainable
    if t.embedding_lr != 1.0 and words is not None and words.weight.requires_grad:  # Config refuses it otherwise
        rest = [p for p in trainable if p is not words.weight]
        groups = [{"params": rest}, {"params": [words.weight], "lr": t.lr * t.embedding_lr}]
    opt = OPTIMIZERS[t.optimizer](groups, t)
    return opt, torch.optim.lr_scheduler.ExponentialLR(opt, gamma=t.lr_decay)


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
