"""LS vectors in a tagger's feature slot (Ghaddar & Langlais, COLING 2018, sections 3-4): ``type: ls``.

The vectors are fixed inputs: computed once per word type when a data set is encoded (known
words from the artefact's table, unknown ones from fastText sub-words), never trained. Two checks
run before training:

* the artefact must exist; if not, the error gives the exact ``seqlab features ls build`` command
  that creates it (about 2 CPU minutes for the staged typed corpus; it is left to the user, not
  done by training, so that runs started together never race to write the same folder);
* it must not have been learned from the annotations of the data set's dev or test files (its
  manifest records the SHA-256 of every annotated source): that would leak evaluation labels.

Paths follow the config rule of :func:`seqlab.core.paths.resolve_data_path` (relative to ``SEQLAB_DATA``,
or to the working directory when written ``./runs/...``).
"""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Mapping, Sequence

from seqlab.core.errors import SeqlabError
from seqlab.core.paths import data_root, resolve_data_path
from seqlab.tagging.features import FeatureEntry

#: The typed corpus the shipped configs' LS vectors are built from, relative to the data folder
#: (all of the staged Few-NERD subset: none of it is CoNLL-2003 or OntoNotes data).
DEFAULT_TYPED = tuple(f"typed_corpus/fewnerd_inter_bio_subset/{name}.txt" for name in ("dev", "test", "big_test"))


def build_command(out: str | Path, data_root: Path | None) -> str:
    """The command that builds the default LS vectors into ``out`` (for error messages and docs)."""
    root = data_root if data_root is not None else Path("$SEQLAB_DATA")
    typed = " ".join(shlex.quote(str(root / p)) for p in DEFAULT_TYPED)
    return f"seqlab features ls build --typed {typed} --out {shlex.quote(str(out))}"


def ls_path(value: str, key: str) -> Path:
    """Where an ``ls`` feature path points (not checked for existence)."""
    return resolve_data_path(value, key=key, must_exist=False)


def _existing(config: FeatureEntry, key: str, loading: bool = False) -> Path:
    """The artefact folder, or the error that names the command building it (for training) or says where a
    trained model looked for it (``loading``: the vectors were there when it was trained)."""
    path = ls_path(str(config.path), key)
    if not path.exists() and loading:
        base = (f"the working directory {Path.cwd()}" if str(config.path).startswith(("./", "../"))
                else f"the data folder {data_root()}")
        raise SeqlabError(f"{key}: this model needs its LS vectors, {config.path!r} in its config.yaml, which is "
                          f"relative to {base}: {path} does not exist. Run from the folder the model was trained "
                          f"in, or write the vectors' absolute path into config.yaml")
    if not path.exists():
        raise SeqlabError(f"{key}: LS vectors {config.path!r} do not exist yet; build them (a few minutes) with:\n"
                          f"  {build_command(config.path, data_root())}")
    return path


def require_ls_artefacts(configs: Sequence[FeatureEntry]) -> None:
    """Fail fast, before any data or embeddings are read, when a configured LS folder is missing."""
    for i, config in enumerate(configs):
        if config.type == "ls":
            _existing(config, f"model.features[{i}].path")


def add_ls(config: FeatureEntry, i: int, features: Any, *,
           evaluation_files: Mapping[str, Any] | None = None, loading: bool = False) -> None:
    """Load the LS artefact of ``model.features[i]`` into ``features.dense``, after the two checks
    (``loading``: for a trained model, whose error for a missing folder says where it was looked for)."""
    from features.labels import LeakageError
    from features.ls import LSVectors

    key = f"model.features[{i}].path"
    path = _existing(config, key, loading)
    try:
        vectors = LSVectors.load(path)
        vectors.check_not_built_from(evaluation_files or {})
    except LeakageError as err:
        raise SeqlabError(f"{key}: {err}") from None
    except (ValueError, OSError) as err:  # features/ names the file and what was expected
        raise SeqlabError(f"{key}: {err}") from None
    features.dense.append((vectors, vectors.dim))
