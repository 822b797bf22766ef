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
carries its feature files and needs none of this: a run directory unpacked from one (it holds the file's
:data:`MODEL_FILE_MANIFEST`) reads its features only from inside itself, never through a link out.

Whatever the run, a feature file must be a regular file (an LS feature's, a folder): a device such as
``/dev/zero`` or a FIFO is refused before it is opened, since reading one would exhaust memory or never end.
"""
from __future__ import annotations

import dataclasses
import stat
from pathlib import Path

from seqlab.core.errors import SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.tagging.config import Config, FeatureConfig

#: The manifest that :mod:`seqlab.apps.package` leaves in a run directory it unpacked from a model file.
MODEL_FILE_MANIFEST = "manifest.json"


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
    key = f"model.features[{index}].path"
    if (Path(run_dir) / MODEL_FILE_MANIFEST).is_file():
        return dataclasses.replace(feature, path=str(inside(feature.path, Path(run_dir), key)))
    places = candidates(feature.path, run_dir)
    found = next((place for place in places if place.exists()), None)
    if found is not None:
        return dataclasses.replace(feature, path=str(readable(found.resolve(), key)))
    shown = ", ".join(str(p) for p in dict.fromkeys(places))
    raise SeqlabError(f"model.features[{index}].path: this model reads its {feature.type} file {feature.path!r} "
                      f"(config.yaml of {run_dir}) when it loads, and it is not at {shown}; put it at "
                      f"{places[-1]}, or set SEQLAB_DATA, or load a model file made by `seqlab package` where it "
                      f"was trained")


def readable(path: Path, key: str) -> Path:
    """``path`` when it is a regular file or a folder; a device, FIFO or socket is refused unopened."""
    mode = path.stat().st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise SeqlabError(f"{key}: {path} is not a regular file (a device, FIFO or socket); a feature reads a file")
    return path


def inside(value: str, run_dir: Path, key: str) -> Path:
    """The feature file ``value`` of a run unpacked from a model file: inside ``run_dir`` once every link is
    followed, and regular files only (a folder's files too)."""
    root = run_dir.resolve()
    path = (root / value).resolve()
    if not path.is_relative_to(root) or not path.exists():
        raise SeqlabError(f"{key}: {value!r} is not a file of the model unpacked at {run_dir}; a model file's "
                          "features are read from the file itself")
    for part in [path, *(path.rglob("*") if path.is_dir() else ())]:
        if part.is_symlink() or not part.resolve().is_relative_to(root):
            raise SeqlabError(f"{key}: {part} leads out of the model unpacked at {run_dir}")
        readable(part, key)
    return path


def locate_feature_files(config: Config, run_dir: Path) -> Config:
    """``config`` with each feature file's path replaced by where it is found (see the module doc)."""
    features = tuple(locate(f, i, run_dir) if f.path else f for i, f in enumerate(config.model.features))
    if features == config.model.features:
        return config
    return dataclasses.replace(config, model=dataclasses.replace(config.model, features=features))
