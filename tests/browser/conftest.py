"""Tiny runs the browser tests open: a tagger's and a relation classifier's, trained once."""
from __future__ import annotations

from pathlib import Path

import pytest

import seqlab
from tests.conftest import FIXTURES, forget_new_log_handlers


@pytest.fixture(scope="module")
def tagger_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("browser") / "tagger"
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(FIXTURES / "ner"))
        seqlab.train(FIXTURES / "ner" / "tiny.yaml", out, overrides=("train.threads=1",), progress=False)
    return out


@pytest.fixture(scope="module")
def relation_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("browser") / "relation"
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(FIXTURES / "semeval"))
        seqlab.train(FIXTURES / "semeval" / "tiny.yaml", out, progress=False)
    return out
