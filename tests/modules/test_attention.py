"""Self-attention, latent entity typing and entity-aware attention (Lee et al. 2019 §3)."""
from __future__ import annotations

import pytest
import torch

from seqlab.modules.attention import (
    EntityAwareAttention, LatentEntityTyping, MultiHeadSelfAttention, gather_rows, span_offsets,
)


def test_span_offsets_hand_worked():
    spans = torch.tensor([[2, 3], [0, 0]])
    assert span_offsets(6, spans).tolist() == [[-2, -1, 0, 0, 1, 2], [0, 1, 2, 3, 4, 5]]


def test_position_ids_are_clipped_to_the_table():
    attention = EntityAwareAttention(4, 3, 2, max_length=3)
    ids = attention.position_ids(8, torch.tensor([[5, 5]]))
    assert ids.tolist() == [[0, 0, 0, 0, 1, 2, 3, 4]]  # offsets -5..2 clipped to ±2, shifted by L-1 = 2
    assert attention.positions.num_embeddings == 5  # 2L - 1


def test_self_attention_ignores_padding():
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(6, heads=4).eval()  # 4 heads of ceil(6/4) = 2 units
    x = torch.randn(1, 5, 6)
    mask = torch.tensor([[True, True, True, False, False]])
    out, weights = layer(x, mask)
    changed = x.clone()
    changed[:, 3:] = 100.0
    out2, _ = layer(changed, mask)
    assert torch.allclose(out[:, :3], out2[:, :3], atol=1e-6)
    assert weights.shape == (1, 4, 5, 5) and torch.allclose(weights.sum(-1), torch.ones(1, 4, 5))
    assert weights[..., 3:].abs().max() == 0


def test_latent_types_are_a_convex_mixture_of_the_type_vectors():
    typing = LatentEntityTyping(4, types=3)
    entity = torch.randn(2, 4)
    mixed, weights = typing(entity)
    assert torch.allclose(weights.sum(-1), torch.ones(2))
    assert torch.allclose(mixed, weights @ typing.types)
    expected = torch.softmax(entity @ typing.types.t(), dim=-1)
    assert torch.allclose(weights, expected)


@pytest.mark.parametrize("typing", [True, False])
def test_entity_aware_attention_weights_and_output(typing):
    torch.manual_seed(0)
    let = LatentEntityTyping(4, 3) if typing else None
    attention = EntityAwareAttention(4, 5, 2, max_length=6, typing=let)
    h = torch.randn(2, 5, 4)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    e1, e2 = torch.tensor([[0, 0], [0, 1]]), torch.tensor([[3, 4], [2, 2]])
    z, extras = attention(h, mask, e1, e2)
    alpha = extras["alpha"]
    assert torch.allclose(alpha.sum(-1), torch.ones(2)) and alpha[1, 3:].abs().max() == 0
    assert torch.allclose(z, (alpha.unsqueeze(-1) * h).sum(1))
    assert torch.equal(extras["e2_state"], torch.stack([h[0, 4], h[1, 2]]))  # the entity's last token
    assert ("e1_types" in extras) == typing


def test_dimension_mismatch_is_reported():
    with pytest.raises(ValueError, match="must match the encoder's output dim, but got 3 and 4"):
        EntityAwareAttention(4, 5, 2, 6, LatentEntityTyping(3, 2))


def test_gather_rows():
    x = torch.arange(12.0).view(2, 3, 2)
    assert gather_rows(x, torch.tensor([2, 0])).tolist() == [[4.0, 5.0], [6.0, 7.0]]
