"""Windowed encoders (Turian et al. 2009 §2): the vectorised window against a naive loop, and the layers."""
from __future__ import annotations

import pytest
import torch

from seqlab.modules.window import WindowEncoder, output_filters, window_gather
from seqlab.modules.window_spec import LayerSpec, parse_architecture


def naive_windows(tokens: torch.Tensor, lengths: list[int], pad: torch.Tensor, size: int) -> torch.Tensor:
    """Window of every position, built one token at a time."""
    batch, length, dim = tokens.shape
    out = torch.zeros(batch, length, size * dim)
    half = size // 2
    for b in range(batch):
        for t in range(length):
            parts = []
            for offset in range(-half, half + 1):
                i = t + offset
                parts.append(tokens[b, i] if 0 <= i < lengths[b] and t < lengths[b] else pad)
            out[b, t] = torch.cat(parts)
    return out


@pytest.mark.parametrize("size", [1, 3, 7])
def test_window_gather_matches_a_naive_loop(size):
    torch.manual_seed(0)
    lengths = [5, 2, 1]
    tokens = torch.randn(3, 5, 4)
    mask = torch.arange(5).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    pad = torch.randn(4)
    got = window_gather(tokens, mask, pad, size)
    want = naive_windows(tokens, lengths, pad, size)
    for b, n in enumerate(lengths):
        assert torch.equal(got[b, :n], want[b, :n])


def test_window_gather_refuses_even_sizes():
    with pytest.raises(ValueError, match="positive odd number, but got 4"):
        window_gather(torch.zeros(1, 2, 3), torch.ones(1, 2, dtype=torch.bool), torch.zeros(3), 4)


def test_token_layer_is_shared_across_positions_and_applied_to_padding():
    """T before the window equals T applied to each of the window's inputs (pad included)."""
    torch.manual_seed(0)
    enc = WindowEncoder.from_architecture(4, "I-T(3)-O", size=3, filters=1)
    with torch.no_grad():
        enc.pad.normal_()
    x = torch.randn(2, 4, 4)
    mask = torch.tensor([[True] * 4, [True, True, False, False]])
    got = enc(x, mask)  # shape: (2, 4, 9)
    raw = naive_windows(x, [4, 2], enc.pad.detach(), 3).view(2, 4, 3, 4)
    want = enc.token_layers(raw).reshape(2, 4, 9)
    assert torch.allclose(got[0], want[0], atol=1e-6) and torch.allclose(got[1, :2], want[1, :2], atol=1e-6)


def test_dropout_acts_between_hidden_layers_in_training_only():
    torch.manual_seed(0)
    plain = WindowEncoder.from_architecture(3, "I-T(4)-W(5)-W(6)-O", size=3, filters=1)
    dropped = WindowEncoder.from_architecture(3, "I-T(4)-W(5)-W(6)-O", size=3, filters=1, dropout=0.5)
    dropped.load_state_dict(plain.state_dict())  # dropout has no weights: old models load unchanged
    x, mask = torch.randn(2, 4, 3), torch.ones(2, 4, dtype=torch.bool)
    assert torch.equal(dropped.eval()(x, mask), plain.eval()(x, mask))
    out = dropped.train()(x, mask)
    assert not torch.equal(out, plain(x, mask))  # hidden units were dropped...
    assert (out != 0).all()  # ...but not the output's (48 values): that is the tagger's own dropout


def test_batched_equals_one_by_one():
    torch.manual_seed(0)
    enc = WindowEncoder.from_architecture(3, "I-T(4)-W(5)-W(6)-O", size=7, filters=2)
    x = torch.randn(2, 6, 3)
    mask = torch.tensor([[True] * 6, [True] * 3 + [False] * 3])
    both = enc(x, mask)
    alone = enc(x[1:, :3], mask[1:, :3])
    assert torch.allclose(both[1, :3], alone[0], atol=1e-6)
    assert enc.output_dim == 6 and both.shape == (2, 6, 6)


def test_layer_sizes_and_filters_follow_the_architecture():
    enc = WindowEncoder.from_architecture(10, "I-T(4,q3)-W(5)-O(q7)", size=5, filters=2)
    token, window = enc.token_layers[0][0], enc.window_layers[0][0]
    assert (token.in_dim, token.out_dim, token.filters) == (10, 4, 3)
    assert (window.in_dim, window.out_dim, window.filters) == (20, 5, 2)
    assert output_filters("I-T(4,q3)-W(5)-O(q7)", 2) == 7 and output_filters("I-O", 2) == 2
    plain = WindowEncoder.from_architecture(10, "I-O", size=7)
    assert plain.output_dim == 70 and len(plain.token_layers) == 0 and len(plain.window_layers) == 0


def test_parse_architecture():
    assert parse_architecture("I-T(150)-W(310)-W(310)-O") == (
        LayerSpec("T", 150, None), LayerSpec("W", 310, None), LayerSpec("W", 310, None), LayerSpec("O", None, None))
    assert parse_architecture("I-W(8, q2)-O(q0)") == (LayerSpec("W", 8, 2), LayerSpec("O", None, 0))


@pytest.mark.parametrize("text, message", [
    ("T(1)-O", "starts with the input 'I'"),
    ("I-W(3)", "ends with the output layer 'O'"),
    ("I-O-O", "ends with the output layer 'O', and has only one"),
    ("I-W(3)-T(2)-O", "token layers T come before window layers W"),
    ("I-X(3)-O", "part 2 'X(3)' is not T(n)"),
    ("I-W(0)-O", "needs at least one unit"),
    ("", "expected an architecture"),
])
def test_bad_architectures_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_architecture(text)
