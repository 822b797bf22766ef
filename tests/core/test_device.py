"""The same code path on a GPU: every model trains on ``cuda`` and agrees with the CPU.

The CUDA tests skip, with their reason, on a machine without a GPU (CI runs on CPU); run them where
``torch.cuda.is_available()`` with ``python -m pytest -q tests/core/test_device.py``. What they check:
the CRF's log-likelihood, Viterbi paths and marginals equal the CPU's; a tagger, a windowed tagger and
the relation classifier train a few epochs on the GPU, their losses falling; a run trained on the GPU
loads on the CPU (``weights_only``) and predicts exactly what the GPU model predicts.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from seqlab.tagging.api import SequenceTagger
from seqlab.tagging.config import load_config
from seqlab.core.errors import SeqlabError
from seqlab.modules.crf import CRF
from seqlab.core.device import resolve_device
from tests.helpers import relation_trainer, tagger_trainer
from tests.conftest import FIXTURES

HAS_CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU on this machine (torch.cuda.is_available() is False)")


@pytest.mark.skipif(HAS_CUDA, reason="a GPU is present, so 'cuda' is valid here")
def test_asking_for_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(SeqlabError, match=r"train.device: 'cuda' was asked for, but no CUDA GPU is available"):
        resolve_device("cuda")


def test_auto_picks_the_gpu_when_there_is_one():
    assert resolve_device("auto").type == ("cuda" if HAS_CUDA else "cpu")


@needs_cuda
def test_crf_on_the_gpu_matches_the_cpu():
    gen = torch.Generator().manual_seed(0)
    num_tags, lengths = 7, [9, 4, 1, 6]
    emissions = torch.randn(len(lengths), max(lengths), num_tags, generator=gen)
    mask = torch.arange(max(lengths)) < torch.tensor(lengths).unsqueeze(1)  # shape: (B, T)
    tags = torch.randint(num_tags, mask.shape, generator=gen)
    allowed = torch.rand(num_tags, num_tags, generator=gen) > 0.3
    allowed.fill_diagonal_(True)  # every tag may repeat, so a path always exists
    crf = CRF(num_tags, allowed=allowed)
    gpu = CRF(num_tags, allowed=allowed).cuda()
    gpu.load_state_dict(crf.state_dict())
    cuda = [x.cuda() for x in (emissions, tags, mask)]
    assert torch.allclose(gpu.log_likelihood(*cuda).cpu(), crf.log_likelihood(emissions, tags, mask), atol=1e-4)
    assert torch.equal(gpu.decode(cuda[0], cuda[2]).cpu(), crf.decode(emissions, mask))
    assert torch.allclose(gpu.marginals(cuda[0], cuda[2]).cpu(), crf.marginals(emissions, mask), atol=1e-5)
    emissions.requires_grad_(True)
    crf.loss(emissions, tags, mask).backward()
    on_gpu = cuda[0].detach().clone().requires_grad_(True)
    gpu.loss(on_gpu, cuda[1], cuda[2]).backward()
    assert torch.allclose(on_gpu.grad.cpu(), emissions.grad, atol=1e-5)
    assert torch.allclose(gpu.transitions.grad.cpu(), crf.transitions.grad, atol=1e-4)


def _trained_on_the_gpu_loads_on_the_cpu(config, tmp_path: Path) -> None:
    """Train a run on the GPU; it loads on the CPU and on the GPU, and both predict the same labels."""
    from seqlab.core import rundir
    from seqlab.tagging.predict import predict
    from seqlab.apps.tasks import train

    metrics = train(config, tmp_path / "run", progress=False)
    losses = [h["loss"] for h in metrics["history"]]
    assert losses[-1] < losses[0]
    _, vocabs, on_gpu, _ = _unpack(SequenceTagger.load(tmp_path / "run", "cuda"))
    _, _, on_cpu, _ = _unpack(SequenceTagger.load(tmp_path / "run", "cpu"))
    assert next(on_gpu.parameters()).is_cuda and not next(on_cpu.parameters()).is_cuda
    data = tagger_trainer(config, tmp_path / "encode", progress=False).task.encoded["dev"]  # the same vocabularies
    gpu = predict(on_gpu, data, vocabs["tags"], confidences=True)
    cpu = predict(on_cpu, data, vocabs["tags"], confidences=True)
    assert [p.labels for p in gpu] == [p.labels for p in cpu]
    assert [c for p in gpu for *_, c in p.spans] == pytest.approx([c for p in cpu for *_, c in p.spans], abs=1e-4)


@needs_cuda
@pytest.mark.parametrize("decoder", ["crf", "softmax"])
def test_the_bilstm_tagger_trains_on_the_gpu_and_loads_on_the_cpu(ner_data, tmp_path, decoder):
    config = load_config(ner_data / "tiny.yaml", ["train.device=cuda", f"model.decoder={decoder}", "train.epochs=6"])
    _trained_on_the_gpu_loads_on_the_cpu(config, tmp_path)


@needs_cuda
def test_a_windowed_tagger_trains_on_the_gpu_and_loads_on_the_cpu(monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURES / "chunk"))
    config = load_config(FIXTURES / "chunk" / "window.yaml",
                         ["train.device=cuda", "model.window.architecture=I-T(6)-W(8)-O", "train.epochs=4"])
    _trained_on_the_gpu_loads_on_the_cpu(config, tmp_path)


@needs_cuda
def test_the_relation_classifier_trains_on_the_gpu_and_matches_the_cpu(monkeypatch, tmp_path):
    from seqlab.relation.config import load_relation_config
    from seqlab.relation.api import RelationModel
    from seqlab.relation.predict import predict_probabilities
    from seqlab.apps.tasks import train
    from tests.helpers import relation_trainer

    folder = FIXTURES / "semeval"
    monkeypatch.setenv("SEQLAB_DATA", str(folder))
    config = load_relation_config(folder / "tiny.yaml", ["train.device=cuda", "train.epochs=3", "train.patience=3"])
    metrics = train(config, tmp_path / "run", progress=False)
    losses = [h["loss"] for h in metrics["history"]]
    assert losses[-1] < losses[0]
    gpu, cpu = RelationModel.load(tmp_path / "run", "cuda"), RelationModel.load(tmp_path / "run", "cpu")
    data = relation_trainer(config, tmp_path / "encode", progress=False).task.data["test"]  # the same vocabularies
    assert torch.allclose(predict_probabilities(gpu.model, data, device="cuda"),
                          predict_probabilities(cpu.model, data), atol=1e-5)


def _unpack(tagger):  # the parts of a loaded tagger the tests below look at
    return tagger.config, tagger.vocabs, tagger.model, tagger.features


def test_a_device_name_torch_does_not_know_is_a_clear_error_naming_its_option():
    with pytest.raises(SeqlabError, match=r"--device: expected auto, cpu, cuda or cuda:N, but got 'gpu0'"):
        resolve_device("gpu0", key="--device")


@needs_cuda
def test_a_gpu_number_the_machine_lacks_is_a_clear_error():
    count = torch.cuda.device_count()
    with pytest.raises(SeqlabError, match=rf"--device: 'cuda:{count}' was asked for, but this machine has {count} GPU"):
        resolve_device(f"cuda:{count}", key="--device")


@needs_cuda
def test_explain_reads_a_model_on_the_gpu_as_on_the_cpu(monkeypatch, tmp_path):
    """``seqlab explain`` loads the model on the GPU when there is one: the batches go to the model's device and
    the heat maps, entity states and latent types are what the same model gives on the CPU."""
    import numpy as np

    from seqlab.data.semeval import read_semeval
    from seqlab.relation.api import RelationModel
    from seqlab.relation.build import model_inputs
    from seqlab.relation.config import load_relation_config
    from seqlab.relation.explain import collect, explain_file
    from seqlab.apps.tasks import train

    folder = FIXTURES / "semeval"
    monkeypatch.setenv("SEQLAB_DATA", str(folder))
    config = load_relation_config(folder / "tiny.yaml", ["train.epochs=2", "train.device=cpu"])
    train(config, tmp_path / "run", progress=False)
    gpu, cpu = RelationModel.load(tmp_path / "run", "cuda"), RelationModel.load(tmp_path / "run", "cpu")
    examples = model_inputs(read_semeval(folder / config.data.test), config.model)
    on_gpu, on_cpu = collect(gpu.model, examples, gpu.vocabs), collect(cpu.model, examples, cpu.vocabs)
    assert on_gpu.keys() == on_cpu.keys() and "alpha" in on_gpu
    for key in on_gpu:  # cuDNN's LSTM differs from the CPU's in the last digits of float32
        worst = max(float(np.abs(g - c).max()) for g, c in zip(on_gpu[key], on_cpu[key]))
        assert worst < 1e-3, f"{key}: the GPU and the CPU differ by up to {worst:.2e}"
    written = explain_file(gpu, folder / config.data.test, tmp_path / "explain")
    assert all(path.is_file() and path.stat().st_size > 0 for path in written)


@needs_cuda
def test_calibration_on_the_gpu_matches_the_cpu(monkeypatch):
    """The installed model on the GPU: the same spans, and the same confidences at another temperature, as on the
    CPU (the marginals' temperature divides every CRF score on either device)."""
    monkeypatch.setattr("seqlab.core.calibration.MIN_EACH", 0)
    import seqlab

    dev = FIXTURES / "ner" / "dev.txt"
    gpu, cpu = seqlab.load("en-ner-conll03", "cuda"), seqlab.load("en-ner-conll03", "cpu")
    on_gpu, on_cpu = gpu.outcomes(dev), cpu.outcomes(dev)
    assert on_gpu.correct.tolist() == on_cpu.correct.tolist()
    assert on_gpu.confidences(1.7).tolist() == pytest.approx(on_cpu.confidences(1.7).tolist(), abs=1e-4)
    from seqlab.tagging.calibration import calibrate

    assert calibrate(gpu, dev)[1]["temperature"] == pytest.approx(calibrate(cpu, dev)[1]["temperature"], rel=1e-3)
