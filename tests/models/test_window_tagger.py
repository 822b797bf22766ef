"""The model contract for the windowed taggers (Turian et al. 2009) and the quadratic output layer.

Tiny real-format CoNLL-2000 excerpt (tests/fixtures/chunk): every parameter gets a gradient,
the model fits its training data, and save then load gives identical predictions.
"""
from __future__ import annotations

import json

import pytest
import torch

from seqlab.tagging.api import SequenceTagger
from seqlab.core import rundir
from seqlab.tagging.config import load_config
from seqlab.data.batching import encode, iterate
from seqlab.data.schemes import allowed_transitions
from seqlab.core.errors import SeqlabError
from seqlab.tagging.predict import predict
from seqlab.tagging.features import encode_options
from seqlab.apps.tasks import train
from tests.helpers import tagger_trainer
from tests.conftest import FIXTURES

ARCHITECTURES = {
    "I-O": ["model.window.architecture=I-O", "model.window.filters=2"],
    "I-T-W-W-O": ["model.window.architecture=I-T(6)-W(8)-W(5)-O", "model.window.filters=1"],
    "I-W-O_no_sqrt": ["model.window.architecture=I-W(8)-O(q3)", "model.quadratic_sqrt=false"],
}


@pytest.fixture
def config(monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURES / "chunk"))
    return lambda *overrides: load_config(FIXTURES / "chunk" / "window.yaml", list(overrides))


@pytest.mark.parametrize("arch", sorted(ARCHITECTURES))
def test_every_parameter_gets_a_gradient(config, tmp_path, arch):
    trainer = tagger_trainer(config(*ARCHITECTURES[arch]), tmp_path)
    batch = next(iterate(trainer.task.encoded["train"], 7, shuffle=False))
    trainer.model.loss(batch).backward()
    for name, param in trainer.model.named_parameters():
        assert param.grad is not None and torch.isfinite(param.grad).all(), name
        assert param.grad.abs().sum() > 0, f"{name} got a zero gradient"


@pytest.mark.parametrize("arch", ["I-O", "I-T-W-W-O"])
def test_fits_the_tiny_fixture(config, tmp_path, arch):
    trainer = tagger_trainer(config(*ARCHITECTURES[arch], "train.epochs=60"), tmp_path, progress=False)
    losses = [trainer.train_epoch(e)["loss"] for e in range(60)]
    assert losses[-1] < 0.05 * losses[0]
    results = predict(trainer.model, trainer.task.encoded["train"], trainer.task.vocabs["tags"])
    assert [r.labels for r in results] == trainer.task.splits["train"].tags


def test_save_then_load_gives_identical_predictions(config, tmp_path):
    cfg = config("model.decoder=softmax_viterbi")
    train(cfg, tmp_path / "run", progress=False)
    trainer = tagger_trainer(cfg, tmp_path / "other")
    trainer.model.load_state_dict(rundir.load_weights(tmp_path / "run"))
    _, vocabs, model, features = _unpack(SequenceTagger.load(tmp_path / "run", "cpu"))
    test = trainer.task.splits["test"]
    loaded = encode(test.tokens, vocabs, **encode_options(features, test.columns))
    a = predict(model, loaded, vocabs["tags"], confidences=True)
    b = predict(trainer.model, trainer.task.encoded["test"], trainer.task.vocabs["tags"], confidences=True)
    assert a == b and len(a) == len(test.tokens)


def test_post_viterbi_decodes_only_allowed_sequences(config, tmp_path):
    trainer = tagger_trainer(config("model.decoder=softmax_viterbi"), tmp_path)  # untrained: argmax is ill-formed
    labels = trainer.task.vocabs["tags"].itos
    allowed, start, _ = allowed_transitions(labels, "iob2")
    for result in predict(trainer.model, trainer.task.encoded["train"], trainer.task.vocabs["tags"]):
        ids = [labels.index(t) for t in result.labels]
        assert start[ids[0]] and all(allowed[a][b] for a, b in zip(ids, ids[1:]))


def test_post_viterbi_at_eval_time_equals_the_post_viterbi_decoder(config, tmp_path):
    """``seqlab eval --post-viterbi`` on a softmax run decodes as if it had been built with softmax_viterbi."""
    from seqlab.data.labelling import SpanLabelling
    from seqlab.tagging.build import use_post_viterbi

    train(config("train.epochs=2"), tmp_path / "run", progress=False)
    test_file = FIXTURES / "chunk" / "test.txt"
    argmax = str(SequenceTagger.load(tmp_path / "run").evaluate(test_file, output=tmp_path / "argmax.txt"))
    tagger = SequenceTagger.load(tmp_path / "run").with_post_viterbi()
    viterbi = str(tagger.evaluate(test_file, output=tmp_path / "viterbi.txt"))
    _, vocabs, model, features = _unpack(SequenceTagger.load(tmp_path / "run", "cpu"))
    use_post_viterbi(model, vocabs["tags"].itos, SpanLabelling("iob2"))
    test = tagger_trainer(config(), tmp_path / "other").task.splits["test"]
    expected = predict(model, encode(test.tokens, vocabs, **encode_options(features, test.columns)), vocabs["tags"])
    got = [line.split()[-1] for line in (tmp_path / "viterbi.txt").read_text().splitlines() if line]
    assert got == [label for r in expected for label in r.labels]
    assert "accuracy" in argmax and "accuracy" in viterbi
    with pytest.raises(SeqlabError, match="post-Viterbi decoding applies to softmax taggers"):
        crf = SequenceTagger.load(tmp_path / "run", "cpu").model
        crf.decoder = torch.nn.Identity()
        use_post_viterbi(crf, vocabs["tags"].itos, SpanLabelling("iob2"))


def test_quadratic_output_layer_on_the_bilstm_crf(monkeypatch, tmp_path):
    """The paper's future work: q(x) as the BiLSTM-CRF's output transform (model.output_filters)."""
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURES / "ner"))
    cfg = load_config(FIXTURES / "ner" / "tiny.yaml", ["model.output_filters=2", "train.epochs=30"])
    trainer = tagger_trainer(cfg, tmp_path / "t", progress=False)
    assert type(trainer.model.projection).__name__ == "QuadraticLayer"
    batch = next(iterate(trainer.task.encoded["train"], 5, shuffle=False))
    trainer.model.loss(batch).backward()
    for name, param in trainer.model.named_parameters():
        assert param.grad is not None and param.grad.abs().sum() > 0, name
    losses = [trainer.train_epoch(e)["loss"] for e in range(30)]
    assert losses[-1] < 0.1 * losses[0]
    train(load_config(FIXTURES / "ner" / "tiny.yaml", ["model.output_filters=2", "train.epochs=1"]),
          tmp_path / "run", progress=False)
    _, vocabs, model, _ = _unpack(SequenceTagger.load(tmp_path / "run", "cpu"))
    other = tagger_trainer(cfg, tmp_path / "o").model
    other.load_state_dict(rundir.load_weights(tmp_path / "run"))
    data = encode([["Peter", "Blackburn", "said", "Zorglub"]], vocabs)
    assert predict(model, data, vocabs["tags"], confidences=True) == predict(other, data, vocabs["tags"],
                                                                             confidences=True)


def test_validation_sentences_are_held_out_of_training_and_of_label_frequencies(config, tmp_path):
    trainer = tagger_trainer(config(), tmp_path)
    train_split, dev = trainer.task.splits["train"], trainer.task.splits["dev"]
    assert (len(train_split.tokens), len(dev.tokens)) == (7, 3)
    assert not {tuple(s) for s in train_split.tokens} & {tuple(s) for s in dev.tokens}
    state = next(v for v in trainer.task.features.state.values() if v["type"] == "label_freq")
    counted = sum(n for by_label in state["counts"].values() for n in by_label.values())
    assert counted == train_split.num_tokens
    again = tagger_trainer(config("train.seed=5"), tmp_path / "again").task.splits["dev"]
    assert again.tokens == dev.tokens  # the split depends on data.dev_seed only


def test_feature_state_is_saved_and_raw_text_is_refused_for_a_pos_model(config, tmp_path):
    train(config("train.epochs=1"), tmp_path / "run", progress=False)
    state = json.loads((tmp_path / "run" / "features.json").read_text())
    assert sorted(v["type"] for v in state.values()) == ["label_freq", "orthographic", "pos"]
    _, vocabs, _, features = _unpack(SequenceTagger.load(tmp_path / "run", "cpu"))
    assert features.columns == ("pos",)
    with pytest.raises(SeqlabError, match=r"reads the data column\(s\) \['pos'\]"):
        encode_options(features)


def test_feature_lesions_are_config_changes(config, tmp_path):
    full = tagger_trainer(config(), tmp_path / "a").model.embedder.output_dim
    only_embeddings = config("model.features=[{type: embeddings, path: vectors.txt, lowercase: true}]")
    assert tagger_trainer(only_embeddings, tmp_path / "b").model.embedder.output_dim == 4
    no_pos = config("model.features=[{type: embeddings, path: vectors.txt, lowercase: true}, {type: label_freq},"
                    " {type: orthographic}]")
    trainer = tagger_trainer(no_pos, tmp_path / "c")
    assert trainer.model.embedder.output_dim < full and trainer.task.features.columns == ()


def _unpack(tagger):  # the parts of a loaded tagger the tests below look at
    return tagger.config, tagger.vocabs, tagger.model, tagger.features
