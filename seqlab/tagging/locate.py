"""Where a trained tagger's feature files are, whatever the working directory and wherever its run moved.

A run's ``config.yaml`` names the files its token features read at load time (Brown paths, word vectors, an
LS folder) as they were written in training: relative to ``SEQLAB_DATA``, or, written ``./`` or ``../``,
relative to the working directory of the training. A run used from another working directory, or moved
with the project it was trained in, finds them by trying, in order:

1. the path as configured (``SEQLAB_DATA``, or the working directory for ``./`` and ``../``);
2. for ``./`` and ``../`` paths, the path relative to each folder that holds the run directory (a run at
   ``runs/NAME`` was usually trained from the folder holding ``runs/``);
3. the file's name inside the run directory (where a user can put it).

When none exists, the error names the file and every place looked. ``seqlab package`` makes a model file that
carries its feature files and needs none of this.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.tagging.config import Config, FeatureConfig


def candidates(value: str, run_dir: Path) -> list[Path]:
    """The places tried for a feature path ``value`` of the run in ``run_dir``, in order."""
    try:
        places = [resolve_data_path(value, key="", must_exist=False)]
    except SeqlabError:  # relative to a data folder that is not set
        places = []
    if value.startswith(("./", "../")):
        places += [folder / value for folder in Path(run_dir).resolve().parents]
    places.append(Path(run_dir) / Path(value).name)
    return places


def locate(feature: FeatureConfig, index: int, run_dir: Path) -> FeatureConfig:
    """``feature`` with its path replaced by the first place it exists (as an absolute path)."""
    if feature.path is None:  # a feature fitted on the training data: no file
        return feature
    places = candidates(feature.path, run_dir)
    found = next((place for place in places if place.exists()), None)
    if found is not None:
        return dataclasses.replace(feature, path=str(found.resolve()))
    shown = ", ".join(str(p) for p in dict.fromkeys(places))
    raise SeqlabError(f"model.features[{index}].path: this model reads its {feature.type} file {feature.path!r} "
                      f"(config.yaml of {run_dir}) when it loads, and it is not at {shown}; put it at "
                      f"{places[-1]}, or set SEQLAB_DATA, or load a model file made by `seqlab package` where it "
                      f"was trained")


def locate_feature_files(config: Config, run_dir: Path) -> Config:
    """``config`` with each feature file's path replaced by where it is found (see the module doc)."""
    features = tuple(locate(f, i, run_dir) if f.path else f for i, f in enumerate(config.model.features))
    if features == config.model.features:
        return config
    return dataclasses.replace(config, model=dataclasses.replace(config.model, features=features))
