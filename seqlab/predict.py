"""Batched inference: label sequences (and span confidences) for encoded sentences."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from seqlab.data.batching import Encoded, iterate
from seqlab.data.schemes import Span, spans
from seqlab.data.vocab import Vocab
from seqlab.models.tagger import Tagger


@dataclass(frozen=True)
class Prediction:
    """One sentence's labels (in the model's scheme) and its spans with confidences."""

    labels: list[str]
    spans: list[tuple[str, int, int, float]]  # (type, start, end exclusive, confidence)


def predict(
    model: Tagger,
    data: Encoded,
    labels: Vocab,
    *,
    batch_size: int = 100,
    device: torch.device | None = None,
    confidences: bool = False,
) -> list[Prediction]:
    """Decode every sentence of ``data`` (sorted by length into batches), in the original order.

    A span's confidence is the smallest posterior marginal p(y_t = predicted label | x)
    over its tokens, from the CRF's forward-backward (or the softmax).
    """
    device = device or next(model.parameters()).device
    model.eval()
    out: list[Prediction | None] = [None] * len(data)
    itos = labels.itos
    with torch.inference_mode():
        chars = model.embedder.chars
        table = None  # spelling vectors computed once per word type, not once per token
        if chars is not None:
            table = chars.encode_types(data.type_chars.to(device), data.type_char_lengths.to(device))
        for batch in iterate(data, batch_size, shuffle=False, char_table=table):
            batch = batch.to(device)
            if confidences:
                best, marginals = model.decode_with_marginals(batch)  # shapes: (B, T), (B, T, K)
                chosen = marginals.gather(-1, best.unsqueeze(-1)).squeeze(-1).cpu()  # shape: (B, T)
            else:
                best, chosen = model.decode(batch), None
            best = best.cpu()
            lengths = batch.mask.sum(1).cpu().tolist()
            for row, (index, length) in enumerate(zip(batch.indices.tolist(), lengths)):
                seq = [itos[i] for i in best[row, :length].tolist()]
                found = spans(seq)
                scored = _confident(found, chosen[row] if chosen is not None else None)
                out[index] = Prediction(seq, scored)
    return out  # type: ignore[return-value]


def _confident(found: Sequence[Span], probs: torch.Tensor | None) -> list[tuple[str, int, int, float]]:
    if probs is None:
        return [(k, s, e, 1.0) for k, s, e in found]
    return [(k, s, e, float(probs[s:e].min())) for k, s, e in found]
