"""The tagger's experiment config: data, model and training sections as frozen dataclasses.

YAML is read into them strictly by :mod:`seqlab.core.strict`: an unknown key or a value
of the wrong type is a :class:`ConfigError` that names the key (``model.hiden``)
and suggests the nearest valid one, and ``--set a.b=c`` overrides are held to the
same rules.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from seqlab.core.config import EmbeddingsConfig, TrainSettings, TransformerConfig, check_fine_tune
from seqlab.core.errors import ConfigError
from seqlab.data.config import DataConfig
from seqlab.tagging.parts import DECODERS, ENCODERS, TOKEN_FEATURES, check_encoder
from seqlab.core.strict import choice, count, dropout_rate, in_range, load_strict, positive, size

TASK = "tagging"
#: tag_many decodes the sentences of a long text this many batches at a time, sorted by length into batches:
#: less padding (about 1.5x the speed of decoding each batch as it comes; 32 batches of 100 took 12-20% less CPU
#: than 8 of 64 on Wikipedia text, with the same labels) and still bounded memory. Here, not in the API module,
#: so that ``seqlab tag --workers`` starts its workers without importing torch first.
POOL_BATCHES = 32


@dataclass(frozen=True)
class CharConfig:
    """Character BiLSTM (Lample et al. 2016): char embedding size, hidden size per direction, and dropout."""

    dim: int = 25
    hidden: int = 50
    dropout: float = 0.0  # on the character embeddings, before the BiLSTM (Ma & Hovy 2016 §3.1)

    def __post_init__(self) -> None:
        size("model.chars.dim", self.dim)
        size("model.chars.hidden", self.hidden)
        dropout_rate("model.chars.dropout", self.dropout)


@dataclass(frozen=True)
class CapsConfig:
    """Capitalization embedding (allUpper, allLower, upperFirst, upperNotFirst, numeric, noAlphaNum)."""

    dim: int = 25

    def __post_init__(self) -> None:
        size("model.capitalization.dim", self.dim)


@dataclass(frozen=True)
class FeatureConfig:
    """A fixed per-token word representation made by ``features/`` (never trained itself).

    ``type: embeddings`` reads word vectors (word2vec text, or Turian's/GloVe's word-then-numbers
    layout) and scales them to ``scale`` standard deviation (Turian et al. 2010 §7.2).
    ``type: brown`` reads Liang's ``paths`` file; each prefix depth in ``prefixes`` becomes a
    learned embedding of size ``dim``, or one-hot input when ``dim`` is 0.
    ``type: ls`` reads an LS artefact folder (Ghaddar & Langlais 2018 §3; ``seqlab features ls build``),
    already in [-1, 1], so ``scale``, ``format`` and ``lowercase`` do not apply; a ``path`` starting
    with ``./`` or ``../`` is relative to the working directory (see seqlab.tagging.ls_features).
    Types fitted on the training split (Turian, Bergstra & Bengio 2009 §4; no ``path``):
    ``orthographic`` (first-character type, length, compressed word type, capitalization; types
    seen ``min_count`` times), ``pos`` (one-hot of data column ``column``), ``label_freq``.
    """

    type: str
    path: str | None = None
    format: str = "auto"
    lowercase: bool = False
    scale: float | None = 0.1
    prefixes: tuple[int, ...] = (4, 6, 10, 20)
    dim: int = 0
    min_count: int = 1  # orthographic: symbols seen fewer times in training share the unknown slot
    column: str = "pos"  # pos: the data column read

    def __post_init__(self) -> None:
        TOKEN_FEATURES.check("model.features[].type", self.type)
        if (self.path is None) != TOKEN_FEATURES.get(self.type).fitted:
            need = "takes no path (it is fitted on the training split)" if self.path else "needs a path"
            raise ConfigError(f"model.features[].path: type {self.type!r} {need}")
        count("model.features[].min_count", self.min_count)
        for prefix in self.prefixes:
            in_range("model.features[].prefixes[]", prefix, 1, 64, "a prefix length")
        choice("model.features[].format", self.format, ("auto", "word2vec", "turian", "glove"))
        size("model.features[].dim", self.dim, low=0)  # 0: one-hot
        if self.type in ("embeddings", "ls") and self.dim:
            raise ConfigError(f"model.features[].dim: only brown features have a learned size; {self.type} keep their own")


@dataclass(frozen=True)
class WindowConfig:
    """The windowed encoder of Turian, Bergstra & Bengio (2009 §2): ``encoder: window``.

    ``architecture`` in the paper's notation (``I-T(150)-W(310)-W(310)-O``, see
    ``seqlab/modules/window_spec.py``); ``size`` tokens per window; ``filters`` quadratic
    filters per unit of every layer, O included, unless a layer sets its own (``W(310,q2)``).
    ``dropout`` between the hidden layers (``model.dropout`` is on the encoder's input and output).
    """

    architecture: str = "I-T(150)-W(310)-O"
    size: int = 7
    filters: int = 0
    dropout: float = 0.0

    def __post_init__(self) -> None:
        from seqlab.modules.window_spec import parse_architecture

        try:
            parse_architecture(self.architecture)
        except ValueError as err:
            raise ConfigError(f"model.window.architecture: {err}") from None
        if self.size < 1 or self.size % 2 == 0:
            raise ConfigError(f"model.window.size: expected a positive odd number, got {self.size}")
        in_range("model.window.size", self.size, 1, 101, "a window size")
        if self.filters < 0:
            raise ConfigError(f"model.window.filters: expected a number >= 0, got {self.filters}")
        size("model.window.filters", self.filters, low=0)
        dropout_rate("model.window.dropout", self.dropout)


@dataclass(frozen=True)
class ModelConfig:
    """A tagger assembled from an embedder, an encoder and a decoder."""

    embeddings: EmbeddingsConfig | None = field(default_factory=EmbeddingsConfig)  # null: no learned word vectors
    chars: CharConfig | None = field(default_factory=CharConfig)
    capitalization: CapsConfig | None = field(default_factory=CapsConfig)
    features: tuple[FeatureConfig, ...] = ()
    transformer: TransformerConfig | None = None  # a pretrained transformer's contextual vectors, concatenated
    encoder: str = "bilstm"
    hidden: int = 128  # per direction
    layers: int = 1
    dropout: float = 0.5  # on the encoder's input and (unless output_dropout says otherwise) its output
    output_dropout: float | None = None  # on the encoder's output; null: model.dropout (0: Lample et al. 2016)
    layer_dropout: float = 0.0  # between stacked BiLSTM layers (layers > 1; Reimers & Gurevych 2017)
    dropout_mode: str = "standard"  # standard: a mask per token; locked: one per sentence (Gal & Ghahramani 2016)
    forget_bias: float | None = None  # initial forget-gate bias of every LSTM (Jozefowicz et al. 2015: 1); null: PyTorch's
    decoder: str = "crf"
    window: WindowConfig | None = None  # settings of encoder: window (its ENCODERS entry's section)
    output_filters: int = 0  # quadratic filters of the output layer (Turian et al. 2009 "future work"); not for window
    output_hidden: int = 0  # a tanh layer of this size between the encoder and O (Lample et al. 2016's code); 0: none
    quadratic_sqrt: bool = True  # q(x) with the square root (the paper's footnote) or Bergstra et al.'s sum

    def __post_init__(self) -> None:
        ENCODERS.check("model.encoder", self.encoder)
        DECODERS.check("model.decoder", self.decoder)
        choice("model.dropout_mode", self.dropout_mode, ("standard", "locked"))
        check_encoder(self)  # its section (model.window), its output layer, its own checks: its ENCODERS entry's
        size("model.hidden", self.hidden)
        in_range("model.layers", self.layers, 1, 64, "a number of layers")
        size("model.output_hidden", self.output_hidden, low=0)
        size("model.output_filters", self.output_filters, low=0)
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"model.dropout: expected a value in [0, 1), got {self.dropout}")
        if self.output_dropout is not None and not 0.0 <= self.output_dropout < 1.0:
            raise ConfigError(f"model.output_dropout: expected a value in [0, 1) or null, got {self.output_dropout}")
        if not 0.0 <= self.layer_dropout < 1.0:
            raise ConfigError(f"model.layer_dropout: expected a value in [0, 1), got {self.layer_dropout}")
        if self.forget_bias is not None and not math.isfinite(self.forget_bias):
            raise ConfigError(f"model.forget_bias: expected a finite number or null, got {self.forget_bias}")


#: How a student learns from a teacher's labels. ``hard``: the student's own loss (a CRF's negative log-likelihood)
#: on the teacher's best path. ``soft``: the cross-entropy of the student's token marginals against the teacher's
#: distribution over the labels at each token (the corpus's ``distributions``), the token-level distillation of
#: Wang et al. (2020); it needs a corpus that kept them and the teacher's scheme as the student's training scheme.
TEACHER_LOSSES = ("hard", "soft")


@dataclass(frozen=True)
class TeacherConfig:
    """Sentences a teacher tagger labelled (``seqlab distill label``), joining the gold training sentences: the
    unlabeled text of Turian et al. (2010) put to use through a more accurate tagger (self-training, distillation).

    ``corpus``: the folder ``seqlab distill label`` wrote (relative to $SEQLAB_DATA, or to the working directory
    when it starts with ./ or ../, as for files built into runs/). ``threshold``: sentences whose path confidence
    (the teacher's probability of its whole label sequence) is below it are left out. ``words``: how many of the
    corpus's words (tokens) to take, sentences in corpus order after the threshold (null: all). ``mix``: teacher
    sentences per gold sentence in each epoch, drawn afresh from that pool every epoch. ``loss``: one of
    :data:`TEACHER_LOSSES`. Dev and test stay gold."""

    corpus: str
    words: int | None = None
    mix: float = 1.0
    threshold: float = 0.0
    loss: str = "hard"

    def __post_init__(self) -> None:
        if not self.corpus:
            raise ConfigError("train.teacher.corpus: expected the folder seqlab distill label wrote, got an empty "
                              "string")
        if self.words is not None:
            count("train.teacher.words", self.words)
        positive("train.teacher.mix", self.mix)
        if not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"train.teacher.threshold: expected a path confidence in [0, 1], got {self.threshold}")
        choice("train.teacher.loss", self.loss, TEACHER_LOSSES)


@dataclass(frozen=True)
class TrainConfig(TrainSettings):
    """The tagger's training: :class:`seqlab.core.config.TrainSettings` (SGD, lr 0.009, momentum 0.9, batch 10,
    Ghaddar & Langlais 2018 §4) plus a learning rate of its own for the word embeddings, and, optionally,
    teacher-labelled sentences beside the gold ones (:class:`TeacherConfig`)."""

    embedding_lr: float = 1.0  # the word embeddings' learning rate, as a multiple of lr
    teacher: TeacherConfig | None = None  # null: gold sentences only

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 < self.embedding_lr < math.inf:
            raise ConfigError(f"train.embedding_lr: expected a positive finite multiple of train.lr, got "
                              f"{self.embedding_lr} (model.embeddings.trainable: false freezes them)")


@dataclass(frozen=True)
class Config:
    """A whole experiment."""

    data: DataConfig
    task: str = TASK
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self) -> None:
        choice("task", self.task, (TASK,))
        check_fine_tune(self.model.transformer, self.train)
        emb = self.model.embeddings
        if self.train.embedding_lr != 1.0 and (emb is None or not emb.trainable):
            raise ConfigError(f"train.embedding_lr is {self.train.embedding_lr}, but the model has no trainable word "
                              "embeddings (model.embeddings is null or trainable: false); leave it at 1")



def load_config(path: str | Path, overrides: Sequence[str] = ()) -> Config:
    """Read a tagger config, apply ``a.b=c`` overrides, and check it strictly."""
    return load_strict(path, overrides, root=Config)
