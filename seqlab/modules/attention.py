"""Attention layers of the entity-aware relation classifier (Lee, Seo & Choi 2019, §3.2-3.4).

- :class:`MultiHeadSelfAttention`: scaled dot-product self-attention over the word
  representations (§3.2; Vaswani et al. 2017), with a residual connection and layer norm.
- :class:`LatentEntityTyping`: K latent type vectors; an entity's type is their mixture weighted
  by attention over the entity's hidden state (§3.4).
- :class:`EntityAwareAttention`: attention over the BiLSTM states scored from each state with its
  relative-position embeddings to e1 and e2, and from the entity features (states at the
  entities plus their latent types) (§3.3); it returns the sentence representation z.

Every forward that has attention weights also returns them, for the §5 visualisations.
"""
from __future__ import annotations

import math

import torch
from torch import nn

NEG_INF = -1e9


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention with a residual connection and layer normalisation (Lee et al. 2019 §3.2).

    Queries, keys and values are linear maps of the input into ``heads`` heads of
    ``ceil(dim / heads)`` units (so 50-dimensional GloVe works with 4 heads); the heads' outputs are
    concatenated and mapped back to ``dim``.
    """

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = math.ceil(dim / heads)
        inner = self.heads * self.head_dim
        self.qkv = nn.Linear(dim, 3 * inner)
        self.out = nn.Linear(inner, dim)
        self.norm = nn.LayerNorm(dim)
        self.input_dim = self.output_dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, T, D), mask (B, T) bool → outputs (B, T, D) and weights (B, heads, T, T)."""
        batch, width, _ = x.shape
        q, k, v = self.qkv(x).view(batch, width, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)  # shape: (B, h, T, d)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)  # shape: (B, h, T, T)
        scores = scores.masked_fill(~mask[:, None, None, :], NEG_INF)
        weights = scores.softmax(dim=-1)  # shape: (B, h, T, T)
        heads = (weights @ v).transpose(1, 2).reshape(batch, width, -1)  # shape: (B, T, h*d)
        return self.norm(x + self.out(heads)), weights


class LatentEntityTyping(nn.Module):
    """K latent entity types (Lee et al. 2019 §3.4): ``t_e = Σ_k softmax_k(h_e · c_k) c_k``."""

    def __init__(self, dim: int, types: int) -> None:
        super().__init__()
        self.types = nn.Parameter(torch.empty(types, dim))  # shape: (K, D)
        nn.init.xavier_uniform_(self.types)
        self.dim = dim

    def forward(self, entity: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """entity (B, D) → latent type representation (B, D) and type weights (B, K)."""
        weights = (entity @ self.types.t()).softmax(dim=-1)  # shape: (B, K)
        return weights @ self.types, weights  # shape: (B, D)


def span_offsets(width: int, span: torch.Tensor) -> torch.Tensor:
    """Signed distance of each position to an inclusive span: 0 inside, <0 before, >0 after.

    span (B, 2) → offsets (B, width).
    """
    positions = torch.arange(width, device=span.device).unsqueeze(0)  # shape: (1, T)
    before = positions - span[:, :1]  # shape: (B, T), negative before the span
    after = positions - span[:, 1:]  # shape: (B, T), positive after the span
    return torch.where(before < 0, before, torch.where(after > 0, after, torch.zeros_like(after)))


def gather_rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x (B, T, D), index (B,) → x[b, index[b]] (B, D)."""
    return x.gather(1, index.view(-1, 1, 1).expand(-1, 1, x.shape[-1])).squeeze(1)


class EntityAwareAttention(nn.Module):
    """Entity-aware attention (Lee et al. 2019 §3.3, Eq. 8-10).

    ``u_i = tanh(W_H [h_i; p_i^e1; p_i^e2] + W_E [h_e1; t_e1; h_e2; t_e2])``,
    ``α = softmax(v·u)``, ``z = Σ_i α_i h_i``. ``p`` are learned relative-position embeddings,
    one table of ``2L-1`` offsets shared by e1 and e2; ``h_e`` is the BiLSTM state at the entity's
    last token (its head in English noun compounds); ``t_e`` its latent type when ``typing`` is
    given (without LET the entity features are ``[h_e1; h_e2]``).
    """

    def __init__(self, dim: int, attention_dim: int, position_dim: int, max_length: int,
                 typing: LatentEntityTyping | None = None) -> None:
        super().__init__()
        if typing is not None and typing.dim != dim:
            raise ValueError(f"latent type dim must match the encoder's output dim, but got {typing.dim} and {dim}")
        self.max_length = max_length
        self.positions = nn.Embedding(2 * max_length - 1, position_dim)
        self.typing = typing
        entity_dim = (4 if typing is not None else 2) * dim
        self.hidden_proj = nn.Linear(dim + 2 * position_dim, attention_dim, bias=False)
        self.entity_proj = nn.Linear(entity_dim, attention_dim, bias=False)
        self.score = nn.Linear(attention_dim, 1, bias=False)
        self.input_dim = self.output_dim = dim

    def position_ids(self, width: int, span: torch.Tensor) -> torch.Tensor:
        """Row ids into the position table, offsets clipped to ±(L-1) (shape: (B, T))."""
        limit = self.max_length - 1
        return span_offsets(width, span).clamp(-limit, limit) + limit

    def forward(self, h: torch.Tensor, mask: torch.Tensor, e1: torch.Tensor, e2: torch.Tensor
                ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """h (B, T, D), mask (B, T), e1/e2 (B, 2) spans → z (B, D) and the weights (``alpha``, types)."""
        width = h.shape[1]
        p1 = self.positions(self.position_ids(width, e1))  # shape: (B, T, P)
        p2 = self.positions(self.position_ids(width, e2))  # shape: (B, T, P)
        h1, h2 = gather_rows(h, e1[:, 1]), gather_rows(h, e2[:, 1])  # shape: (B, D) each
        extras: dict[str, torch.Tensor] = {"e1_state": h1, "e2_state": h2}
        if self.typing is not None:
            t1, extras["e1_types"] = self.typing(h1)
            t2, extras["e2_types"] = self.typing(h2)
            entities = torch.cat([h1, t1, h2, t2], dim=-1)  # shape: (B, 4D)
        else:
            entities = torch.cat([h1, h2], dim=-1)  # shape: (B, 2D)
        u = torch.tanh(self.hidden_proj(torch.cat([h, p1, p2], dim=-1))
                       + self.entity_proj(entities).unsqueeze(1))  # shape: (B, T, A)
        scores = self.score(u).squeeze(-1).masked_fill(~mask, NEG_INF)  # shape: (B, T)
        alpha = scores.softmax(dim=-1)  # shape: (B, T)
        extras["alpha"] = alpha
        return (alpha.unsqueeze(-1) * h).sum(dim=1), extras  # shape: (B, D)
