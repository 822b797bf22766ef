"""seqlab.core.strict on a schema of its own: the machinery knows no seqlab config."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import yaml

from seqlab.core.errors import ConfigError
from seqlab.core.strict import choice, load_strict, positive, suggest, to_tree


@dataclass(frozen=True)
class Layer:
    size: int
    kind: str = "dense"


@dataclass(frozen=True)
class Net:
    rate: float = 0.1
    name: str | None = None
    layers: tuple[Layer, ...] = ()


@dataclass(frozen=True)
class Root:
    net: Net = field(default_factory=Net)
    seed: int = 1


def write(tmp_path, text: str):
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_nested_sections_lists_and_defaults(tmp_path):
    config = load_strict(write(tmp_path, "net:\n  rate: 1e-3\n  layers: [{size: 4}, {size: 2, kind: out}]\n"), root=Root)
    assert config == Root(net=Net(rate=0.001, layers=(Layer(4), Layer(2, "out"))), seed=1)
    assert isinstance(config.net.rate, float)  # YAML 1.1 reads 1e-3 as a string; the float hint converts it


def test_overrides_reach_list_items_and_are_checked(tmp_path):
    path = write(tmp_path, "net:\n  layers: [{size: 4}]\n")
    assert load_strict(path, ["net.layers.0.size=8", "seed=3"], root=Root).net.layers[0].size == 8
    with pytest.raises(ConfigError, match=r"net.layers.1: the config's net.layers has 1 item"):
        load_strict(path, ["net.layers.1.size=8"], root=Root)
    with pytest.raises(ConfigError, match=r"net\.rat: unknown key; did you mean 'rate'\?"):
        load_strict(path, ["net.rat=0.5"], root=Root)
    with pytest.raises(ConfigError, match=r"seed: 'seed' is not a section"):
        load_strict(path, ["seed.x=1"], root=Root)


@pytest.mark.parametrize("text, message", [
    ("net:\n  sise: 3\n", r"net\.sise: unknown key"),
    ("seed: three\n", r"seed: expected int, got str 'three'"),
    ("net:\n  layers: [{kind: out}]\n", r"net\.layers\[0\]\.size: required key is missing"),
    ("net: [1, 2]\n", r"net: expected a mapping"),
    ("net: {rate: [0.1\n", r"c\.yaml:\d+:\d+: not valid YAML"),
])
def test_bad_trees_name_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_strict(write(tmp_path, text), root=Root)


def test_optional_takes_null_and_to_tree_round_trips(tmp_path):
    config = load_strict(write(tmp_path, "net: {name: null, layers: [{size: 1}]}\n"), root=Root)
    assert config.net.name is None
    assert load_strict(write(tmp_path, yaml.safe_dump(to_tree(config))), root=Root) == config


def test_checks_and_suggestions():
    choice("k", "adam", ("sgd", "adam"))
    with pytest.raises(ConfigError, match=r"k: expected one of \['sgd', 'adam'\], got 'adan'; did you mean 'adam'\?"):
        choice("k", "adan", ("sgd", "adam"))
    positive("k", 0.5)
    with pytest.raises(ConfigError, match="k: expected a positive number, got 0"):
        positive("k", 0)
    for value in (float("nan"), float("inf")):  # .nan or .inf in YAML: torch's optimizers would raise later
        with pytest.raises(ConfigError, match=f"k: expected a positive number, got {value}"):
            positive("k", value)
    assert suggest("hiden", {"hidden": 1, "layers": 2}) == "; did you mean 'hidden'?"
    assert suggest("zzz", {"b": 1, "a": 2}) == "; valid keys are ['a', 'b']"


def test_a_file_that_is_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"seed: 1\nnet: {name: \xff}\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: not valid UTF-8 \(byte 0xff at offset 20\)"):
        load_strict(path, root=Root)
    with pytest.raises(ConfigError, match=r"config file '.*missing\.yaml' does not exist"):
        load_strict(tmp_path / "missing.yaml", root=Root)


@pytest.mark.parametrize("text, line, first, key", [
    ("seed: 1\nnet:\n  rate: 0.1\n  rate: 0.2\n", 4, 3, "rate"),
    ("seed: 1\nnet: {rate: 0.1}\nseed: 2\n", 3, 1, "seed"),
    ("net:\n  layers:\n    - {size: 2, size: 3}\n", 3, 3, "size"),
])
def test_a_key_given_twice_is_an_error_naming_both_lines(tmp_path, text, line, first, key):
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"c\.yaml:{line}:\d+: not valid YAML: duplicate key '{key}' "
                                          rf"\(first given on line {first}\)"):
        load_strict(path, root=Root)


def test_a_merge_key_may_be_overridden(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("base: &b {size: 2, kind: conv}\nnet:\n  layers:\n    - {<<: *b, size: 3}\n", encoding="utf-8")
    from seqlab.core.strict import read_mapping

    assert read_mapping(path)["net"]["layers"][0] == {"size": 3, "kind": "conv"}
