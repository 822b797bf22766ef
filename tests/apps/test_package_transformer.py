"""A packaged model that reads a transformer: it records the encoder (path, weights' sha256) instead of holding it,
loads and tags where that encoder is installed, and refuses another one."""
from __future__ import annotations

import zipfile

import pytest
import torch

pytest.importorskip("transformers")

import seqlab  # noqa: E402
from seqlab.cli import main  # noqa: E402
from seqlab.core.errors import SeqlabError  # noqa: E402
from seqlab.apps.model_file import read_manifest  # noqa: E402
from seqlab.apps.package import package  # noqa: E402
from tests.conftest import FIXTURES, forget_new_log_handlers  # noqa: E402
from tests.helpers import tiny_bert  # noqa: E402

NER = FIXTURES / "ner"
TEXT = "EU rejects German call to boycott British lamb. Peter Blackburn said so."


@pytest.fixture(scope="module")
def packaged(tmp_path_factory):
    folder = tmp_path_factory.mktemp("package_transformer")
    encoder = tiny_bert(folder / "encoder")
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(NER))
        seqlab.train(NER / "tiny.yaml", folder / "run", progress=False,
                     overrides=(f"model.transformer={{path: {encoder}, layers: [-1, -2]}}", "train.epochs=2",
                                "train.threads=1"))
        package(folder / "run", folder / "tiny.seqlab")
    return folder / "run", folder / "tiny.seqlab", encoder


def _outputs(model) -> tuple[list, torch.Tensor]:
    """Token labels and the emission scores of TEXT's words (the tiny model may find no spans)."""
    from seqlab.data.batching import make_batch

    labels = [s.labels for s in model.tag(TEXT).sentences]
    words = [TEXT.replace(".", " .").split()]
    with torch.no_grad():
        emissions = model.model.emissions(make_batch(model._encode(words), torch.arange(1)))
    return labels, emissions


def test_the_package_records_the_frozen_encoder_and_does_not_hold_it(packaged):
    run, path, encoder = packaged
    manifest = read_manifest(path)
    assert "encoder.json" in manifest["members"]
    with zipfile.ZipFile(path) as zf:
        record = zf.read("encoder.json").decode()
        assert str(encoder) in record and "weights_sha256" in record
        weights = torch.load(run / "model.pt", weights_only=True)
    assert not any("contextual" in key for key in weights)  # the frozen encoder is not in model.pt


def test_the_package_loads_and_tags_as_its_run(packaged, monkeypatch, tmp_path):
    run, path, _ = packaged
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    labels, emissions = _outputs(seqlab.load(run, "cpu"))
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    loaded_labels, loaded_emissions = _outputs(seqlab.load(path, "cpu"))
    assert loaded_labels == labels and torch.equal(loaded_emissions, emissions)
    assert emissions.abs().sum() > 0


def test_another_encoder_at_the_recorded_path_is_refused_in_one_line(packaged, monkeypatch, tmp_path, capsys):
    run, path, encoder = packaged
    original = (encoder / "model.safetensors").read_bytes()
    tiny_bert(tmp_path / "other", seed=7)
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    try:
        (encoder / "model.safetensors").write_bytes((tmp_path / "other" / "model.safetensors").read_bytes())
        with pytest.raises(SeqlabError, match=r"trained with the encoder .* weights sha256 .* install the encoder"):
            seqlab.load(path, "cpu")
        text = tmp_path / "input.txt"
        text.write_text(TEXT + "\n")
        assert main(["tag", str(run), str(text)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "weights sha256" in err
    finally:
        (encoder / "model.safetensors").write_bytes(original)
