"""Data columns as part of a token's type (POS features), and the held-out validation sample."""
from __future__ import annotations

import numpy as np
import pytest

from seqlab.tagging.config import load_config
from seqlab.data.batching import encode
from seqlab.data.dataset import hold_out, read_split, read_splits
from seqlab.data.vocab import WordVocab, char_vocab, label_vocab
from seqlab.core.errors import SeqlabError
from tests.conftest import FIXTURES


def vocabs(words):
    return {"words": WordVocab(sorted(set(words))), "chars": char_vocab(words), "tags": label_vocab(["O"])}


def test_a_type_is_a_word_with_its_column_values():
    sentences = [["can", "we", "can"], ["can"]]
    pos = {"pos": [["MD", "PRP", "VB"], ["MD"]]}
    seen = []

    def features(words, columns):
        seen.append((list(words), dict(columns)))
        return np.array([[len(w), c == "MD"] for w, c in zip(words, columns["pos"])], dtype=np.float32)

    data = encode(sentences, vocabs(["can", "we"]), features=features, columns=pos)
    assert seen == [(["can", "we", "can"], {"pos": ["MD", "PRP", "VB"]})]
    assert data.types.tolist() == [[1, 2, 3], [1, 0, 0]]
    assert data.type_features[data.types][0, :, 1].tolist() == [1.0, 0.0, 0.0]
    assert data.words[0, 0] == data.words[0, 2]  # the same word id, whatever its POS


def test_columns_must_match_the_tokens():
    with pytest.raises(ValueError, match="every column must match the tokens in length"):
        encode([["a", "b"]], vocabs(["a", "b"]), features=lambda w, c: np.zeros((len(w), 1)), columns={"pos": [["X"]]})


def test_hold_out_is_seeded_disjoint_and_keeps_columns(monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURES / "chunk"))
    cfg = load_config(FIXTURES / "chunk" / "window.yaml")
    full = read_split(cfg.data, "train")
    rest, dev = hold_out(full, 3, seed=0)
    assert len(rest.tokens) + len(dev.tokens) == len(full.tokens) and dev.name == "dev"
    assert sorted(map(tuple, rest.tokens + dev.tokens)) == sorted(map(tuple, full.tokens))
    assert [len(s) for s in dev.columns["pos"]] == [len(s) for s in dev.tokens]
    assert hold_out(full, 3, seed=0)[1].tokens == dev.tokens != hold_out(full, 3, seed=1)[1].tokens
    splits = read_splits(cfg.data)
    assert splits["dev"].tokens == dev.tokens and set(splits) == {"train", "dev", "test"}
    with pytest.raises(SeqlabError, match="cannot hold out 10 of the 10 sentences"):
        hold_out(full, 10, seed=0)


def test_data_limit_keeps_the_first_sentences_of_each_split_for_a_smoke_run(ner_data):
    full = read_splits(load_config(FIXTURES / "ner" / "tiny.yaml").data)
    config = load_config(FIXTURES / "ner" / "tiny.yaml", ["data.limit=2"]).data
    limited = read_splits(config)
    assert {name: len(s.tokens) for name, s in limited.items()} == {"train": 2, "dev": 2, "test": 2}
    assert all(limited[n].tokens == full[n].tokens[:2] for n in limited)
    assert len(read_split(config, "eval", path=full["dev"].path).tokens) == len(full["dev"].tokens)  # eval: all


def test_data_limit_must_not_be_negative():
    from seqlab.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"data\.limit: expected a number of sentences >= 0 \(0: all\), got -1"):
        load_config(FIXTURES / "ner" / "tiny.yaml", ["data.limit=-1"])
