"""The models installed with the package, by short name, and where a model name points.

Apart from :mod:`seqlab.apps.tasks` (which imports torch) so that a process that only names a model, such as the
parent of ``seqlab tag --workers``, starts in a fraction of a second.
"""
from __future__ import annotations

from pathlib import Path

from seqlab.core.errors import SeqlabError

#: Models installed with the package, by short name (files in seqlab/resources/models/).
MODELS = {"en-ner-conll03": "en-ner-conll03.seqlab"}
DEFAULT_MODEL = "en-ner-conll03"


def model_path(name: str | Path | None) -> Path:
    """Where a model is: a run directory, a ``.seqlab`` file, or the installed model of a short name
    (None: the default English NER model)."""
    if name is None or str(name) in MODELS:
        installed = Path(__file__).parents[1] / "resources" / "models" / MODELS[str(name or DEFAULT_MODEL)]
        if not installed.is_file():
            raise SeqlabError(f"the installed model {name or DEFAULT_MODEL!r} is missing from {installed.parent} "
                              "(reinstall seqlab)")
        return installed
    return Path(name)
