"""The unpacked BiLSTM must equal a packed bidirectional nn.LSTM with the same weights."""
import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from seqlab.modules import rnn
from seqlab.modules.rnn import BiLSTM, reverse_index


def test_reverse_index_reverses_within_length_and_is_an_involution():
    index = reverse_index(torch.tensor([3, 1, 4]), 4)
    assert index.tolist() == [[2, 1, 0, 3], [0, 1, 2, 3], [3, 2, 1, 0]]
    assert torch.equal(index.gather(1, index), torch.arange(4).expand(3, 4))


@pytest.mark.parametrize("threshold", [0, 10**9], ids=["packed", "padded"])
@pytest.mark.parametrize("layers", [1, 2])
def test_matches_packed_bidirectional_lstm(layers, threshold, monkeypatch):
    torch.manual_seed(0)
    ours = BiLSTM(5, 4, layers)
    ref = nn.LSTM(5, 4, num_layers=layers, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for i, (f, b) in enumerate(zip(ours.forward_layers, ours.backward_layers)):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(ref, f"{name}_l{i}").copy_(getattr(f, f"{name}_l0"))
                getattr(ref, f"{name}_l{i}_reverse").copy_(getattr(b, f"{name}_l0"))
    lengths = torch.tensor([6, 2, 4, 1])
    x = torch.randn(4, 6, 5)
    mask = torch.arange(6).unsqueeze(0) < lengths.unsqueeze(1)
    x = x * mask.unsqueeze(-1) + (~mask).unsqueeze(-1) * 100.0  # garbage in padding must not leak
    monkeypatch.setattr(rnn, "PACK_MIN_CELLS", threshold)
    out, final = ours(x, lengths)
    packed, (h, _) = ref(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
    expected, _ = pad_packed_sequence(packed, batch_first=True, total_length=6)
    assert torch.allclose(out * mask.unsqueeze(-1), expected, atol=1e-6)
    assert torch.allclose(final, torch.cat([h[-2], h[-1]], dim=-1), atol=1e-6)


def test_dropout_falls_between_stacked_layers_only():
    torch.manual_seed(0)
    x, lengths = torch.randn(3, 5, 4), torch.tensor([5, 3, 1])
    single = BiLSTM(4, 3, layers=1, dropout=0.9).train()
    assert torch.equal(single(x, lengths)[0], single.eval()(x, lengths)[0])  # no layer to drop between
    stacked = BiLSTM(4, 3, layers=2, dropout=0.5)
    plain = BiLSTM(4, 3, layers=2)
    plain.load_state_dict(stacked.state_dict())
    assert torch.equal(stacked.eval()(x, lengths)[0], plain.eval()(x, lengths)[0])  # off at inference
    assert not torch.allclose(stacked.train()(x, lengths)[0], plain.train()(x, lengths)[0])


def test_dropout_rate_is_checked():
    with pytest.raises(ValueError, match=r"dropout rate must be in \[0, 1\), got 1.0"):
        BiLSTM(4, 3, layers=2, dropout=1.0)


def test_set_forget_bias_sets_the_forget_slice_of_every_lstm_only():
    torch.manual_seed(0)
    model = nn.Sequential(BiLSTM(5, 4, layers=2), nn.LSTM(3, 6))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rnn.set_forget_bias(model, 1.0)
    lstms = [m for m in model.modules() if isinstance(m, nn.LSTM)]
    assert len(lstms) == 5
    for lstm in lstms:
        h = lstm.hidden_size
        assert torch.equal(lstm.bias_ih_l0[h : 2 * h] + lstm.bias_hh_l0[h : 2 * h], torch.ones(h))
    for key, value in model.state_dict().items():
        if "bias" in key:
            h = value.shape[0] // 4
            kept = torch.cat([value[:h], value[2 * h :]])
            assert torch.equal(kept, torch.cat([before[key][:h], before[key][2 * h :]])), key
        else:
            assert torch.equal(value, before[key]), key
