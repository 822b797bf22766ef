"""``type: ls`` in model.features: config, the missing-artefact message, leak refusal, training and reloading."""
from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from seqlab.tagging.api import SequenceTagger
from seqlab.tagging.config import ConfigError, FeatureConfig, load_config
from seqlab.core.errors import SeqlabError
from seqlab.tagging.ls_features import DEFAULT_TYPED, build_command, ls_path
from seqlab.tagging.parts import load_token_features
from seqlab.apps.tasks import train

pytest.importorskip("fasttext")
from features.ls import LSVectors  # noqa: E402
from features.ls_build import LSOptions, build_ls  # noqa: E402

NER = Path(__file__).parents[1] / "fixtures" / "ner"
LS = Path(__file__).parents[1] / "fixtures" / "ls"
TINY = LSOptions(dim=8, min_count=1, epochs=5, bucket=100_000)


@pytest.fixture(scope="module")
def typed_ls(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ls") / "typed"
    build_ls([LS / "typed.txt"], out, options=TINY, progress=False)
    return out


@pytest.fixture(scope="module")
def dev_ls(tmp_path_factory) -> Path:
    """LS vectors learned from the NER fixture's dev file: a leak for a run evaluated on it."""
    out = tmp_path_factory.mktemp("ls") / "dev"
    build_ls([NER / "dev.txt"], out, options=TINY, progress=False)
    return out


def config_with(tmp_path: Path, feature_path: Path | str, *overrides: str):
    tree = yaml.safe_load((NER / "tiny.yaml").read_text())
    tree["model"]["features"] = [{"type": "ls", "path": str(feature_path)}]
    path = tmp_path / "ls.yaml"
    path.write_text(yaml.safe_dump(tree))
    return load_config(path, ["train.threads=1", *overrides])


@pytest.fixture
def quiet_log():
    """Detach the train.log handlers a run adds to the seqlab logger."""
    logger = logging.getLogger("seqlab")
    before = list(logger.handlers)
    yield
    for handler in set(logger.handlers) - set(before):
        logger.removeHandler(handler)
        handler.close()


def test_config_accepts_ls_and_refuses_a_dim():
    assert FeatureConfig(type="ls", path="x").type == "ls"
    with pytest.raises(ConfigError, match="only brown features have a learned size; ls keep their own"):
        FeatureConfig(type="ls", path="x", dim=4)
    with pytest.raises(ConfigError, match="type 'ls' needs a path"):
        FeatureConfig(type="ls")


def test_shipped_ls_configs():
    for name, hidden, lr in (("conll03_ls", 128, 0.009), ("ontonotes_ls", 256, 0.013)):
        config = load_config(Path(__file__).parents[2] / "configs" / f"{name}.yaml")
        (feature,) = config.model.features
        assert feature.type == "ls" and feature.path.startswith("./runs/ls/")
        assert (config.model.hidden, config.train.lr, config.data.tag_scheme) == (hidden, lr, "bilou")
        assert (config.model.dropout, config.train.momentum, config.train.batch_size, config.train.clip,
                config.train.epochs, config.model.embeddings.dim) == (0.5, 0.9, 10, 5.0, 50, 50)


def test_relative_paths(monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path))
    assert ls_path("./runs/ls/x", "k") == Path("./runs/ls/x")
    assert ls_path("ls/x", "k") == tmp_path / "ls" / "x"


def test_a_missing_artefact_names_the_command_that_builds_it(monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path))
    config = FeatureConfig(type="ls", path="./runs/ls/none")
    with pytest.raises(SeqlabError) as info:
        load_token_features([config])
    message = str(info.value)
    assert message.startswith("model.features[0].path: LS vectors './runs/ls/none' do not exist yet")
    assert f"seqlab features ls build --typed {tmp_path}/typed_corpus/fewnerd_inter_bio_subset/dev.txt" in message
    assert message.endswith("--out ./runs/ls/none")


def test_training_refuses_ls_built_from_its_dev_annotations(monkeypatch, tmp_path, dev_ls, quiet_log):
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    with pytest.raises(SeqlabError, match=r"model\.features\[0\]\.path: .* was built from .*dev\.txt.* same content "
                                          r"as data\.dev .* would leak into the evaluation"):
        train(config_with(tmp_path, dev_ls), tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


def test_a_damaged_artefact_is_a_seqlab_error(tmp_path, typed_ls):
    broken = tmp_path / "broken"
    broken.mkdir()
    with pytest.raises(SeqlabError, match=r"model\.features\[0\]\.path: .*not a complete LS artefact"):
        load_token_features([FeatureConfig(type="ls", path=str(broken))])


def test_a_tagger_trains_with_ls_and_reloads_with_the_same_vectors(monkeypatch, tmp_path, typed_ls, quiet_log):
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    out = tmp_path / "run"
    train(config_with(tmp_path, typed_ls, "train.epochs=2"), out, progress=False)
    _, _, model, features = _unpack(SequenceTagger.load(out, "cpu"))
    vectors = LSVectors.load(typed_ls)
    assert model.embedder.feature_dim == vectors.dim == features.dense_dim
    words = ["Peter", "Blackburn", "Hilton", "Unseenword"]
    np.testing.assert_array_equal(features.dense_table(words), vectors(words))


def test_training_fails_fast_on_a_missing_artefact(monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "no_data_here"))  # nothing is read before the check
    config = load_config(Path(__file__).parents[2] / "configs" / "conll03_ls.yaml")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SeqlabError, match=r"LS vectors './runs/ls/fewnerd_ls100' do not exist yet.*\n  seqlab features "
                                          r"ls build --typed .*--out ./runs/ls/fewnerd_ls100$"):
        train(config, tmp_path / "run", progress=False)


def _unpack(tagger):  # the parts of a loaded tagger the tests below look at
    return tagger.config, tagger.vocabs, tagger.model, tagger.features


def test_a_trained_model_finds_its_ls_vectors_from_elsewhere_or_says_where_it_looked(monkeypatch, tmp_path, typed_ls,
                                                                                    quiet_log):
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    monkeypatch.chdir(tmp_path)
    shutil.copytree(typed_ls, tmp_path / "vectors")
    out = tmp_path / "run"
    train(config_with(tmp_path, "./vectors", "train.epochs=1"), out, progress=False)
    expected = SequenceTagger.load(out, "cpu").tag_tokens([["EU", "rejects", "German", "call"]])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # './vectors' is found beside the run directory, where training ran
    assert SequenceTagger.load(out, "cpu").tag_tokens([["EU", "rejects", "German", "call"]]) == expected
    shutil.move(tmp_path / "vectors", elsewhere / "moved")
    with pytest.raises(SeqlabError) as err:
        SequenceTagger.load(out, "cpu")
    message = str(err.value)
    assert message.startswith("model.features[0].path: this model reads its ls file './vectors'")
    assert "build them" not in message and f"put it at {out / 'vectors'}" in message


def test_the_build_command_names_the_default_typed_files():
    command = build_command("./runs/ls/x", Path("/data"))
    assert command == ("seqlab features ls build --typed " + " ".join(f"/data/{p}" for p in DEFAULT_TYPED)
                       + " --out ./runs/ls/x")
