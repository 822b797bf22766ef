"""seqlab.apps.backends: each backend name is written once, in one table that seqlab.load and --backend read."""
from __future__ import annotations

import subprocess
import sys

import pytest

import seqlab
from seqlab.apps.backends import BACKENDS
from seqlab.core.errors import SeqlabError
from seqlab.core.loaded import DEFAULT_BACKEND


def test_the_table_names_torch_first_and_onnx():
    assert BACKENDS.names() == ("torch", "onnx") and BACKENDS.names()[0] == DEFAULT_BACKEND
    assert all(BACKENDS.get(name).help for name in BACKENDS)


def test_the_cli_offers_exactly_the_tables_backends():
    from seqlab.cli import parser

    verbs = parser()._subparsers._group_actions[0].choices
    for verb in ("tag", "serve"):
        option = next(a for a in verbs[verb]._actions if a.dest == "backend")
        assert tuple(option.choices) == BACKENDS.names() and option.default == DEFAULT_BACKEND


def test_the_table_imports_neither_torch_nor_onnxruntime():
    code = "import sys, seqlab.apps.backends; print(sorted({'torch', 'onnxruntime'} & set(sys.modules)))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


@pytest.mark.parametrize("backend, message", [
    ("tensorrt", r"^backend: expected one of \['torch', 'onnx'\], got 'tensorrt'$"),
    ("onx", r"did you mean 'onnx'\?$"),
    ("onnx", r"resources/models/en-ner-conll03\.seqlab: no ONNX graph here; write one with "
             r"`seqlab export en-ner-conll03 --format onnx --out DIR` and load DIR$"),
])
def test_a_backend_that_cannot_load_the_model_says_so_in_one_line(backend, message):
    with pytest.raises(SeqlabError, match=message):
        seqlab.load(None, "cpu", backend=backend)


def test_the_torch_backend_loads_the_model_file_inside_an_export_folder(tmp_path):
    pytest.importorskip("onnx", reason="ONNX export needs onnx: pip install 'seqlab[onnx]'")
    from seqlab.apps.onnx_export import export_onnx

    export_onnx(None, tmp_path / "onnx")
    tagger = seqlab.load(tmp_path / "onnx", "cpu")
    assert tagger.backend == "torch" and tagger.model is not None
    assert tagger.tag("Angela Merkel visited Paris.").to_dict() == seqlab.load(None, "cpu").tag(
        "Angela Merkel visited Paris.").to_dict()


def test_with_the_cache_off_an_export_folder_leaves_no_unpacked_copy(tmp_path, monkeypatch):
    """Both backends unpack an export folder's model file only while it loads: the temporary copy goes then,
    not at exit."""
    pytest.importorskip("onnxruntime", reason="the onnx extra (pip install 'seqlab[onnx]') is not installed")
    import tempfile

    from seqlab.apps.onnx_export import export_onnx

    export_onnx(None, tmp_path / "onnx")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("SEQLAB_CACHE", "off")
    for backend in BACKENDS.names():
        tagger = seqlab.load(tmp_path / "onnx", "cpu", backend=backend)
        assert list(scratch.iterdir()) == [], backend  # removed before load returned
        assert tagger.backend == backend and tagger.tag("Angela Merkel visited Paris.").spans
