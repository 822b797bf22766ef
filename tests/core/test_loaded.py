"""seqlab.core.loaded: every kind of model ``seqlab.load`` returns (a tagger with torch or onnxruntime, a relation
model) satisfies the loaded-model protocol that the CLI and ``seqlab serve`` use, with the same meaning."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import seqlab
from seqlab.apps.backends import BACKENDS
from seqlab.apps.installed import model_path
from seqlab.apps.tasks import TASKS
from seqlab.core.errors import SeqlabError
from seqlab.core.loaded import METADATA_FIELDS, LoadedModel, check_kind
from seqlab.core.schema import DOCUMENT_FIELDS, RELATION_FIELDS, SENTENCE_FIELDS
from tests.conftest import FIXTURES, forget_new_log_handlers

#: A sample of each input kind, and the fields of its encoded results.
SAMPLES = {
    "texts": (["Angela Merkel met Emmanuel Macron in Berlin.", ""], DOCUMENT_FIELDS),
    "tokens": ([["EU", "rejects", "German", "call"], ["Peter", "Blackburn"]], SENTENCE_FIELDS),
    "sentences": (["The <e1>smoke</e1> was caused by a <e2>fire</e2> in the kitchen."], RELATION_FIELDS),
}
KINDS = ("tagger", "onnx tagger", "relation model")


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """Where each kind of model is: the installed tagger, its ONNX export (when onnx is installed), a tiny
    relation run."""
    out = tmp_path_factory.mktemp("loaded")
    found: dict[str, Path] = {"tagger": model_path(None)}
    try:
        from seqlab.apps.onnx_export import export_onnx

        export_onnx(None, out / "onnx")
        found["onnx tagger"] = out / "onnx"
    except SeqlabError:  # onnx or onnxruntime is not installed: that kind is skipped
        pass
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(FIXTURES / "semeval"))
        seqlab.train(FIXTURES / "semeval" / "tiny.yaml", out / "relation", overrides=("train.epochs=1",),
                     progress=False)
    found["relation model"] = out / "relation"
    return found


def _load(models: dict[str, Path], kind: str):
    if kind not in models:
        pytest.skip("the onnx backend needs onnx and onnxruntime: pip install 'seqlab[onnx]'")
    return seqlab.load(models[kind], "cpu", backend="onnx" if kind == "onnx tagger" else "torch")


@pytest.mark.parametrize("kind", KINDS)
def test_every_loaded_kind_satisfies_the_protocol(models, kind):
    model = _load(models, kind)
    assert isinstance(model, LoadedModel)
    assert model.task in TASKS and model.backend in BACKENDS
    assert model.labels and all(isinstance(label, str) for label in model.labels)
    assert model.inputs and all(k in SAMPLES for k in model.inputs)
    metadata = model.metadata()
    assert tuple(metadata) == METADATA_FIELDS
    assert (metadata["task"], metadata["labels"], metadata["backend"]) == (model.task, model.labels, model.backend)
    assert metadata["device"] == "cpu" and isinstance(metadata["config"], dict)
    assert json.loads(json.dumps(metadata)) == metadata


@pytest.mark.parametrize("kind", KINDS)
def test_predict_and_encode_give_the_one_schema_for_every_input_kind(models, kind):
    model = _load(models, kind)
    for input_kind in model.inputs:
        items, fields = SAMPLES[input_kind]
        results = model.predict(items, kind=input_kind)
        assert len(results) == len(items)
        for result in results:
            encoded = model.encode(result)
            assert tuple(encoded) == fields and encoded == result.to_dict()
    default, _ = SAMPLES[model.inputs[0]]
    assert [model.encode(r) for r in model.predict(default)] == [r.to_dict() for r in model.predict(default,
                                                                                                    kind=None)]


@pytest.mark.parametrize("kind", KINDS)
def test_an_input_kind_the_model_does_not_take_is_refused_in_one_line(models, kind):
    model = _load(models, kind)
    other = next(k for k in SAMPLES if k not in model.inputs)
    with pytest.raises(SeqlabError, match=rf"^a {model.task} model predicts from {model.inputs[0]}.*; "
                                          rf"got input kind '{other}'$"):
        model.predict(SAMPLES[other][0], kind=other)


def test_tagger_and_relation_model_describe_their_own_labels(models):
    tagger, relation = _load(models, "tagger"), _load(models, "relation model")
    assert tagger.labels == tagger.types == ["LOC", "MISC", "ORG", "PER"]
    assert relation.labels == relation.vocabs["labels"].itos and "Other" in relation.labels
    assert (tagger.task, relation.task) == ("tagging", "relation")


class _Partial:
    """An object with some of the members only: not a loaded model."""

    task, backend, inputs = "tagging", "torch", ("texts",)
    labels = ["PER"]

    def predict(self, items, *, kind=None, **options):
        return []


def test_an_object_without_every_member_is_not_a_loaded_model():
    assert not isinstance(_Partial(), LoadedModel)
    assert check_kind(_Partial(), None) == "texts"  # type: ignore[arg-type]
