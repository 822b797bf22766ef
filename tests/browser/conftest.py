"""Tiny runs the browser tests open: a tagger's, a relation classifier's and an extraction model's, trained
once."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import tiny_run
from tests.relation.spert_fixture import extraction_run


@pytest.fixture(scope="module")
def tagger_run(tmp_path_factory) -> Path:
    return tiny_run(tmp_path_factory.mktemp("browser") / "tagger", "ner", ("train.threads=1",))


@pytest.fixture(scope="module")
def relation_run(tmp_path_factory) -> Path:
    return tiny_run(tmp_path_factory.mktemp("browser") / "relation", "semeval")


@pytest.fixture(scope="module")
def extraction_model_run(tmp_path_factory) -> Path:
    return extraction_run(tmp_path_factory.mktemp("browser"))
