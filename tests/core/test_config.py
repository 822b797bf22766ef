"""The config sections every task shares (seqlab.core.config): each integer reaching torch is range-checked with a
one-line error naming its key, and training runs one thread unless told otherwise."""
from __future__ import annotations

import re

import pytest

from seqlab.core.config import EmbeddingsConfig, TrainSettings, TransformerConfig
from seqlab.core.errors import ConfigError


@pytest.mark.parametrize("build, message", [
    (lambda: EmbeddingsConfig(dim=2**31), "model.embeddings.dim: expected a size from 1 to 65536, got 2147483648"),
    (lambda: EmbeddingsConfig(dim=-5), "model.embeddings.dim: expected a size from 1 to 65536, got -5"),
    (lambda: EmbeddingsConfig(min_count=-1), "model.embeddings.min_count: expected a number from 0 to 2147483647"),
    (lambda: TransformerConfig("m", window=1), "model.transformer.window: expected at least 2 pieces and at most 65536, "
                                               "got 1"),
    (lambda: TransformerConfig("m", window=10**6), "model.transformer.window: expected at least 2 pieces and at most"),
    (lambda: TransformerConfig("m", stride=10**6), "model.transformer.stride: expected a size from 1 to 65536"),
    (lambda: TransformerConfig("m", warmup=-1), "model.transformer.warmup: expected a number from 0 to 2147483647"),
    (lambda: TransformerConfig("m", layers=(-1, 10**6)), "model.transformer.layers[]: expected a layer index from"),
    (lambda: TransformerConfig("m", batch_size=0), "model.transformer.batch_size: expected a number from 1 to"),
    (lambda: TrainSettings(seed=-1), "train.seed: expected a seed from 0 to 4294967295, got -1"),
    (lambda: TrainSettings(seed=2**32), "train.seed: expected a seed from 0 to 4294967295, got 4294967296"),
    (lambda: TrainSettings(epochs=0), "train.epochs: expected a number from 1 to 2147483647, got 0"),
    (lambda: TrainSettings(batch_size=2**31), "train.batch_size: expected a number from 1 to 2147483647, got 2147483648"),
    (lambda: TrainSettings(eval_batch_size=-3), "train.eval_batch_size: expected a number from 1 to 2147483647"),
    (lambda: TrainSettings(patience=0), "train.patience: expected a number from 1 to 2147483647, got 0"),
    (lambda: TrainSettings(bucket_factor=0), "train.bucket_factor: expected a number from 1 to 2147483647, got 0"),
    (lambda: TrainSettings(threads=-1), "train.threads: expected a number of threads (0: one per core) from 0 to 1024"),
    (lambda: TrainSettings(threads=10**6), "train.threads: expected a number of threads (0: one per core) from 0 to"),
])
def test_an_integer_out_of_range_is_one_error_naming_the_key(build, message):
    with pytest.raises(ConfigError, match="^" + re.escape(message)):
        build()


def test_the_bounds_themselves_are_accepted():
    EmbeddingsConfig(dim=65536, min_count=0)
    TransformerConfig("m", window=2, stride=1, warmup=0, layers=(-1024, 1023))
    TrainSettings(seed=0, threads=0, epochs=1, batch_size=1)
    TrainSettings(seed=2**32 - 1, threads=1024)


def test_training_runs_one_thread_by_default():
    assert TrainSettings().threads == 1
