"""Shared fixtures: tiny real-format data, and the shared data folder when present."""
from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import Iterator

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@contextlib.contextmanager
def forget_new_log_handlers() -> Iterator[None]:
    """Detach the ``train.log`` handlers a training run adds to the ``seqlab`` logger."""
    seqlab_log = logging.getLogger("seqlab")
    before = set(seqlab_log.handlers)
    try:
        yield
    finally:
        for handler in set(seqlab_log.handlers) - before:
            seqlab_log.removeHandler(handler)
            handler.close()


@pytest.fixture(autouse=True, scope="session")
def _no_vector_cache() -> Iterator[None]:
    """Tests parse vector files themselves and write nothing to ~/.cache (widest scope, so that module-scoped
    fixtures which train models see it too); tests of the cache turn it on with monkeypatch."""
    before = os.environ.get("SEQLAB_CACHE")
    os.environ["SEQLAB_CACHE"] = "off"
    yield
    if before is None:
        del os.environ["SEQLAB_CACHE"]
    else:
        os.environ["SEQLAB_CACHE"] = before


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow (full data)")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: needs the full data sets or minutes of CPU; run with --runslow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow test: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def ner_data(monkeypatch) -> Path:
    """SEQLAB_DATA pointed at the tiny NER fixture folder."""
    folder = FIXTURES / "ner"
    monkeypatch.setenv("SEQLAB_DATA", str(folder))
    return folder


@pytest.fixture
def shared_data() -> Path:
    """The real benchmark data (../shared/data or $SEQLAB_DATA); skip when it is absent."""
    from seqlab.core.paths import data_root

    root = data_root()
    if root is None or not (root / "conll2003" / "train.txt").is_file():
        pytest.skip("real data not found: set SEQLAB_DATA or place it at ../shared/data")
    return root


def tiny_run(out: Path, fixture: str, overrides: tuple[str, ...] = ()) -> Path:
    """A run of the fixture folder ``fixture``'s ``tiny.yaml`` trained into ``out`` (its data folder set, the log
    handlers training adds forgotten afterwards)."""
    import seqlab

    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(FIXTURES / fixture))
        seqlab.train(FIXTURES / fixture / "tiny.yaml", out, overrides=overrides, progress=False)
    return out
