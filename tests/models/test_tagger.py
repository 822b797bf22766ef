"""The model contract every tagger passes: gradients, fitting, save/load, batching, resume."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from seqlab.tagging.api import SequenceTagger
from seqlab.core import rundir
from seqlab.tagging.config import load_config
from seqlab.data.batching import encode, iterate
from seqlab.tagging.predict import Predictor, SpellingCache, predict
from seqlab.tagging.features import encode_options
from seqlab.apps.tasks import train
from seqlab.core.trainer import Trainer
from tests.helpers import tagger_trainer

DECODERS = ["crf", "softmax"]
# Fixed token features from features/ files: a Brown paths file as learned prefix embeddings and as
# one-hot input, and word vectors scaled to std 0.1 (tests/fixtures/ner).
FEATURES = {
    "brown_embedded": "[{type: brown, path: brown_paths.txt, prefixes: [2, 4], dim: 3}]",
    "brown_onehot_and_vectors": "[{type: brown, path: brown_paths.txt, prefixes: [4]},"
                                " {type: embeddings, path: vectors.txt, lowercase: true}]",
}


@pytest.fixture
def config(ner_data):
    return lambda *overrides: load_config(ner_data / "tiny.yaml", list(overrides))


@pytest.mark.parametrize("decoder", DECODERS)
def test_every_parameter_gets_a_gradient(config, tmp_path, decoder):
    trainer = tagger_trainer(config(f"model.decoder={decoder}", "model.dropout=0.5"), tmp_path)
    batch = next(iterate(trainer.task.encoded["train"], 5, shuffle=False))
    trainer.model.train()
    trainer.model.loss(batch).backward()
    for name, param in trainer.model.named_parameters():
        assert param.grad is not None and torch.isfinite(param.grad).all(), name
        assert param.grad.abs().sum() > 0, f"{name} got a zero gradient"


@pytest.mark.parametrize("decoder", DECODERS)
def test_fits_a_tiny_fixture_to_near_zero_loss(config, tmp_path, decoder):
    trainer = tagger_trainer(config(f"model.decoder={decoder}", "train.epochs=40"), tmp_path, progress=False)
    losses = [trainer.train_epoch(e)["loss"] for e in range(40)]
    assert losses[-1] < 0.05 * losses[0] and losses[-1] < 0.1
    results = predict(trainer.model, trainer.task.encoded["train"], trainer.task.vocabs["tags"])
    assert [r.labels for r in results] == trainer.task.splits["train"].tags


@pytest.mark.parametrize("optimizer, lr", [("sgd", "0.05"), ("adam", "0.01"), ("nadam", "0.01"), ("adadelta", "1.0")])
def test_each_optimizer_is_built_from_the_config_and_trains(config, tmp_path, optimizer, lr):
    from seqlab.core.optim import OPTIMIZERS

    trainer = tagger_trainer(config(f"train.optimizer={optimizer}", f"train.lr={lr}", "train.lr_decay=0.9"), tmp_path,
                      progress=False)
    expected = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "nadam": torch.optim.NAdam,
                "adadelta": torch.optim.Adadelta}[optimizer]
    assert type(trainer.optimizer) is expected
    assert set(OPTIMIZERS) == {"sgd", "adam", "nadam", "adadelta"}  # one table for every task
    losses = [trainer.train_epoch(e)["loss"] for e in range(15)]
    assert losses[-1] < 0.3 * losses[0]
    trainer.scheduler.step()
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(float(lr) * 0.9)


def test_embedding_lr_gives_the_word_vectors_their_own_rate(config, tmp_path):
    from seqlab.tagging.config import ConfigError

    def first_step(*overrides):
        trainer = tagger_trainer(config("train.momentum=0.0", "train.clip=0", "model.dropout=0.0", *overrides),
                          tmp_path / str(len(list(tmp_path.iterdir()))), progress=False)
        words = trainer.model.embedder.words.weight
        before = words.detach().clone()
        batch = next(iterate(trainer.task.encoded["train"], 5, shuffle=False))
        trainer.model.train()
        trainer.optimizer.zero_grad()
        trainer.model.loss(batch).backward()
        trainer.optimizer.step()
        return trainer, words.detach() - before

    plain, moved = first_step()
    assert len(plain.optimizer.param_groups) == 1
    fast, moved3 = first_step("train.embedding_lr=3.0")
    assert [g["lr"] for g in fast.optimizer.param_groups] == pytest.approx([0.02, 0.02 * 3])
    assert moved.abs().sum() > 0 and torch.allclose(moved3, 3 * moved, atol=1e-6)
    decayed, _ = first_step("train.embedding_lr=3.0", "train.lr_decay=0.9")
    decayed.scheduler.step()
    assert [g["lr"] for g in decayed.optimizer.param_groups] == pytest.approx([0.02 * 0.9, 0.02 * 3 * 0.9])
    for bad in ("0", "-1", ".inf", ".nan"):
        with pytest.raises(ConfigError, match=r"train.embedding_lr: expected a positive finite multiple of train.lr"):
            config(f"train.embedding_lr={bad}")
    with pytest.raises(ConfigError, match=r"train.embedding_lr is 3.0, but the model has no trainable word embeddings"):
        config("train.embedding_lr=3.0", "model.embeddings.trainable=false")


def test_locked_dropout_is_built_from_the_config_and_trains(config, tmp_path):
    from seqlab.tagging.config import ConfigError
    from seqlab.modules.dropout import LockedDropout

    trainer = tagger_trainer(config("model.dropout_mode=locked", "model.dropout=0.3", "train.epochs=20"), tmp_path,
                      progress=False)
    assert isinstance(trainer.model.dropout, LockedDropout) and trainer.model.dropout.p == 0.3
    losses = [trainer.train_epoch(e)["loss"] for e in range(20)]
    assert losses[-1] < 0.2 * losses[0]
    with pytest.raises(ConfigError, match=r"model.dropout_mode: expected one of \['standard', 'locked'\], "
                                          r"got 'lockd'; did you mean 'locked'\?"):
        config("model.dropout_mode=lockd")


def test_embedding_scale_sets_the_initial_word_vectors_std(config, tmp_path, ner_data):
    plain = tagger_trainer(config(), tmp_path / "plain", progress=False).model.embedder.words.weight.detach()
    scaled = tagger_trainer(config("model.embeddings.scale=0.1"), tmp_path / "scaled", progress=False)
    weight = scaled.model.embedder.words.weight.detach()
    stoi = scaled.task.vocabs["words"].stoi
    in_file = [line.split()[0] for line in (ner_data / "vectors.txt").read_text().splitlines()]
    rows = [stoi[w] for w in in_file if w in stoi]  # the rows initialised from vectors.txt
    assert rows and weight[rows].double().std(unbiased=False).item() == pytest.approx(0.1, rel=1e-4)
    factor = 0.1 / plain[rows].double().std(unbiased=False).item()  # one factor for the whole matrix
    assert torch.allclose(weight[rows], plain[rows] * factor, rtol=1e-4, atol=1e-7)


def test_forget_bias_reaches_every_lstm_of_the_tagger(config, tmp_path):
    trainer = tagger_trainer(config("model.forget_bias=1.0"), tmp_path, progress=False)
    lstms = [m for m in trainer.model.modules() if isinstance(m, torch.nn.LSTM)]
    assert len(lstms) == 4  # word and character BiLSTMs, two directions each
    for lstm in lstms:
        h = lstm.hidden_size
        assert torch.equal(lstm.bias_ih_l0[h : 2 * h] + lstm.bias_hh_l0[h : 2 * h], torch.ones(h))
    default = tagger_trainer(config(), tmp_path / "default", progress=False).model
    assert all(not torch.equal(m.bias_ih_l0[m.hidden_size : 2 * m.hidden_size], torch.ones(m.hidden_size))
               for m in default.modules() if isinstance(m, torch.nn.LSTM))


def test_output_hidden_puts_a_tanh_layer_before_the_scores_and_fits_and_reloads(config, tmp_path):
    from seqlab.tagging.config import ConfigError

    run = tmp_path / "run"
    train(config("model.output_hidden=6", "train.epochs=25", "train.lr=0.1"), run, progress=False)
    cfg, vocabs, model, _ = _unpack(SequenceTagger.load(run, "cpu"))
    first, tanh, out = model.projection
    assert isinstance(tanh, torch.nn.Tanh)
    assert (first.in_features, first.out_features) == (model.encoder.output_dim, 6)
    assert (out.in_features, out.out_features) == (6, len(vocabs["tags"]))
    train_data = tagger_trainer(cfg, tmp_path / "again", progress=False)
    results = predict(model, train_data.task.encoded["train"], vocabs["tags"])
    assert [r.labels for r in results] == train_data.task.splits["train"].tags
    assert isinstance(tagger_trainer(config(), tmp_path / "plain").model.projection, torch.nn.Linear)
    with pytest.raises(ConfigError, match=r"model.output_hidden: expected a size >= 0, for the bilstm encoder only"):
        config("model.output_hidden=-1")


def test_bucket_factor_reaches_the_training_batches(config, tmp_path, monkeypatch):
    import seqlab.tagging.task as training
    from seqlab.tagging.config import ConfigError

    seen = []
    real = training.iterate

    def spy(*args, **kwargs):
        seen.append(kwargs["bucket_factor"])
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "iterate", spy)
    trainer = tagger_trainer(config("train.bucket_factor=1"), tmp_path, progress=False)
    assert trainer.train_epoch(1)["loss"] > 0 and seen == [1]
    assert tagger_trainer(config(), tmp_path / "default", progress=False).config.train.bucket_factor == 50
    with pytest.raises(ConfigError, match="train.bucket_factor"):
        config("train.bucket_factor=0")


@pytest.mark.parametrize("mode", ["standard", "locked"])
def test_output_dropout_sets_the_rate_on_the_encoders_output_only(config, tmp_path, mode):
    trainer = tagger_trainer(config(f"model.dropout_mode={mode}", "model.dropout=0.5", "model.output_dropout=0"), tmp_path,
                      progress=False)
    model = trainer.model
    assert model.dropout.p == 0.5 and model.output_dropout.p == 0.0
    assert type(model.output_dropout) is type(model.dropout)
    batch = next(iterate(trainer.task.encoded["train"], 5, shuffle=False))
    encoded = {}
    model.encoder.register_forward_hook(lambda module, args, out: encoded.setdefault("out", out))
    model.projection.register_forward_hook(lambda module, args, out: encoded.setdefault("in", args[0]))
    model.train()
    model.emissions(batch)
    assert torch.equal(encoded["in"], encoded["out"])  # nothing dropped after the encoder
    default = tagger_trainer(config(f"model.dropout_mode={mode}", "model.dropout=0.5"), tmp_path / "default").model
    assert default.output_dropout is default.dropout  # null: model.dropout on both sides


@pytest.mark.parametrize("decoder", DECODERS)
def test_batched_equals_one_by_one(config, tmp_path, decoder):
    trainer = tagger_trainer(config(f"model.decoder={decoder}"), tmp_path)
    data, labels = trainer.task.encoded["train"], trainer.task.vocabs["tags"]
    batched = predict(trainer.model, data, labels, batch_size=10, confidences=True)
    single = predict(trainer.model, data, labels, batch_size=1, confidences=True)
    assert [r.labels for r in batched] == [r.labels for r in single]
    for a, b in zip(batched, single):
        assert [s[:3] for s in a.spans] == [s[:3] for s in b.spans]
        assert [s[3] for s in a.spans] == pytest.approx([s[3] for s in b.spans], abs=1e-5)


def test_train_writes_a_run_directory_and_loads_back(config, tmp_path):
    metrics = train(config("train.epochs=2"), tmp_path / "run", progress=False)
    run = tmp_path / "run"
    for name in ("config.yaml", "vocabs.json", "model.pt", "checkpoint.pt", "metrics.json", "train.log",
                 "dev.predictions.txt", "test.predictions.txt"):
        assert (run / name).is_file(), name
    assert metrics["epochs"] == 2 and 0.0 <= metrics["test"]["f1"] <= 100.0
    cfg, vocabs, model, features = _unpack(SequenceTagger.load(run, "cpu"))
    trainer_model = tagger_trainer(cfg, tmp_path / "other").model
    trainer_model.load_state_dict(rundir.load_weights(run))
    data = encode([["Peter", "Blackburn", "said", "Zorglub"]], vocabs)
    a = predict(model, data, vocabs["tags"], confidences=True)
    b = predict(trainer_model, data, vocabs["tags"], confidences=True)
    assert a == b


@pytest.mark.parametrize("ema", ["0.0", "0.9"])
def test_resume_reaches_the_same_result(config, tmp_path, monkeypatch, ema):
    cfg = config("train.epochs=3", "model.dropout=0.5", "train.optimizer=sgd", "train.lr=0.05", "train.lr_decay=0.9",
                 f"train.ema={ema}")
    train(cfg, tmp_path / "full", progress=False)

    original = Trainer.train_epoch

    def killed(self, epoch):
        if epoch == 2:
            raise KeyboardInterrupt
        return original(self, epoch)

    monkeypatch.setattr(Trainer, "train_epoch", killed)
    with pytest.raises(KeyboardInterrupt):
        train(cfg, tmp_path / "killed", progress=False)
    monkeypatch.setattr(Trainer, "train_epoch", original)
    train(cfg, tmp_path / "killed", resume=True, progress=False)
    full = rundir.load_checkpoint(tmp_path / "full")["model"]
    resumed = rundir.load_checkpoint(tmp_path / "killed")["model"]
    for key in full:
        assert torch.equal(full[key], resumed[key]), key
    for name in ("model.pt",):
        a, b = rundir.load_weights(tmp_path / "full"), rundir.load_weights(tmp_path / "killed")
        assert all(torch.equal(a[key], b[key]) for key in a), name


def test_ema_scores_and_saves_the_moving_average(config, tmp_path):
    decay = 0.8
    trainer = tagger_trainer(config("train.epochs=1", "train.optimizer=sgd", "train.lr=0.05", f"train.ema={decay}"), tmp_path)
    start = {k: v.clone() for k, v in trainer.model.named_parameters()}
    expected = {k: v.clone() for k, v in start.items()}
    original_step = trainer.optimizer.step
    first = [True]

    def step(*args, **kwargs):  # follow the average by hand: copy on the first step, then lerp
        out = original_step(*args, **kwargs)
        for k, v in trainer.model.named_parameters():
            expected[k] = v.detach().clone() if first[0] else decay * expected[k] + (1 - decay) * v.detach()
        first[0] = False
        return out

    trainer.optimizer.step = step
    trainer.train_epoch(1)
    averaged = dict(trainer.scored_model.named_parameters())
    moved = [k for k in start if not torch.equal(trainer.model.get_parameter(k), averaged[k])]
    assert moved, "the average should lag behind the raw weights"
    for k, v in expected.items():
        assert torch.allclose(averaged[k], v, atol=1e-6), k


def test_refuses_to_overwrite_a_run(config, tmp_path):
    from seqlab.core.errors import SeqlabError

    train(config("train.epochs=1"), tmp_path / "run", progress=False)
    with pytest.raises(SeqlabError, match="already holds a run; use --resume"):
        train(config("train.epochs=1"), tmp_path / "run", progress=False)


def test_precomputed_spelling_vectors_equal_per_batch_ones(config, tmp_path):
    trainer = tagger_trainer(config(), tmp_path)
    model, data = trainer.model.eval(), trainer.task.encoded["train"]
    with torch.inference_mode():
        table = model.embedder.chars.encode_types(data.type_chars, data.type_char_lengths, chunk=7)
        for plain, cached in zip(iterate(data, 3, shuffle=False), iterate(data, 3, shuffle=False, char_table=table)):
            assert cached.char_vectors is not None and plain.char_vectors is None
            assert torch.allclose(model.emissions(plain), model.emissions(cached), atol=1e-5)


@pytest.mark.parametrize("capacity", [1 << 16, 40])
def test_spelling_cache_gives_each_call_the_vectors_computed_afresh(config, tmp_path, capacity):
    """A Predictor keeps spelling vectors by word from call to call; each call's table equals the one the
    character BiLSTM computes for that call alone, also when the cache fills up and starts afresh."""
    trainer = tagger_trainer(config(), tmp_path)
    model, split, vocabs = trainer.model.eval(), trainer.task.splits["train"], trainer.task.vocabs
    cache = SpellingCache(capacity)
    with torch.inference_mode():
        for part in (split.tokens[:3], split.tokens[2:6], split.tokens[:6], [["Unseen", "Zyzzyva", "EU"]]):
            data = encode(part, vocabs)
            fresh = model.spelling_table(data)
            assert torch.allclose(cache.table(model, data), fresh, atol=1e-6)
    assert len(cache.slots) <= capacity
    predictor, data = Predictor(model, vocabs["tags"]), trainer.task.encoded["train"]
    first, second = predictor(data), predictor(data)  # the second call reads every vector from the cache
    assert [p.labels for p in first] == [p.labels for p in second] == [p.labels for p in predict(model, data, vocabs["tags"])]


def test_singleton_unk_replaces_only_training_singletons(config, tmp_path):
    trainer = tagger_trainer(config("model.embeddings.singleton_unk=0.999999"), tmp_path)
    batch = next(iterate(trainer.task.encoded["train"], 100, shuffle=False))
    words = trainer.task.drop_singletons(batch.words)
    itos = trainer.task.vocabs["words"].itos
    counts = {}
    for sentence in trainer.task.splits["train"].tokens:
        for token in sentence:
            i = trainer.task.vocabs["words"].index(token)
            counts[i] = counts.get(i, 0) + 1
    unk = trainer.task.vocabs["words"].index("<unk>")
    for before, after in zip(batch.words[batch.mask].tolist(), words[batch.mask].tolist()):
        assert after == (unk if counts.get(before) == 1 and before != unk else before), itos[before]
    assert (words != batch.words).any()


@pytest.mark.parametrize("features", sorted(FEATURES))
def test_token_features_get_gradients_fit_and_reload(config, tmp_path, features):
    cfg = config(f"model.features={FEATURES[features]}", "train.epochs=25")
    trainer = tagger_trainer(cfg, tmp_path / "t", progress=False)
    batch = next(iterate(trainer.task.encoded["train"], 5, shuffle=False))
    trainer.model.loss(batch).backward()
    for name, param in trainer.model.named_parameters():
        assert param.grad is not None and param.grad.abs().sum() > 0, name
    losses = [trainer.train_epoch(e)["loss"] for e in range(25)]
    assert losses[-1] < 0.1 * losses[0]
    train(config(f"model.features={FEATURES[features]}", "train.epochs=1"), tmp_path / "run", progress=False)
    cfg2, vocabs, model, token_features = _unpack(SequenceTagger.load(tmp_path / "run", "cpu"))
    assert token_features is not None
    data = encode([["Werner", "Zwingmann", "said", "Unseen"]], vocabs, **encode_options(token_features))
    assert predict(model, data, vocabs["tags"])[0].labels


def test_brown_ids_and_scaled_vectors_line_up_with_words(ner_data):
    from seqlab.tagging.parts import load_token_features

    cfg = load_config(ner_data / "tiny.yaml", [f"model.features={FEATURES['brown_onehot_and_vectors']}"])
    tf = load_token_features(cfg.model.features)
    dense = tf.dense_table(["EU", "nope", "German"])  # brown4 one-hot (unknown slot first), then 4-d vectors
    assert dense.shape[1] == tf.dense_dim
    brown_dim = tf.dense[0][1]
    assert dense[1, 0] == 1.0 and dense[1, 1:brown_dim].sum() == 0  # unknown word -> the unknown slot
    assert dense[0, :brown_dim].sum() == 1.0 and dense[2, :brown_dim].sum() == 1.0
    assert dense[0, :brown_dim].argmax() != dense[2, :brown_dim].argmax()  # 0111 vs 0100
    assert np.allclose(dense[1, brown_dim:], 0.0)


def test_predicting_no_sentences_gives_no_predictions(config, tmp_path):
    trainer = tagger_trainer(config(), tmp_path)
    assert predict(trainer.model, encode([], trainer.task.vocabs), trainer.task.vocabs["tags"]) == []


def _unpack(tagger):  # the parts of a loaded tagger the tests below look at
    return tagger.config, tagger.vocabs, tagger.model, tagger.features
