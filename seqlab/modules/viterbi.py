"""Viterbi decoding (Viterbi 1967) under transition constraints, shared by the CRF and the softmax decoder.

``penalty`` turns a bool table of allowed transitions (or start / end tags) into the additive
``DISALLOWED`` scores both decoders add; ``viterbi`` finds the best path for a batch. See
:mod:`seqlab.modules.crf` for why the loop avoids ops that enter the OpenMP pool.
"""
from __future__ import annotations

import torch
from torch import Tensor

DISALLOWED = -10000.0
"""Additive score of a disallowed transition, start tag or end tag."""


def viterbi(emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor) -> Tensor:
    """Best tag path (B, T) by max-sum dynamic programming (Viterbi 1967), 0 beyond each sentence.

    ``mask`` rows are left-aligned prefixes; an all-False row (an empty sentence) decodes to all 0.

    The time loop keeps only the max scores; each back-pointer is recomputed along the best
    path during the backtrace (``torch.max`` with indices would stall, see the module notes).
    Scores are float64: ``amax`` over a last dimension of ~17 is 3x faster than in float32.
    """
    batch, length, num_tags = emissions.shape
    emit = emissions.new_empty((length, batch, num_tags), dtype=torch.float64)  # shape: (T, B, K)
    emit.copy_(emissions.transpose(0, 1))
    trans_t = trans.t().to(torch.float64, memory_format=torch.contiguous_format)  # shape: (K, K), [j, i] = trans[i, j]
    scores = torch.empty_like(emit)  # shape: (T, B, K)
    scores_t, score_rows, emit_t = scores.unbind(0), scores.unsqueeze(2).unbind(0), emit.unbind(0)
    paths = emit.new_empty((batch, num_tags, num_tags))  # shape: (B, K, K), [b, j, i]: best via i to j
    torch.add(start, emit_t[0], out=scores_t[0])
    for t in range(1, length):
        torch.amax(torch.add(score_rows[t - 1], trans_t, out=paths), dim=-1, out=scores_t[t]).add_(emit_t[t])
    lengths = mask.sum(1)  # shape: (B,)
    last = (lengths - 1).clamp_(min=0).view(1, -1, 1).expand(1, -1, num_tags)  # shape: (1, B, K)
    path = torch.empty((length, batch), dtype=torch.long, device=emissions.device)  # shape: (T, B)
    path_t = path.unbind(0)
    torch.argmax(scores.gather(0, last).squeeze(0) + end, dim=-1, out=path_t[-1])
    beyond = None if bool((lengths == length).all()) else (~mask.t()).unbind(0)  # each shape: (B,)
    into = emit.new_empty((batch, num_tags))  # shape: (B, K), scores of each tag at t - 1 into path[t]
    for t in range(length - 1, 0, -1):
        torch.index_select(trans_t, 0, path_t[t], out=into).add_(scores_t[t - 1])
        if beyond is None:
            torch.argmax(into, dim=-1, out=path_t[t - 1])
        else:  # a sentence that ends before t keeps its last tag until its end
            torch.where(beyond[t], path_t[t], into.argmax(-1), out=path_t[t - 1])
    return torch.mul(mask, path.t()).contiguous()  # shape: (B, T)


def penalty(name: str, allowed: Tensor | None, shape: tuple[int, ...]) -> Tensor:
    """Additive penalty buffer: 0 where ``allowed`` is True, ``DISALLOWED`` where it is False."""
    if allowed is None:
        return torch.zeros(shape)
    if not isinstance(allowed, Tensor) or allowed.dtype != torch.bool or tuple(allowed.shape) != shape:
        raise ValueError(f"{name} must be a bool tensor of shape {shape}, got {describe(allowed)}")
    return torch.zeros(shape).masked_fill_(~allowed.cpu(), DISALLOWED)


def describe(x: object) -> str:
    """Shape and dtype of a tensor, or the type of anything else, for error messages."""
    return f"{tuple(x.shape)} {x.dtype}" if isinstance(x, Tensor) else type(x).__name__
