"""Batched inference: label sequences (and span confidences) for encoded sentences."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from seqlab.data.batching import Encoded, length_mask, make_batch, sorted_batches
from seqlab.data.schemes import Span, SpanReader
from seqlab.data.vocab import Vocab
from seqlab.models.tagger import Tagger
from seqlab.modules.window import WindowEncoder
from seqlab.modules.window_fast import WindowTables, Workspace


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
    tables: bool = True,
    workspace: Workspace | None = None,
) -> list[Prediction]:
    """Decode every sentence of ``data`` (sorted by length into batches), in the original order.

    A span's confidence is the smallest posterior marginal p(y_t = predicted label | x)
    over its tokens, from the CRF's forward-backward (or the softmax). A windowed tagger reads its
    window through per-type tables (:class:`seqlab.modules.window_fast.WindowTables`, same scores,
    several times faster); ``tables=False`` runs the plain forward pass instead. A caller that tags
    repeatedly (a service) passes the same ``workspace`` each time, so the tables reuse its memory.
    """
    if len(data) == 0:
        return []
    device = device or next(model.parameters()).device
    model.eval()
    out: list[Prediction | None] = [None] * len(data)
    names = np.array(labels.itos, dtype=object)  # label id -> label string, indexed by whole rows
    read_spans = SpanReader(labels.itos)
    with torch.inference_mode():
        chars = model.embedder.chars
        table = None  # spelling vectors computed once per word type, not once per token
        if chars is not None:
            table = chars.encode_types(data.type_chars.to(device), data.type_char_lengths.to(device))
        # windowed taggers: the first layer that reads the window as per-type tables (seqlab.modules.window_fast)
        fast = None
        if tables and isinstance(model.encoder, WindowEncoder):
            fast = WindowTables(model, data, table, workspace=workspace)
        for indices in sorted_batches(data, batch_size):
            if fast is not None:  # the tables need only which sentences, and their lengths
                mask = length_mask(data.lengths[indices]).to(device)  # shape: (B, T)
                emissions = fast.emissions(indices, mask)  # shape: (B, T, K)
            else:
                batch = make_batch(data, indices, table).to(device)
                mask, emissions = batch.mask, model.emissions(batch)  # shapes: (B, T), (B, T, K)
            best = model.decoder.decode(emissions, mask)  # shape: (B, T)
            chosen = None
            if confidences:
                marginals = model.decoder.marginals(emissions, mask)  # shape: (B, T, K)
                chosen = marginals.gather(-1, best.unsqueeze(-1)).squeeze(-1).cpu()  # shape: (B, T)
            ids, lengths = best.cpu().numpy(), data.lengths[indices].numpy()  # shapes: (B, T), (B,)
            found = read_spans(ids, lengths)  # the chunks of every sentence at once (no loop over tokens)
            for row, (index, length) in enumerate(zip(indices.tolist(), lengths.tolist())):
                scored = _confident(found[row], chosen[row] if chosen is not None else None)
                out[index] = Prediction(names[ids[row, :length]].tolist(), scored)
    return out  # type: ignore[return-value]


def _confident(found: Sequence[Span], probs: torch.Tensor | None) -> list[tuple[str, int, int, float]]:
    if probs is None:
        return [(k, s, e, 1.0) for k, s, e in found]
    return [(k, s, e, float(probs[s:e].min())) for k, s, e in found]
