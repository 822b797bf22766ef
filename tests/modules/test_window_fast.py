"""The windowed taggers' table fast path (Turian et al. 2009 §2-3) against the plain forward pass."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from features.quadratic import QuadraticLayer
from seqlab.data.batching import encode, iterate
from seqlab.data.vocab import CAPS, Vocab, WordVocab, char_vocab
from seqlab.models.tagger import Tagger
from seqlab.modules.decoders import SoftmaxDecoder
from seqlab.modules.embedder import CharBiLSTM, TokenEmbedder
from seqlab.modules.window import WindowEncoder, output_filters
from seqlab.modules.window_fast import WindowTables, Workspace, type_inputs
from seqlab.tagging.predict import Predictor, predict

SENTENCES = [["the", "cat", "sat", "on", "the", "mat", "."], ["Dogs", "bark"], ["Hi"],
             ["the", "dog", "sat", "on", "a", "cat", "mat", "today", "."], ["a", "cat"]]
POS = [["DT", "NN", "VBD", "IN", "DT", "NN", "."], ["NNS", "VBP"], ["UH"],
       ["DT", "NN", "VBD", "IN", "DT", "NN", "NN", "NN", "."], ["DT", "VB"]]
LABELS = ["B-NP", "I-NP", "O", "B-VP"]


def features(words, columns):
    """Deterministic dense vectors of (word, POS) types: a hash-seeded vector and the POS's one-hot."""
    tags = sorted({t for row in POS for t in row})
    out = np.zeros((len(words), 5 + len(tags)), dtype=np.float32)
    for i, (word, tag) in enumerate(zip(words, columns["pos"])):
        out[i, :5] = np.random.default_rng(sum(map(ord, word))).normal(size=5)
        out[i, 5 + tags.index(tag)] = 1.0
    return out


def make_tagger(architecture: str, filters: int, *, sqrt: bool = True, chars: bool = False) -> tuple[Tagger, dict]:
    torch.manual_seed(0)
    vocabs = {"words": WordVocab(sorted({w for s in SENTENCES for w in s[:-1]})),
              "chars": char_vocab(w for s in SENTENCES for w in s), "tags": Vocab(LABELS, pad=False, unk=False)}
    feature_dim = features(["x"], {"pos": ["DT"]}).shape[1]
    embedder = TokenEmbedder(nn.Embedding(len(vocabs["words"]), 3, padding_idx=0),
                             CharBiLSTM(len(vocabs["chars"]), 4, 3) if chars else None,
                             nn.Embedding(len(CAPS), 2, padding_idx=0), feature_dim)
    encoder = WindowEncoder.from_architecture(embedder.output_dim, architecture, size=7, filters=filters, sqrt=sqrt)
    with torch.no_grad():
        encoder.pad.normal_()  # a learned, non-zero padding vector
    out_filters = output_filters(architecture, filters)
    projection = QuadraticLayer(encoder.output_dim, len(LABELS), out_filters, sqrt=sqrt) if out_filters else \
        nn.Linear(encoder.output_dim, len(LABELS))
    model = Tagger(embedder, encoder, SoftmaxDecoder(len(LABELS)), projection, 0.5)
    return model.eval(), vocabs


def encoded(vocabs):
    return encode(SENTENCES, vocabs, features=features, columns={"pos": POS})


@pytest.mark.parametrize("architecture,filters,sqrt", [
    ("I-O", 0, True), ("I-O", 3, True), ("I-O", 2, False), ("I-W(5)-O", 2, True), ("I-T(4)-O", 1, True),
    ("I-T(4)-W(5)-O", 0, True), ("I-T(4)-W(5)-W(6)-O", 2, True), ("I-T(4,q0)-W(5,q3)-W(6,q1)-O(q2)", 1, False),
])
@pytest.mark.parametrize("batch_size", [1, 2, 5])
def test_tables_equal_the_forward_pass(architecture, filters, sqrt, batch_size):
    model, vocabs = make_tagger(architecture, filters, sqrt=sqrt)
    data = encoded(vocabs)
    with torch.inference_mode():
        whole, per_batch = WindowTables(model, data), WindowTables(model, data, max_table_bytes=0)
        assert whole.table is not None and per_batch.table is None
        in_workspace = WindowTables(model, data, max_table_bytes=0, workspace=Workspace())  # one batch's table at a time
        for batch in iterate(data, batch_size, shuffle=False):  # sentences of 1, 2, 7, 9 tokens: padding
            want = model.emissions(batch)  # shape: (B, T, K)
            mask = batch.mask.unsqueeze(-1).expand_as(want)
            for fast in (whole, per_batch, in_workspace):
                got = fast.emissions(batch.indices, batch.mask)  # shape: (B, T, K)
                assert got.shape == want.shape
                assert torch.allclose(got[mask], want[mask], atol=1e-5, rtol=1e-5)


def test_type_inputs_are_the_embedders_token_vectors():
    model, vocabs = make_tagger("I-T(4)-O", 1, chars=True)
    data = encoded(vocabs)
    with torch.inference_mode():
        per_type = type_inputs(model.embedder, data)  # shape: (n_types, D)
        batch = next(iterate(data, len(SENTENCES), shuffle=False))
        tokens = model.embedder(batch)  # shape: (B, T, D)
        types = data.types[batch.indices, : batch.mask.shape[1]]
    assert torch.allclose(per_type[types][batch.mask], tokens[batch.mask], atol=1e-6)


def test_predict_uses_the_tables_and_agrees_with_decode():
    model, vocabs = make_tagger("I-T(4)-W(5)-W(6)-O", 2)
    data = encoded(vocabs)
    with torch.inference_mode():
        want = {}
        for batch in iterate(data, 2, shuffle=False):
            best = model.decode(batch)
            for row, (i, n) in enumerate(zip(batch.indices.tolist(), batch.mask.sum(1).tolist())):
                want[i] = [LABELS[j] for j in best[row, :n].tolist()]
    got = predict(model, data, vocabs["tags"], batch_size=2, confidences=True)
    assert [p.labels for p in got] == [want[i] for i in range(len(SENTENCES))]
    assert all(0.0 < c <= 1.0 for p in got for *_, c in p.spans)


def test_tables_refuse_training_mode_and_other_encoders():
    model, vocabs = make_tagger("I-O", 1)
    with pytest.raises(ValueError, match="eval-mode"):
        WindowTables(model.train(), encoded(vocabs))
    model.eval().encoder = nn.Identity()
    with pytest.raises(TypeError, match="WindowEncoder"):
        WindowTables(model, encoded(vocabs))



def test_a_workspace_is_reused_and_tables_built_in_it_score_as_fresh_ones():
    model, vocabs = make_tagger("I-T(4)-W(5)-O", 2)
    data = encoded(vocabs)
    workspace = Workspace()
    with torch.inference_mode():
        fresh = WindowTables(model, data)
        first = WindowTables(model, data, workspace=workspace)
        held = workspace.buffer
        assert held is not None and first.table.data_ptr() == held.data_ptr()
        small = encode(SENTENCES[:2], vocabs, features=features, columns={"pos": POS[:2]})
        WindowTables(model, small, workspace=workspace)  # a smaller table: the same memory, overwritten
        assert workspace.buffer is held
        second = WindowTables(model, data, workspace=workspace)  # the first table is gone; this one is whole
        for batch in iterate(data, 2, shuffle=False):
            assert torch.allclose(second.emissions(batch.indices, batch.mask),
                                  fresh.emissions(batch.indices, batch.mask), atol=1e-6)
        assert workspace.take((2, 3), torch.zeros(1, dtype=torch.float64)).dtype == torch.float64  # a new buffer
    predictor = Predictor(model, vocabs["tags"])
    first, again = predictor(data, batch_size=2), predictor(data, batch_size=2)  # the second reuses the memory
    assert [p.labels for p in first] == [p.labels for p in again] == [p.labels for p in predict(model, data, vocabs["tags"], batch_size=2)]
