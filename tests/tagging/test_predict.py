"""Decoding (seqlab.tagging.predict): the fast path (per-type tables, grouped spelling vectors) gives the labels and
confidences of the plain forward pass, at any temperature."""
from __future__ import annotations

import pytest
import torch

from seqlab.data.batching import encode
from seqlab.models import tagger as tagger_module
from seqlab.tagging.predict import Predictor, _confident
from seqlab.tagging.config import load_config
from tests.conftest import FIXTURES
from tests.helpers import tagger_trainer


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny BiLSTM-CRF with a character BiLSTM, trained on the NER fixture until it finds spans, and its training
    split (trained once for the module)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SEQLAB_DATA", str(FIXTURES / "ner"))
        config = load_config(FIXTURES / "ner" / "tiny.yaml", ["train.epochs=20"])
        trainer = tagger_trainer(config, tmp_path_factory.mktemp("run"), progress=False)
        for epoch in range(20):
            trainer.train_epoch(epoch)
        return trainer.model.eval(), trainer.task.vocabs, trainer.task.splits["train"]


def assert_same(fast: list, plain: list) -> None:
    assert [p.labels for p in fast] == [p.labels for p in plain]
    assert [[s[:3] for s in p.spans] for p in fast] == [[s[:3] for s in p.spans] for p in plain]
    for a, b in zip(fast, plain):
        for x, y in zip(a.spans, b.spans):
            assert x[3] == pytest.approx(y[3], abs=1e-5)


@pytest.mark.parametrize("temperature", [1.0, 2.5])
@pytest.mark.parametrize("batch_size", [1, 3, 100])
def test_fast_path_matches_the_plain_forward_pass(trained, temperature, batch_size):
    model, vocabs, split = trained
    data = encode(split.tokens, vocabs)
    fast = Predictor(model, vocabs["tags"], temperature=temperature)(data, batch_size=batch_size, confidences=True)
    plain = Predictor(model, vocabs["tags"], tables=False, temperature=temperature)(
        data, batch_size=batch_size, confidences=True)
    assert_same(fast, plain)
    assert any(p.spans for p in fast)


def test_a_table_too_large_falls_back_to_per_batch_inputs(trained, monkeypatch):
    model, vocabs, split = trained
    data = encode(split.tokens, vocabs)
    assert model.input_table(data, model.spelling_table(data)).shape == (len(data.type_strings), model.encoder.input_dim)
    monkeypatch.setattr(tagger_module, "MAX_INPUT_TABLE_BYTES", 0)
    assert model.input_table(data, model.spelling_table(data)) is None
    fallback = Predictor(model, vocabs["tags"])(data, confidences=True)
    assert_same(fallback, Predictor(model, vocabs["tags"], tables=False)(data, confidences=True))


def test_the_input_table_holds_the_embedders_vector_of_each_token(trained):
    """Row ``types[i, t]`` of the table is what the embedder gives token t of sentence i in a batch."""
    from seqlab.data.batching import make_batch

    model, vocabs, split = trained
    data = encode(split.tokens, vocabs)
    with torch.inference_mode():
        spelling = model.spelling_table(data)
        table = model.input_table(data, spelling)
        batch = make_batch(data, torch.arange(len(data)), spelling)
        expected = model.embedder(batch)  # shape: (N, T, D)
    assert torch.equal(table[batch.types][batch.mask], expected[batch.mask])


def test_a_span_is_as_confident_as_its_least_confident_token():
    found = [("PER", 0, 2), ("LOC", 3, 4)]
    assert _confident(found, [0.9, 0.7, 0.1, 0.8]) == [("PER", 0, 2, 0.7), ("LOC", 3, 4, 0.8)]
    assert _confident(found, None) == [("PER", 0, 2, 1.0), ("LOC", 3, 4, 1.0)]


def test_a_full_spelling_cache_keeps_the_words_of_the_call(trained, monkeypatch):
    """When a call's new words would overfill the cache, it starts afresh with the words of that call it already
    held: only the new words go through the character BiLSTM, and every vector equals a fresh computation."""
    from seqlab.tagging.predict import SpellingCache

    model, vocabs, split = trained
    first, second = encode(split.tokens[:4], vocabs), encode(split.tokens[2:8], vocabs)
    held = set(first.type_strings)
    computed: list[int] = []
    spelling_table = model.spelling_table

    def counting(data, rows=None):
        computed.append(len(data.type_strings) if rows is None else len(rows))
        return spelling_table(data, rows)

    monkeypatch.setattr(model, "spelling_table", counting)
    cache = SpellingCache(capacity=len(second.type_strings) + 1)  # room for the second call, not for both
    with torch.inference_mode():
        cache.table(model, first)
        assert len(first.type_strings) + sum(w not in held for w in second.type_strings) > cache.capacity
        table = cache.table(model, second)
        assert torch.allclose(table, spelling_table(second), atol=1e-6)
    assert computed == [len(first.type_strings), sum(w not in held for w in second.type_strings)]
    assert set(cache.slots) == set(second.type_strings)
