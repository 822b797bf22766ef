"""Config sections every task shares: word embeddings and training settings.

Each task's config (:mod:`seqlab.tagging.config`, :mod:`seqlab.relation.config`) builds on these
frozen dataclasses, read strictly by :mod:`seqlab.core.strict`; a task changes defaults, never meaning.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from seqlab.core.errors import ConfigError
from seqlab.core.optim import OPTIMIZERS
from seqlab.core.strict import MAX_SIZE, MAX_THREADS, choice, count, in_range, positive, seed, size

VECTOR_FORMATS = ("glove", "word2vec", "word2vec_bin", "fasttext_vec", "fasttext_bin", "spacy")
POOLINGS = ("first", "mean", "last")  # the same names as seqlab.modules.subwords.POOLINGS (torch-free here)


@dataclass(frozen=True)
class EmbeddingsConfig:
    """Word embeddings, initialised from a pretrained file and fine-tuned."""

    path: str | None = None
    format: str = "glove"
    dim: int = 50
    trainable: bool = True
    lowercase_fallback: bool = True  # look a word up as written, then lower-cased
    min_count: int = 2  # training words without a pretrained vector are kept from this count on
    digits_to_zero: bool = False
    singleton_unk: float = 0.0  # Lample et al. 2016 §4: a training singleton is read as <unk> with this probability
    scale: float | None = None  # Turian et al. 2010 §7.2: initial matrix rescaled to this std; null keeps the file's

    def __post_init__(self) -> None:
        choice("model.embeddings.format", self.format, VECTOR_FORMATS)
        size("model.embeddings.dim", self.dim)
        count("model.embeddings.min_count", self.min_count, low=0)
        if not 0.0 <= self.singleton_unk < 1.0:
            raise ConfigError(f"model.embeddings.singleton_unk: expected a probability in [0, 1), got {self.singleton_unk}")
        if self.scale is not None and not 0.0 < self.scale < math.inf:
            raise ConfigError(f"model.embeddings.scale: expected a positive finite std or null, got {self.scale}")


@dataclass(frozen=True)
class TransformerConfig:
    """A pretrained transformer read as a token embedder (:mod:`seqlab.modules.transformer`).

    ``path``: a local Hugging Face model folder (``config.json``, ``model.safetensors``, tokenizer files), or
    ``pkg:NAME``, the folder inside the installed Python package NAME that holds them. ``layers``: the
    hidden layers averaged into a token's vector (-1 is the last); ``pooling``: which of a word's pieces
    make its vector. Frozen (``fine_tune: false``) vectors are computed once per run; fine-tuning trains the
    encoder too, at ``lr`` with a linear warm-up over the first ``warmup`` steps. ``window``: pieces per
    transformer input (null: the model's limit); longer sentences are read in windows every ``stride`` pieces
    (null: half a window).
    """

    path: str
    layers: tuple[int, ...] = (-1, -2, -3, -4)
    pooling: str = "mean"
    fine_tune: bool = False
    lr: float = 5e-5
    warmup: int = 0
    window: int | None = None
    stride: int | None = None
    batch_size: int = 32  # sentences per transformer call when precomputing frozen vectors

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError("model.transformer.path: expected a model folder or pkg:NAME, got an empty string")
        if not self.layers:
            raise ConfigError("model.transformer.layers: expected at least one layer index, such as [-1]")
        choice("model.transformer.pooling", self.pooling, POOLINGS)
        positive("model.transformer.lr", self.lr)
        count("model.transformer.batch_size", self.batch_size)
        count("model.transformer.warmup", self.warmup, low=0)
        for layer in self.layers:
            in_range("model.transformer.layers[]", layer, -1024, 1023, "a layer index")
        if self.warmup and not self.fine_tune:
            raise ConfigError("model.transformer.warmup: warms up fine-tuning; set fine_tune: true or warmup: 0")
        if self.window is not None and not 2 <= self.window <= MAX_SIZE:
            raise ConfigError(f"model.transformer.window: expected at least 2 pieces and at most {MAX_SIZE}, "
                              f"got {self.window}")
        if self.stride is not None:
            size("model.transformer.stride", self.stride)
        if self.stride is not None and not 1 <= self.stride <= (self.window or self.stride):
            raise ConfigError(f"model.transformer.stride: expected 1 <= stride <= window, got {self.stride}")


@dataclass(frozen=True)
class TrainSettings:
    """What the one trainer (:mod:`seqlab.core.trainer`) reads: optimizer, batches, epochs, seed, device.

    SGD with momentum by default (Ghaddar & Langlais 2018 §4); Adam, Nadam (Reimers & Gurevych 2017
    found it the most reliable optimizer for BiLSTM-CRF taggers) or AdaDelta (Lee et al. 2019).

    ``threads`` is 1 by default, like ``seqlab tag``, ``eval`` and ``serve``: these models' small matrix
    products gain little from more threads, and OpenMP threads spin while another process holds a core. On
    2 cores beside one busy process, an epoch of 400 CoNLL-2003 sentences (``conll03_glove.yaml``) took 68-75 s
    at torch's default of 2 threads (``threads: 0``) and 2.8-4.3 s at 1.
    """

    optimizer: str = "sgd"
    lr: float = 0.009
    momentum: float = 0.9  # sgd
    rho: float = 0.95  # adadelta
    eps: float = 1e-6  # adadelta
    lr_decay: float = 0.95  # exponential, per epoch: lr_epoch = lr * lr_decay ** epoch; 1 keeps lr
    weight_decay: float = 0.0  # L2: adds weight_decay * w to every gradient
    batch_size: int = 10
    bucket_factor: int = 50  # batches cut from length-sorted pools of bucket_factor × batch_size; 1 = random batches
    clip: float = 5.0  # max gradient norm; 0 disables
    epochs: int = 50
    patience: int = 10  # early stopping on the dev score
    seed: int = 1
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    eval_batch_size: int = 100
    threads: int = 1  # torch CPU threads; 0: torch's default, one per core (see below)
    ema: float = 0.0  # decay of an exponential moving average of the weights, evaluated and saved; 0 disables

    def __post_init__(self) -> None:
        OPTIMIZERS.check("train.optimizer", self.optimizer)
        positive("train.lr", self.lr)
        for key in ("batch_size", "bucket_factor", "epochs", "patience", "eval_batch_size"):
            count(f"train.{key}", getattr(self, key))
        seed("train.seed", self.seed)
        in_range("train.threads", self.threads, 0, MAX_THREADS, "a number of threads (0: one per core)")
        for key in ("momentum", "weight_decay", "eps"):
            if not 0 <= getattr(self, key) < math.inf:
                raise ConfigError(f"train.{key}: expected a finite number >= 0, got {getattr(self, key)}")
        if not 0.0 <= self.clip < math.inf:
            raise ConfigError(f"train.clip: expected a maximum gradient norm >= 0 (0 turns clipping off), "
                              f"got {self.clip}")
        if not 0.0 <= self.ema < 1.0:
            raise ConfigError(f"train.ema: expected a decay in [0, 1) (0 disables averaging), got {self.ema}")
        if not 0.0 < self.lr_decay <= 1.0:
            raise ConfigError(f"train.lr_decay: expected a value in (0, 1], got {self.lr_decay}")
        if not 0.0 < self.rho < 1.0:
            raise ConfigError(f"train.rho: expected a value in (0, 1), got {self.rho}")
        if not (self.device in ("auto", "cpu", "cuda") or self.device.startswith("cuda:")):
            raise ConfigError(f"train.device: expected auto, cpu, cuda or cuda:N, got {self.device!r}")


def check_fine_tune(transformer: TransformerConfig | None, train: TrainSettings) -> None:
    """Reject a fine-tuned transformer under AdaDelta: AdaDelta's ``lr`` multiplies a step it sizes itself
    (about sqrt(eps) at the start), so the encoder's own ``lr`` (5e-5 by default) would leave it all but frozen."""
    if transformer is not None and transformer.fine_tune and train.optimizer == "adadelta":
        raise ConfigError(f"model.transformer.fine_tune: train.optimizer adadelta scales its own step by lr, so the "
                          f"encoder's lr {transformer.lr} would leave it all but frozen; fine-tune with "
                          "train.optimizer adam or nadam, or set fine_tune: false")
