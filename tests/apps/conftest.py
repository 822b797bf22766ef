"""Fixtures of the model-file tests (tests/apps/test_package.py, test_model_cache.py): one tiny packaged tagger."""
from __future__ import annotations

from pathlib import Path

import pytest

import seqlab
from seqlab.apps.package import package
from tests.conftest import FIXTURES, forget_new_log_handlers

NER = FIXTURES / "ner"
BROWN = "model.features=[{type: brown, path: brown_paths.txt, prefixes: [2, 4], dim: 3}]"


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> tuple[Path, Path]:
    """A tiny tagger with a Brown-cluster feature, trained and packaged."""
    folder = tmp_path_factory.mktemp("package")
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(NER))
        seqlab.train(NER / "tiny.yaml", folder / "run", overrides=(BROWN, "train.threads=1"), progress=False)
        package(folder / "run", folder / "tiny.seqlab")
    return folder / "run", folder / "tiny.seqlab"
