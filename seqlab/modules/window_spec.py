"""Architecture strings of the windowed taggers, e.g. ``I-T(150)-W(310)-W(310)-O``.

The notation of Turian, Bergstra & Bengio (2009, section 2): ``I`` the window of input token
vectors, ``T(n)`` a token layer of ``n`` units shared across the window's positions, ``W(n)`` a
window layer of ``n`` units over the concatenated window, ``O`` the output layer. A layer may
set its own number of quadratic filters, ``W(310,q2)`` or ``O(q16)``; otherwise it takes the
config's ``model.window.filters``. Pure Python (no torch), so configs are checked on loading.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_LAYER = re.compile(r"^(?P<kind>[TW])\((?P<units>\d+)(?:,\s*q(?P<filters>\d+))?\)$|^O(?:\(q(?P<ofilters>\d+)\))?$")
EXAMPLE = "I-T(150)-W(310)-W(310)-O"


@dataclass(frozen=True)
class LayerSpec:
    """One layer: ``T`` (token), ``W`` (window) or ``O`` (output); units (None for O); filters (None: default)."""

    kind: str
    units: int | None
    filters: int | None


def parse_architecture(text: str) -> tuple[LayerSpec, ...]:
    """Parse an architecture string; raise ValueError saying what was expected where."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"expected an architecture such as {EXAMPLE!r}, got {text!r}")
    parts = [p.strip() for p in re.split(r"-(?![^(]*\))", text.strip())]
    if parts[0] != "I":
        raise ValueError(f"{text!r}: an architecture starts with the input 'I', e.g. {EXAMPLE!r}")
    layers: list[LayerSpec] = []
    for position, part in enumerate(parts[1:], start=2):
        match = _LAYER.match(part)
        if match is None:
            raise ValueError(f"{text!r}: part {position} {part!r} is not T(n), W(n), T(n,qJ), W(n,qJ), O or O(qJ)")
        if match["kind"]:
            units = int(match["units"])
            if units < 1:
                raise ValueError(f"{text!r}: layer {part!r} needs at least one unit")
            layers.append(LayerSpec(match["kind"], units, None if match["filters"] is None else int(match["filters"])))
        else:
            layers.append(LayerSpec("O", None, None if match["ofilters"] is None else int(match["ofilters"])))
    if not layers or layers[-1].kind != "O" or any(layer.kind == "O" for layer in layers[:-1]):
        raise ValueError(f"{text!r}: an architecture ends with the output layer 'O', and has only one")
    kinds = "".join(layer.kind for layer in layers)
    if "WT" in kinds:
        raise ValueError(f"{text!r}: token layers T come before window layers W (T is applied per position)")
    return tuple(layers)
