"""YAML read strictly into frozen dataclasses: the machinery under every seqlab config.

An unknown key or a value of the wrong type is a :class:`ConfigError` that names
the key (``model.hiden``) and suggests the nearest valid one. ``--set a.b=c``
overrides are applied to the YAML tree before it is checked, so they are held
to the same rules. The schemas live beside their tasks (:mod:`seqlab.tagging.config`,
:mod:`seqlab.relation.config`); this module knows none of them.
"""
from __future__ import annotations

import dataclasses
import difflib
import math
import re
import types
import typing
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml

from seqlab.core.errors import ConfigError

_SCIENTIFIC = re.compile(r"^[+-]?\d+(\.\d*)?[eE][+-]?\d+$")


def choice(key: str, value: str, choices: Sequence[str]) -> None:
    """Refuse ``value`` for ``key`` unless it is one of ``choices``, suggesting the nearest."""
    if value not in choices:
        near = difflib.get_close_matches(str(value), choices, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ConfigError(f"{key}: expected one of {list(choices)}, got {value!r}{hint}")


def positive(key: str, value: float) -> None:
    """Refuse a ``value`` for ``key`` that is zero, negative, NaN or infinite."""
    if not 0 < value < math.inf:
        raise ConfigError(f"{key}: expected a positive number, got {value}")


def dropout_rate(key: str, value: float) -> None:
    """Refuse a dropout rate for ``key`` outside [0, 1) (NaN included)."""
    if not 0.0 <= value < 1.0:
        raise ConfigError(f"{key}: expected a dropout rate in [0, 1), got {value}")


#: The largest layer, embedding or window size a config may ask for (a 65,536-wide layer is already far past
#: what these models use); beyond it, torch would fail to allocate with a traceback.
MAX_SIZE = 1 << 16
#: Seeds go to torch, numpy and random; numpy takes 0 to 2**32 - 1.
MAX_SEED = 2**32 - 1
#: The largest count (epochs, batch size, sentences, steps) a config may give: a C int, which torch takes.
MAX_COUNT = 2**31 - 1
#: The most CPU threads a run may ask torch for.
MAX_THREADS = 1024


def in_range(key: str, value: int, low: int, high: int, what: str = "a number") -> None:
    """Refuse an integer ``value`` for ``key`` outside ``[low, high]``, saying what it is and the range."""
    if not low <= value <= high:
        raise ConfigError(f"{key}: expected {what} from {low} to {high}, got {value}")


def size(key: str, value: int, *, low: int = 1) -> None:
    """Refuse a layer, embedding or window size for ``key`` outside ``[low, MAX_SIZE]`` (``low=0``: 0 means none)."""
    in_range(key, value, low, MAX_SIZE, "a size")


def count(key: str, value: int, *, low: int = 1) -> None:
    """Refuse a count for ``key`` (epochs, a batch size, sentences, steps) outside ``[low, MAX_COUNT]``."""
    in_range(key, value, low, MAX_COUNT)


def seed(key: str, value: int) -> None:
    """Refuse a random seed for ``key`` outside ``[0, MAX_SEED]``."""
    in_range(key, value, 0, MAX_SEED, "a seed")


#: Bounds on a YAML config, checked before it is built: a config is a few hundred values, five levels deep.
#: Aliases are allowed (``<<: *base`` merges), but a value is counted each time an alias repeats it, so a
#: "billion laughs" document (aliases of aliases, each doubling the last) stops here, not gigabytes later.
MAX_YAML_VALUES = 100_000
MAX_YAML_DEPTH = 64
_MAX_DIGITS = 100  # an integer literal longer than this is no config value (Python refuses 4,300 digits anyway)


class YamlBoundsError(yaml.MarkedYAMLError):
    """A YAML document that is nested too deep, repeats too much through aliases, or refers to itself."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader (no ``!!python/...`` tags), refusing a mapping that gives one key twice (PyYAML lets the
    last one win silently) and a document beyond :data:`MAX_YAML_DEPTH` or :data:`MAX_YAML_VALUES`."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        depth = self._depth + 1
        if depth > MAX_YAML_DEPTH:
            raise YamlBoundsError(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels",
                                  self.peek_event().start_mark)
        self._depth = depth
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth = depth - 1

    def get_single_node(self) -> yaml.Node | None:
        node = super().get_single_node()
        if node is not None:
            _expanded_size(node, {}, set())
        return node

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        if len(node.value) > _MAX_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, f"an integer of {len(node.value)} digits is no config value", node.start_mark)
        return super().construct_yaml_int(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base` merges keys; a later key may override
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                if key in first:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (first given on line {first[key]})", key_node.start_mark)
                first[key] = key_node.start_mark.line + 1
            except TypeError:  # an unhashable key: the safe loader's own error says so
                continue
        return super().construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _UniqueKeyLoader.construct_yaml_int)


def _expanded_size(node: yaml.Node, sizes: dict[int, tuple[int, int]], open_: set[int]) -> tuple[int, int]:
    """``(values, depth)`` of ``node`` with every alias written out in full, each shared node counted once per
    use but computed once; beyond the bounds, or an alias inside its own anchor, is a :class:`YamlBoundsError`."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_:
        raise YamlBoundsError(None, None, "an alias refers to the value that holds it", node.start_mark)
    children: list[yaml.Node] = []
    if isinstance(node, yaml.SequenceNode):
        children = node.value
    elif isinstance(node, yaml.MappingNode):
        children = [n for pair in node.value for n in pair]
    open_.add(key)
    values, depth = 1, 1
    for child in children:
        child_values, child_depth = _expanded_size(child, sizes, open_)
        values, depth = values + child_values, max(depth, child_depth + 1)
        if values > MAX_YAML_VALUES or depth > MAX_YAML_DEPTH:
            bound = (f"more than {MAX_YAML_VALUES} values" if values > MAX_YAML_VALUES
                     else f"deeper than {MAX_YAML_DEPTH} levels")
            raise YamlBoundsError(None, None, f"aliases expand it to {bound}", node.start_mark)
    open_.discard(key)
    sizes[key] = (values, depth)
    return values, depth


def load_yaml(text: str) -> Any:
    """YAML text as Python data, by the safe loader, with a key given twice in one mapping an error, and bounds
    on nesting and on what aliases expand to (:data:`MAX_YAML_DEPTH`, :data:`MAX_YAML_VALUES`)."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 -- a SafeLoader subclass


def read_mapping(path: str | Path, what: str = "config file") -> dict[str, Any]:
    """A YAML file whose top level is a mapping; a missing file, bytes that are not UTF-8, bad YAML
    (with its line and column) or another top level is a :class:`ConfigError` naming the file."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{what} {str(path)!r} does not exist")
    try:
        tree = load_yaml(path.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not valid UTF-8 (byte {err.object[err.start]:#04x} at offset {err.start})") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        refused = "refused" if isinstance(err, YamlBoundsError) else "not valid YAML"
        raise ConfigError(f"{where}: {refused}: {problem}") from None
    if not isinstance(tree, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(tree).__name__}")
    return tree


#: The key by which a config names the config it extends (a path relative to the config file's folder).
BASE = "base"


def read_config_tree(path: str | Path, root_of: Callable[[dict[str, Any]], type]) -> dict[str, Any]:
    """A config file as one tree, its ``base:`` chain resolved: the base's tree with this file's merged on top
    (:func:`merge_trees`). In a chain, a key unknown to the schema (``root_of(tree)``) is refused naming the
    file that holds it; a chain that comes back to a file is refused naming the files."""
    layers = read_layers(Path(path))
    merged: dict[str, Any] = {}
    for _, tree in reversed(layers):
        merged = merge_trees(merged, tree)
    if len(layers) > 1:
        root = root_of(merged)
        for source, tree in layers:
            _check_known(root, tree, "", source)
    return merged


def read_layers(path: Path) -> list[tuple[Path, dict[str, Any]]]:
    """A config file and the bases it extends, each with its tree (``base:`` removed), the file itself first."""
    layers: list[tuple[Path, dict[str, Any]]] = []
    while True:
        tree = read_mapping(path)
        layers.append((path, tree))
        base = tree.pop(BASE, None)
        if base is None:
            return layers
        if not isinstance(base, str) or not base:
            raise ConfigError(f"{path}: base: expected the path of the config this one extends, got {base!r}")
        path = path.parent / base
        if not path.is_file():
            raise ConfigError(f"{layers[-1][0]}: base: {base!r} does not exist (looked for {path})")
        if path.resolve() in [p.resolve() for p, _ in layers]:
            loop = " -> ".join(str(p) for p, _ in [*layers, (path, None)])
            raise ConfigError(f"{layers[-1][0]}: base: the configs extend each other in a cycle: {loop}")


def _check_known(cls: type, tree: Any, prefix: str, source: Path) -> None:
    """Refuse a key of ``tree`` (one file of a chain) that dataclass ``cls`` does not have, naming ``source``."""
    if not isinstance(tree, Mapping):
        return  # a wrong shape is from_tree's to refuse, on the merged tree
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for key, value in tree.items():
        if key not in fields:
            raise ConfigError(f"{source}: {prefix}{key}: unknown key{suggest(str(key), fields)}")
        inner = _dataclass_in(hints[key])
        items = value if isinstance(value, list) else [value]
        for item in items if inner is not None else ():
            _check_known(inner, item, f"{prefix}{key}{'[]' if isinstance(value, list) else ''}.", source)


def merge_trees(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``: mappings merge key by key, recursively; lists, scalars and nulls replace."""
    merged = dict(base)
    for key, value in top.items():
        below = merged.get(key)
        merged[key] = merge_trees(below, value) if isinstance(below, dict) and isinstance(value, dict) else value
    return merged


def load_strict(path: str | Path, overrides: Sequence[str] = (), *, root: type) -> Any:
    """Read a YAML config (its ``base:`` chain resolved), apply ``a.b=c`` overrides, and check it strictly
    against ``root``."""
    tree = read_config_tree(path, lambda _: root)
    for item in overrides:
        apply_override(tree, item, root=root)
    return from_tree(root, tree, prefix="")


def apply_override(tree: dict[str, Any], item: str, *, root: type) -> None:
    """Apply one ``--set a.b.c=value`` (value parsed as YAML) to a config tree, checking the key path."""
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. model.hidden=256")
    try:
        value = load_yaml(raw) if raw.strip() else ""
    except (YamlBoundsError, yaml.constructor.ConstructorError) as err:  # an alias bomb, a !!python/... tag
        raise ConfigError(f"--set {key}: {err.problem}") from None
    except yaml.YAMLError:
        value = raw  # not YAML (``a: b: c``): the text as written
    parts = key.split(".")
    cls: Any = root
    node: Any = tree
    depth = 0
    while True:
        part, where = parts[depth], ".".join(parts[: depth + 1])
        names = {f.name: f for f in dataclasses.fields(cls)}
        if part not in names:
            raise ConfigError(f"--set {where}: unknown key{suggest(part, names)}")
        if depth == len(parts) - 1:
            node[part] = value
            return
        hint = typing.get_type_hints(cls)[part]
        inner = _dataclass_in(hint)
        if inner is None:
            raise ConfigError(f"--set {where}: {part!r} is not a section, it has no key {parts[depth + 1]!r}")
        if typing.get_origin(hint) in (tuple, list):  # a list of sections: the next part is an index
            node, depth = _list_item(node.get(part), parts, depth + 1), depth + 2
            if depth == len(parts):
                raise ConfigError(f"--set {key}: name a key of item {parts[depth - 1]}, e.g. {key}.path=...; "
                                  f"to replace the whole list, --set {where}='[...]'")
        else:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node, depth = child, depth + 1
        cls = inner


def _list_item(items: Any, parts: Sequence[str], at: int) -> dict[str, Any]:
    """Item ``parts[at]`` (an index) of the list ``items`` that ``parts[:at]`` names in a config tree."""
    where = ".".join(parts[:at])
    count = len(items) if isinstance(items, list) else 0
    index = parts[at] if at < len(parts) else ""
    if not index.lstrip("-").isdigit():
        raise ConfigError(f"--set {where}: a list; name an item by its index (0 to {count - 1}), "
                          f"e.g. {where}.0.{parts[at] if at < len(parts) else 'KEY'}=...")
    if not -count <= int(index) < count:
        raise ConfigError(f"--set {where}.{index}: the config's {where} has {count} item(s)")
    item = items[int(index)]
    if not isinstance(item, dict):
        raise ConfigError(f"--set {where}.{index}: that item is not a mapping")
    return item


def from_tree(cls: type, tree: Any, prefix: str) -> Any:
    """Build dataclass ``cls`` from a YAML mapping, refusing unknown keys and wrong types."""
    if not isinstance(tree, Mapping):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'}: expected a mapping, got {tree!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in tree:
        if key not in fields:
            raise ConfigError(f"{prefix}{key}: unknown key{suggest(str(key), fields)}")
    kwargs = {}
    for name, spec in fields.items():
        key = f"{prefix}{name}"
        if name in tree:
            kwargs[name] = _convert(hints[name], tree[name], key)
        elif spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:  # type: ignore[misc]
            raise ConfigError(f"{key}: required key is missing")
    return cls(**kwargs)


def _convert(hint: Any, value: Any, key: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        errors = []
        for option in options:
            try:
                return _convert(option, value, key)
            except ConfigError as err:
                errors.append(str(err))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{key}: {value!r} matches none of {options}")
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        return tuple(_convert(args[0], v, f"{key}[{i}]") for i, v in enumerate(value))
    if dataclasses.is_dataclass(hint):
        return from_tree(hint, value, prefix=f"{key}.")
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is float and isinstance(value, str) and _SCIENTIFIC.match(value):
        return float(value)  # YAML 1.1 reads 1e-3 (no dot) as a string
    if hint in (int, float, str, bool) and (type(value) is not hint):
        raise ConfigError(f"{key}: expected {hint.__name__}, got {type(value).__name__} {value!r}")
    if hint is int and not -MAX_SEED <= value <= MAX_SEED:  # no config integer is larger; each schema bounds its own
        raise ConfigError(f"{key}: expected an integer from {-MAX_SEED} to {MAX_SEED}, got {value}")
    return value


def _dataclass_in(hint: Any) -> type | None:
    if dataclasses.is_dataclass(hint):
        return hint  # type: ignore[return-value]
    for arg in typing.get_args(hint):
        if dataclasses.is_dataclass(arg):
            return arg  # type: ignore[return-value]
    return None


def suggest(key: str, valid: Mapping[str, Any]) -> str:
    """A hint for an unknown ``key``: the nearest of ``valid``, or the list of them."""
    near = difflib.get_close_matches(key, list(valid), n=1, cutoff=0.5)
    return f"; did you mean {near[0]!r}?" if near else f"; valid keys are {sorted(valid)}"


def to_tree(config: Any) -> Any:
    """A config as plain YAML-ready data (tuples become lists)."""
    if dataclasses.is_dataclass(config):
        return {f.name: to_tree(getattr(config, f.name)) for f in dataclasses.fields(config)}
    if isinstance(config, (list, tuple)):
        return [to_tree(v) for v in config]
    return config


def dump_config(config: Any) -> str:
    """A fully resolved config as YAML, in the dataclasses' field order (what a run saves as config.yaml)."""
    return yaml.safe_dump(to_tree(config), sort_keys=False)
