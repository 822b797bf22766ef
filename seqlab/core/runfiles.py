"""The names of the files a run directory (and a model file's members) holds, in one torch-free module.

:mod:`seqlab.core.rundir` reads and writes these files but imports torch; the CLI, the summaries, the
sweeps and the installed-model listing name them without loading torch, so every name is spelled here once.
"""
from __future__ import annotations

CONFIG = "config.yaml"  # the fully resolved config
VOCABS = "vocabs.json"  # word, character and label vocabularies (seqlab.data.vocab)
WEIGHTS = "model.pt"  # the best weights (a state dict only)
CHECKPOINT = "checkpoint.pt"  # the last epoch's weights, optimizer, RNG and loop state, for --resume
METRICS = "metrics.json"  # dev/test scores and the per-epoch history
LOG = "train.log"
FEATURES = "features.json"  # the state of token features fitted on the training split
ENCODER = "encoder.json"  # the pretrained transformer a model reads (its path and weights' sha256), if any
CALIBRATION = "calibration.json"  # the temperature fitted on dev data (seqlab.tagging.calibration)
TEXT = "text.json"  # what the training data teaches about tokenizing raw text (seqlab.text.learned)
CARD = "card.json"  # the model card: data, licence, scores per type, seeds, calibration, speed, limitations
LOCK = ".lock"  # the advisory lock a training run holds; it records the holder's pid
SWEEP_ROW = "sweep_row.json"  # what a sweep adds to a run's row (seqlab.apps.sweep)
ONNX_MANIFEST = "onnx.json"  # an ONNX export folder's manifest (seqlab.apps.onnx_runtime)
