"""The tagger's named parts: encoders, decoders and token features, one table each.

An encoder is one builder plus one :class:`EncoderKind` entry, which owns what the config needs of it (its
section, its output layer, its own checks), so a new encoder is one function and one ``ENCODERS.add`` line.

:mod:`seqlab.tagging.config` checks ``model.encoder``, ``model.decoder`` and ``model.features[].type``
against these tables, and :mod:`seqlab.tagging.build` builds from them, so a name is written once;
:func:`load_token_features` reads a config's token features through its table. Builders and loaders take the
model config duck-typed (neither this module nor they import the config, so the config can import it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from seqlab.core.errors import ConfigError
from seqlab.core.registry import Registry

if TYPE_CHECKING:  # the builders import torch and the modules when they run: reading a config loads neither
    from torch import nn

    from seqlab.data.labelling import Labelling

    from seqlab.tagging.features import TokenFeatures

EncoderBuilder = Callable[[int, Any], "nn.Module"]  # (input dim, model config) -> encoder
DecoderBuilder = Callable[[Sequence[str], "Labelling"], "nn.Module"]  # (labels, labelling) -> decoder


def _no_checks(m: Any) -> None:
    """An encoder whose settings the model config's own checks cover."""


@dataclass(frozen=True)
class EncoderKind:
    """A ``model.encoder``: its builder, and what its config needs.

    ``section``: the ``model`` key holding its own settings (``window``), set exactly when it is chosen;
    None: it has none. ``output``: how many quadratic filters the output layer O gets when the encoder sets O
    itself (a window architecture does, ``O(q4)``), so that ``model.output_filters`` and ``model.output_hidden``
    do not apply; None: they do. ``check``: checks of the model config of its own, beyond its section's.
    """

    build: EncoderBuilder
    section: str | None = None
    output: Callable[[Any], int] | None = None
    check: Callable[[Any], None] = _no_checks


ENCODERS: Registry[EncoderKind] = Registry("model.encoder")
DECODERS: Registry[DecoderBuilder] = Registry("model.decoder")


def _bilstm(input_dim: int, m: Any) -> "nn.Module":
    from seqlab.modules.encoders import BiLSTMEncoder

    return BiLSTMEncoder(input_dim, m.hidden, m.layers, m.layer_dropout)


def _window(input_dim: int, m: Any) -> "nn.Module":
    """Turian, Bergstra & Bengio 2009: I-T(150)-W(310)-O and friends."""
    from seqlab.modules.window import WindowEncoder

    w = m.window
    return WindowEncoder.from_architecture(input_dim, w.architecture, size=w.size, filters=w.filters,
                                           sqrt=m.quadratic_sqrt, dropout=w.dropout)


def _window_output(m: Any) -> int:
    from seqlab.modules.window import output_filters

    return output_filters(m.window.architecture, m.window.filters)


ENCODERS.add("bilstm", EncoderKind(_bilstm))
ENCODERS.add("window", EncoderKind(_window, section="window", output=_window_output))


def check_encoder(m: Any) -> None:
    """Check a model config's encoder through its :data:`ENCODERS` entry: a known name, every encoder's section
    set exactly when that encoder is chosen, no output-layer settings for an encoder that sets O itself, and the
    entry's own checks."""
    ENCODERS.check("model.encoder", m.encoder)
    kind = ENCODERS.get(m.encoder)
    for name in ENCODERS:
        section = ENCODERS.get(name).section
        if section is not None and (name == m.encoder) != (getattr(m, section) is not None):
            raise ConfigError(f"model.{section}: set it exactly when model.encoder is {name!r}, "
                              f"got encoder {m.encoder!r} and {section} {getattr(m, section)!r}")
    free = " and ".join(name for name in ENCODERS if ENCODERS.get(name).output is None)
    for key, what in (("output_filters", "a number"), ("output_hidden", "a size")):
        value = getattr(m, key)
        if value < 0 or (value and kind.output is not None):
            raise ConfigError(f"model.{key}: expected {what} >= 0, for the {free} encoder only (a {m.encoder} "
                              f"encoder sets its own output layer), got {value}")
    kind.check(m)


def output_filters(m: Any) -> int:
    """The quadratic filters of a model config's output layer O: its encoder's, or ``model.output_filters``."""
    kind = ENCODERS.get(m.encoder, "model.encoder")
    return m.output_filters if kind.output is None else kind.output(m)


@DECODERS.register("crf")
def _crf(labels: Sequence[str], labelling: "Labelling") -> "nn.Module":
    import torch

    from seqlab.modules.crf import CRF

    allowed, start, end = labelling.transitions(labels)
    return CRF(len(labels), torch.tensor(allowed), torch.tensor(start), torch.tensor(end))


@DECODERS.register("softmax")
def _softmax(labels: Sequence[str], labelling: "Labelling") -> "nn.Module":
    from seqlab.modules.decoders import SoftmaxDecoder

    return SoftmaxDecoder(len(labels))


@DECODERS.register("softmax_viterbi")
def post_viterbi(labels: Sequence[str], labelling: "Labelling") -> "nn.Module":
    """Softmax training, Viterbi decoding under the labelling's allowed transitions (Turian et al. 2009)."""
    import torch

    from seqlab.modules.decoders import PostViterbiDecoder

    allowed, start, end = labelling.transitions(labels)
    return PostViterbiDecoder(len(labels), torch.tensor(allowed), torch.tensor(start), torch.tensor(end))


@dataclass(frozen=True)
class FeatureContext:
    """What loading a token feature may need besides its config entry.

    ``train``: the training split, to fit features on (None when loading a trained model);
    ``state``: the fitted state a run saved (``features.json``); ``evaluation_files``: the dev/test
    files, which LS vectors must not have been built from.
    """

    train: Any = None
    state: Mapping[str, Any] | None = None
    evaluation_files: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class FeatureKind:
    """A ``model.features[].type``: whether it is fitted on the training split (no file), and its loader."""

    fitted: bool
    add: Callable[[Any, int, "TokenFeatures", FeatureContext], None]  # (config entry, index, features, context)


def _from_file(config: Any, index: int, features: "TokenFeatures", context: FeatureContext) -> None:
    from seqlab.tagging.features import load_file_feature

    load_file_feature(config, index, features)


def _fitted(config: Any, index: int, features: "TokenFeatures", context: FeatureContext) -> None:
    from seqlab.tagging.fitted_features import add_fitted

    add_fitted(config, index, features, train=context.train, state=context.state)


def _ls(config: Any, index: int, features: "TokenFeatures", context: FeatureContext) -> None:
    from seqlab.tagging.ls_features import add_ls

    add_ls(config, index, features, evaluation_files=context.evaluation_files, loading=context.state is not None)


TOKEN_FEATURES: Registry[FeatureKind] = Registry("model.features[].type")
TOKEN_FEATURES.add("brown", FeatureKind(False, _from_file))  # Liang's paths file, prefixes (Turian et al. 2010)
TOKEN_FEATURES.add("embeddings", FeatureKind(False, _from_file))  # C&W, HLBL, any word2vec/GloVe file, scaled
TOKEN_FEATURES.add("ls", FeatureKind(False, _ls))  # Ghaddar & Langlais 2018 LS vectors
TOKEN_FEATURES.add("orthographic", FeatureKind(True, _fitted))  # Turian, Bergstra & Bengio 2009 §4
TOKEN_FEATURES.add("pos", FeatureKind(True, _fitted))
TOKEN_FEATURES.add("label_freq", FeatureKind(True, _fitted))


def load_token_features(configs: Sequence[Any], *, train: Any = None, state: Mapping[str, Any] | None = None,
                        evaluation_files: Mapping[str, Any] | None = None) -> "TokenFeatures | None":
    """Read every configured representation (``model.features``) through :data:`TOKEN_FEATURES`; None when
    there are none.

    Features fitted on data (``orthographic``, ``pos``, ``label_freq``) are fitted on the
    ``train`` split (a :class:`seqlab.data.dataset.Split`), or rebuilt from the ``state`` a
    training run saved (``features.json``). LS vectors built from any of ``evaluation_files``
    (``{"data.dev": path, ...}``) are refused (seqlab.tagging.ls_features).
    """
    from seqlab.tagging.features import TokenFeatures

    if not configs:
        return None
    features = TokenFeatures()
    context = FeatureContext(train=train, state=state, evaluation_files=evaluation_files)
    for i, config in enumerate(configs):
        TOKEN_FEATURES.get(config.type).add(config, i, features, context)
    return features
