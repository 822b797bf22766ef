"""The character BiLSTM (seqlab.modules.embedder.CharBiLSTM): padding, dropout, type tables."""
from __future__ import annotations

import pytest
import torch

from seqlab.tagging.config import ConfigError, load_config
from seqlab.modules.embedder import CharBiLSTM


def words(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([5, 1, 3, 7])
    chars = torch.randint(1, 20, (4, 7), generator=gen)
    chars[torch.arange(7) >= lengths[:, None]] = 0  # padding
    return chars, lengths


def test_padding_does_not_change_a_words_vector():
    torch.manual_seed(0)
    net = CharBiLSTM(20, dim=6, hidden=5).eval()
    chars, lengths = words()
    wide = torch.cat([chars, torch.zeros(4, 3, dtype=torch.long)], dim=1)
    assert torch.allclose(net(chars, lengths), net(wide, lengths), atol=1e-6)
    alone = net(chars[2:3, :3], lengths[2:3])
    assert torch.allclose(net(chars, lengths)[2:3], alone, atol=1e-6)


def test_char_dropout_acts_in_training_only_and_keeps_the_parameters():
    torch.manual_seed(0)
    plain = CharBiLSTM(20, dim=6, hidden=5)
    dropped = CharBiLSTM(20, dim=6, hidden=5, dropout=0.5)
    dropped.load_state_dict(plain.state_dict())  # dropout adds no weights: old models still load
    chars, lengths = words()
    plain.eval(), dropped.eval()
    assert torch.equal(plain(chars, lengths), dropped(chars, lengths))
    dropped.train()
    torch.manual_seed(1)
    a = dropped(chars, lengths)
    torch.manual_seed(2)
    b = dropped(chars, lengths)
    assert not torch.allclose(a, b)
    dropped.eval()
    assert torch.allclose(dropped.encode_types(chars, lengths), plain(chars, lengths), atol=1e-6)


def test_chars_dropout_is_read_from_the_config_and_checked(ner_data, tmp_path):
    from tests.helpers import tagger_trainer

    cfg = load_config(ner_data / "tiny.yaml", ["model.chars.dropout=0.3"])
    assert tagger_trainer(cfg, tmp_path, progress=False).model.embedder.chars.dropout.p == 0.3
    for bad in ("1.0", "-0.1", ".nan"):
        with pytest.raises(ConfigError, match=r"model.chars.dropout: expected a dropout rate in \[0, 1\)"):
            load_config(ner_data / "tiny.yaml", [f"model.chars.dropout={bad}"])


def test_type_table_runs_each_length_apart_and_keeps_the_order(monkeypatch):
    """encode_types groups words by length (no padded cell, never the packed kernels) and returns the rows in the
    table's order, equal to each word's vector computed alone, also when a group is cut into chunks."""
    from seqlab.modules import rnn

    torch.manual_seed(0)
    net = CharBiLSTM(20, dim=6, hidden=5).eval()
    gen = torch.Generator().manual_seed(3)
    lengths = torch.tensor([4, 1, 4, 2, 7, 4, 2, 1, 3])
    chars = torch.randint(1, 20, (9, 7), generator=gen)
    chars[torch.arange(7) >= lengths[:, None]] = 0

    def no_packing(*args: object) -> None:
        raise AssertionError("a type table must not need packing")

    monkeypatch.setattr(rnn, "_packed", no_packing)
    monkeypatch.setattr(rnn, "PACK_MIN_CELLS", 0)  # a padded batch would pack now
    with torch.inference_mode():
        alone = torch.cat([net(chars[i : i + 1, : int(n)], lengths[i : i + 1]) for i, n in enumerate(lengths)])
        for chunk in (2, 4096):
            assert torch.allclose(net.encode_types(chars, lengths, chunk=chunk), alone, atol=1e-6)
