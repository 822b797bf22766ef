"""seqlab.core.strict on a schema of its own: the machinery knows no seqlab config."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import yaml

from seqlab.core.errors import ConfigError
from seqlab.core.strict import (MAX_COUNT, MAX_SEED, MAX_SIZE, YamlBoundsError, choice, count, in_range, load_strict,
                                load_yaml, positive, seed, size, suggest, to_tree)


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


# ---------------------------------------------------------------- bounds: alias bombs, nesting, tags, integers

def _laughs(levels: int = 9) -> str:
    """A "billion laughs" document: each anchor lists the one before nine times (9**levels values in all)."""
    lines = ["l0: &l0 [ha, ha, ha, ha, ha, ha, ha, ha, ha]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text, problem", [
    (_laughs(), r"c\.yaml:\d+:\d+: refused: aliases expand it to more than 100000 values"),
    ("net: " + "[" * 10_000 + "]" * 10_000 + "\n", r"c\.yaml:1:\d+: refused: nested deeper than 64 levels"),
    ("".join(" " * i + "k:\n" for i in range(200)) + " " * 200 + "k: 1\n", r"refused: nested deeper than 64 levels"),
    ("a: &a [1, *a]\n", r"c\.yaml:1:4: refused: an alias refers to the value that holds it"),
    ("net: !!python/object/apply:os.system [echo hi]\n", r"c\.yaml:1:6: not valid YAML: could not determine a "
                                                          r"constructor for the tag 'tag:yaml\.org,2002:python/"),
    ("seed: " + "9" * 5000 + "\n", r"c\.yaml:1:7: not valid YAML: an integer of 5000 digits is no config value"),
])
def test_a_config_beyond_the_bounds_is_one_error_naming_the_file(tmp_path, text, problem):
    with pytest.raises(ConfigError, match=problem):
        load_strict(write(tmp_path, text), root=Root)


def test_aliases_within_the_bounds_are_read(tmp_path):
    assert len(load_yaml(_laughs(5))["l4"]) == 9  # 9**5 = 59,049 values written out
    with pytest.raises(YamlBoundsError):
        load_yaml(_laughs(6))  # 531,441


@pytest.mark.parametrize("value, problem", [
    ("[" * 1000 + "]" * 1000, r"--set net\.name: nested deeper than 64 levels"),
    ("{a: &a [x, x, x, x, x, x, x, x, x, x], b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a], "
     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b], d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c], "
     "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]}", r"--set net\.name: aliases expand it to more than 100000 values"),
    ("!!python/object/apply:os.system [echo hi]", r"--set net\.name: could not determine a constructor for the tag"),
])
def test_a_set_value_beyond_the_bounds_is_an_error_not_a_string(tmp_path, value, problem):
    with pytest.raises(ConfigError, match=problem):
        load_strict(write(tmp_path, "seed: 1\n"), [f"net.name={value}"], root=Root)


def test_a_set_value_that_is_not_yaml_is_still_the_text_as_written(tmp_path):
    assert load_strict(write(tmp_path, "seed: 1\n"), ["net.name=a: b: c"], root=Root).net.name == "a: b: c"


@pytest.mark.parametrize("value", [10**30, -(10**30), 2**32])
def test_an_integer_no_config_holds_names_its_key(tmp_path, value):
    with pytest.raises(ConfigError, match=rf"^seed: expected an integer from -4294967295 to 4294967295, got {value}$"):
        load_strict(write(tmp_path, f"seed: {value}\n"), root=Root)


@pytest.mark.parametrize("check, value, message", [
    (lambda v: size("model.hidden", v), 2**31, "model.hidden: expected a size from 1 to 65536, got 2147483648"),
    (lambda v: size("model.hidden", v), 0, "model.hidden: expected a size from 1 to 65536, got 0"),
    (lambda v: size("model.output_hidden", v, low=0), -1, "model.output_hidden: expected a size from 0 to 65536, got -1"),
    (lambda v: count("train.epochs", v), 2**31, "train.epochs: expected a number from 1 to 2147483647, got 2147483648"),
    (lambda v: seed("train.seed", v), -1, "train.seed: expected a seed from 0 to 4294967295, got -1"),
    (lambda v: seed("train.seed", v), 2**32, "train.seed: expected a seed from 0 to 4294967295, got 4294967296"),
    (lambda v: in_range("k", v, 2, 3, "a width"), 4, "k: expected a width from 2 to 3, got 4"),
])
def test_range_checks_name_the_key_the_range_and_the_value(check, value, message):
    with pytest.raises(ConfigError) as err:
        check(value)
    assert str(err.value) == message


@pytest.mark.parametrize("check, value", [(lambda v: size("k", v), 1), (lambda v: size("k", v), MAX_SIZE),
                                          (lambda v: size("k", v, low=0), 0), (lambda v: seed("k", v), 0),
                                          (lambda v: seed("k", v), MAX_SEED), (lambda v: count("k", v), MAX_COUNT)])
def test_range_checks_take_their_bounds(check, value):
    check(value)


def test_base_merges_mappings_and_replaces_lists_and_scalars(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "root.yaml").write_text("net:\n  rate: 0.5\n  name: a\n  layers: [{size: 4}, {size: 2}]\n"
                                                "seed: 3\n", encoding="utf-8")
    (tmp_path / "mid.yaml").write_text("base: sub/root.yaml\nnet: {name: null}\n", encoding="utf-8")
    top = tmp_path / "top.yaml"
    top.write_text("base: mid.yaml\nnet:\n  layers: [{size: 9}]\n", encoding="utf-8")
    config = load_strict(top, ["seed=7"], root=Root)
    assert config == Root(net=Net(rate=0.5, name=None, layers=(Layer(9),)), seed=7)


def test_merge_trees_keeps_the_base_unchanged():
    from seqlab.core.strict import merge_trees

    base = {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    assert merge_trees(base, {"a": {"c": [3]}, "e": 2}) == {"a": {"b": 1, "c": [3]}, "d": 1, "e": 2}
    assert base == {"a": {"b": 1, "c": [1, 2]}, "d": 1}


@pytest.mark.parametrize("files, start, message", [
    ({"a.yaml": "base: b.yaml\n", "b.yaml": "base: a.yaml\n"}, "a.yaml",
     "b.yaml: base: the configs extend each other in a cycle: {d}/a.yaml -> {d}/b.yaml -> {d}/a.yaml"),
    ({"a.yaml": "base: a.yaml\n"}, "a.yaml", "a.yaml: base: the configs extend each other in a cycle"),
    ({"a.yaml": "base: gone.yaml\n"}, "a.yaml", "a.yaml: base: 'gone.yaml' does not exist"),
    ({"a.yaml": "base: [b.yaml]\n"}, "a.yaml", "a.yaml: base: expected the path of the config this one extends"),
    ({"a.yaml": "base: b.yaml\nnet: {rte: 1}\n", "b.yaml": "seed: 2\n"}, "a.yaml",
     "{d}/a.yaml: net.rte: unknown key; did you mean 'rate'?"),
    ({"a.yaml": "base: b.yaml\n", "b.yaml": "net: {layers: [{size: 1, knd: x}]}\n"}, "a.yaml",
     "{d}/b.yaml: net.layers[].knd: unknown key; did you mean 'kind'?"),
])
def test_base_errors_name_the_files(tmp_path, files, start, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_strict(tmp_path / start, root=Root)
    assert message.format(d=tmp_path) in str(err.value)
    assert "\n" not in str(err.value)
