"""Tests for seqlab.core.rundir: atomic saves, weights_only loading, --resume checks, round trips."""
from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

import pytest
import torch

from seqlab.core import rundir
from seqlab.tagging.api import SequenceTagger
from seqlab.core.errors import SeqlabError


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    """Files in ``folder`` other than ``keep``: temporary files a failed write left behind."""
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


# ------------------------------------------------------------------ check_output


def test_check_output_accepts_a_new_run_in_an_empty_or_missing_folder(tmp_path: Path):
    rundir.check_output(tmp_path, resume=False)
    rundir.check_output(tmp_path / "not-yet", resume=False)


def test_check_output_refuses_to_overwrite_a_checkpointed_run(tmp_path: Path):
    rundir.save_checkpoint(tmp_path, {"step": torch.tensor(1)})
    where = re.escape(str(tmp_path))
    with pytest.raises(SeqlabError, match=rf"^{where} already holds a run; use --resume {where} to continue it"):
        rundir.check_output(tmp_path, resume=False)


def test_check_output_refuses_a_resume_without_checkpoint(tmp_path: Path):
    with pytest.raises(SeqlabError, match=r"--resume .*: no checkpoint.pt there to resume from"):
        rundir.check_output(tmp_path, resume=True)
    (tmp_path / rundir.WEIGHTS).write_bytes(b"")  # weights alone are not enough to resume
    (tmp_path / rundir.CHECKPOINT).mkdir()  # nor a folder named checkpoint.pt
    with pytest.raises(SeqlabError, match="no checkpoint.pt there"):
        rundir.check_output(tmp_path, resume=True)


def test_check_output_accepts_a_resume_with_checkpoint(tmp_path: Path):
    rundir.save_checkpoint(tmp_path, {"step": torch.tensor(1)})
    assert rundir.has_checkpoint(tmp_path)
    rundir.check_output(tmp_path, resume=True)


# ------------------------------------------------------------------ round trips


def test_weights_round_trip(tmp_path: Path):
    model = _model()
    rundir.save_weights(tmp_path, model)
    loaded = rundir.load_weights(tmp_path)
    assert loaded.keys() == model.state_dict().keys()
    for name, value in model.state_dict().items():
        assert torch.equal(loaded[name], value)
    other = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    other.load_state_dict(loaded)
    x = torch.randn(5, 3)
    assert torch.equal(other(x), model(x))


def test_weights_file_holds_a_state_dict_only(tmp_path: Path):
    rundir.save_weights(tmp_path, _model())
    data = torch.load(tmp_path / rundir.WEIGHTS, weights_only=True)
    assert isinstance(data, dict) and all(isinstance(v, torch.Tensor) for v in data.values())


class _Counter:
    """A stateful part with plain values in its state dict, like a scheduler (no optimizer: importing one costs 2 s)."""

    def __init__(self, steps: int = 0) -> None:
        self.steps = steps
        self.history = [0.5] * steps

    def state_dict(self) -> dict:
        return {"steps": self.steps, "history": list(self.history), "last": torch.tensor(float(self.steps))}

    def load_state_dict(self, state: dict) -> None:
        self.steps, self.history = state["steps"], state["history"]
        assert state["last"].item() == state["steps"]


def test_training_state_round_trip_restores_parts_generators_and_loop_state(tmp_path: Path):
    model, counter = _model(), _Counter(3)
    generator = torch.Generator().manual_seed(42)
    torch.rand(3, generator=generator)
    state = {"epoch": 3, "best_score": 87.5, "history": [{"epoch": 1, "f1": 80.0}]}
    torch.manual_seed(9)
    rundir.save_training_state(tmp_path, {"model": model, "scheduler": counter, "averaged": None}, generator, state)
    expected_gen, expected_rng = torch.rand(4, generator=generator), torch.rand(4)

    fresh = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    fresh_counter = _Counter()
    fresh_gen = torch.Generator().manual_seed(0)
    torch.manual_seed(1)
    loop = rundir.load_training_state(tmp_path, {"model": fresh, "scheduler": fresh_counter, "averaged": None},
                                       fresh_gen)
    assert loop == state
    for name, value in model.state_dict().items():
        assert torch.equal(fresh.state_dict()[name], value)
    assert (fresh_counter.steps, fresh_counter.history) == (3, [0.5] * 3)
    assert torch.equal(torch.rand(4, generator=fresh_gen), expected_gen)
    assert torch.equal(torch.rand(4), expected_rng)
    ckpt = rundir.load_checkpoint(tmp_path)
    assert "averaged" not in ckpt  # None parts are left out
    assert ckpt["generator"].device.type == "cpu" and ckpt["torch_rng"].device.type == "cpu"


def test_feature_state_round_trip_and_missing_file(tmp_path: Path):
    assert rundir.load_feature_state(tmp_path) is None
    state = {"orthographic": {"shapes": ["Xx", "d"]}, "label_freq": {"k": 3}}
    rundir.save_feature_state(tmp_path, state)
    assert rundir.load_feature_state(tmp_path) == state


def test_load_feature_state_reports_bad_json_with_its_line(tmp_path: Path):
    (tmp_path / rundir.FEATURES).write_text('{\n"a": 1,\n}', encoding="utf-8")
    with pytest.raises(SeqlabError, match=rf"{rundir.FEATURES}:3:1: not valid JSON"):
        rundir.load_feature_state(tmp_path)


@pytest.mark.parametrize("name, load", [(rundir.FEATURES, rundir.load_feature_state),
                                        (rundir.ENCODER, rundir.load_encoder_record)])
def test_a_deeply_nested_json_file_is_one_line_naming_it(tmp_path: Path, name: str, load):
    (tmp_path / name).write_text('{"a": ' + "[" * 200_000 + "]" * 200_000 + "}", encoding="utf-8")
    with pytest.raises(SeqlabError, match=rf"{name}: JSON nested deeper than 64 levels; refused") as info:
        load(tmp_path)  # json.loads alone: RecursionError
    assert str(tmp_path) in str(info.value) and "\n" not in str(info.value)


def test_config_and_metrics_are_written(tmp_path: Path):
    rundir.save_config(tmp_path, "model:\n  decoder: crf\n")
    rundir.save_metrics(tmp_path, {"dev": {"f1": 91.2}})
    assert (tmp_path / rundir.CONFIG).read_text(encoding="utf-8") == "model:\n  decoder: crf\n"
    assert json.loads((tmp_path / rundir.METRICS).read_text(encoding="utf-8")) == {"dev": {"f1": 91.2}}
    assert _leftovers(tmp_path, {rundir.CONFIG, rundir.METRICS}) == []


def test_saved_files_get_ordinary_permissions(tmp_path: Path):
    rundir.save_weights(tmp_path, _model())
    rundir.save_metrics(tmp_path, {})
    umask = os.umask(0o022)
    os.umask(umask)
    for name in (rundir.WEIGHTS, rundir.METRICS):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask


# ------------------------------------------------------------------ atomic writes


class _Unserializable:
    pass


@pytest.mark.parametrize("save, name", [(rundir.save_metrics, rundir.METRICS),
                                        (rundir.save_feature_state, rundir.FEATURES)])
def test_a_json_write_failing_midway_leaves_the_old_file_and_no_partial_one(tmp_path: Path, save, name: str):
    save(tmp_path, {"old": 1})
    before = (tmp_path / name).read_bytes()
    # json.dump writes '{"a": 1, "b": ' before it meets the object it cannot serialize
    with pytest.raises(TypeError, match="not JSON serializable"):
        save(tmp_path, {"a": 1, "b": _Unserializable()})
    assert (tmp_path / name).read_bytes() == before
    assert _leftovers(tmp_path, {name}) == []


def test_a_failing_new_json_write_leaves_no_file(tmp_path: Path):
    with pytest.raises(TypeError):
        rundir.save_metrics(tmp_path, {"a": [1, 2, _Unserializable()]})
    assert _leftovers(tmp_path, set()) == []


def _fail_mid_torch_save(obj, f, *args, **kwargs) -> None:
    f.write(b"PK\x03\x04 half a zip archive")
    raise OSError("disk full")


@pytest.mark.parametrize("save, name", [
    (lambda d: rundir.save_weights(d, _model()), rundir.WEIGHTS),
    (lambda d: rundir.save_checkpoint(d, {"step": torch.tensor(2)}), rundir.CHECKPOINT),
])
def test_a_torch_save_failing_midway_leaves_the_old_file_and_no_partial_one(tmp_path: Path, monkeypatch, save,
                                                                             name: str):
    save(tmp_path)
    before = (tmp_path / name).read_bytes()
    monkeypatch.setattr(torch, "save", _fail_mid_torch_save)
    with pytest.raises(OSError, match="disk full"):
        save(tmp_path)
    assert (tmp_path / name).read_bytes() == before
    assert _leftovers(tmp_path, {name}) == []
    monkeypatch.undo()
    assert torch.load(tmp_path / name, weights_only=True)  # still the complete old file


def test_a_failing_first_checkpoint_does_not_count_as_one(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(torch, "save", _fail_mid_torch_save)
    with pytest.raises(OSError):
        rundir.save_checkpoint(tmp_path, {"step": torch.tensor(1)})
    assert not rundir.has_checkpoint(tmp_path)
    assert _leftovers(tmp_path, set()) == []
    rundir.check_output(tmp_path, resume=False)  # a new run may start there


def test_a_config_write_failing_at_fsync_leaves_the_old_file(tmp_path: Path, monkeypatch):
    rundir.save_config(tmp_path, "old: 1\n")

    def fail(fd: int) -> None:
        raise OSError("I/O error")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="I/O error"):
        rundir.save_config(tmp_path, "new: 2\n" * 1000)
    assert (tmp_path / rundir.CONFIG).read_text(encoding="utf-8") == "old: 1\n"
    assert _leftovers(tmp_path, {rundir.CONFIG}) == []


# ------------------------------------------------------------------ loading never runs code


class _Payload:
    """Pickled, ``_Payload(marker)`` calls :func:`_touch` on load: what a malicious model file would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return _touch, (str(self.marker),)


def _touch(path: str) -> str:
    Path(path).write_text("code ran", encoding="utf-8")
    return path


class _Plain:
    def __init__(self) -> None:
        self.x = 1


@pytest.mark.parametrize("name, load", [(rundir.WEIGHTS, rundir.load_weights),
                                        (rundir.CHECKPOINT, rundir.load_checkpoint)])
def test_loading_refuses_a_pickle_that_would_run_code(tmp_path: Path, name: str, load):
    marker = tmp_path / "marker"
    torch.save({"weight": torch.zeros(2), "evil": _Payload(marker)}, tmp_path / name)
    refused = rf"{name}: refused: a seqlab model file holds only tensors and plain values, and this one holds " \
              r"tests.core.test_rundir._touch; it was not loaded, since loading it could run code$"
    with pytest.raises(SeqlabError, match=refused) as err:
        load(tmp_path)
    assert "\n" not in str(err.value) and "weights_only" not in str(err.value)  # no advice to load it unsafely
    assert not marker.exists()
    torch.load(tmp_path / name, weights_only=False)  # the file is a real exploit: a full unpickle runs it
    assert marker.read_text(encoding="utf-8") == "code ran"


class _SystemCall:
    def __reduce__(self):
        return os.system, ("echo this must not run",)


def test_loading_refuses_os_system_in_one_line(tmp_path: Path):
    torch.save({"weight": torch.zeros(2), "evil": _SystemCall()}, tmp_path / rundir.WEIGHTS)
    with pytest.raises(SeqlabError) as err:
        rundir.load_weights(tmp_path)
    assert str(err.value) == (f"{tmp_path / rundir.WEIGHTS}: refused: a seqlab model file holds only tensors and "
                              f"plain values, and this one holds {os.system.__module__}.system; it was not loaded, "
                              "since loading it could run code")


def test_an_empty_or_truncated_model_file_says_so(tmp_path: Path):
    (tmp_path / rundir.WEIGHTS).write_bytes(b"")
    with pytest.raises(SeqlabError, match=r"model.pt: an empty file \(0 bytes\), not saved weights"):
        rundir.load_weights(tmp_path)
    rundir.save_weights(tmp_path, _model())
    whole = (tmp_path / rundir.WEIGHTS).read_bytes()
    (tmp_path / rundir.WEIGHTS).write_bytes(whole[: len(whole) // 2])
    with pytest.raises(SeqlabError) as err:
        rundir.load_weights(tmp_path)
    assert "cannot load weights: not a complete seqlab model file (" in str(err.value)
    assert "\n" not in str(err.value) and "high likelihood" not in str(err.value)


def test_loading_refuses_an_arbitrary_object(tmp_path: Path):
    torch.save({"weight": torch.zeros(2), "extra": _Plain()}, tmp_path / rundir.WEIGHTS)
    refused = r"refused: .* this one holds tests.core.test_rundir._Plain; it was not loaded"
    with pytest.raises(SeqlabError, match=refused):
        rundir.load_weights(tmp_path)


def test_loading_a_missing_or_corrupt_file_is_a_seqlab_error(tmp_path: Path):
    with pytest.raises(SeqlabError, match=r"model.pt: no such file \(is .* a seqlab run directory\?\)"):
        rundir.load_weights(tmp_path)
    (tmp_path / rundir.CHECKPOINT).write_bytes(b"not a torch file")
    with pytest.raises(SeqlabError, match=r"checkpoint.pt: cannot load weights: not a seqlab model file, or a "
                                          r"corrupt one \(Unsupported operand \d+\)$"):
        rundir.load_checkpoint(tmp_path)
    (tmp_path / rundir.CHECKPOINT).write_bytes(b"PK\x03\x04 a truncated zip archive")
    with pytest.raises(SeqlabError, match="checkpoint.pt: cannot load weights"):
        rundir.load_checkpoint(tmp_path)


def test_load_run_refuses_a_folder_without_config(tmp_path: Path):
    rundir.save_weights(tmp_path, _model())
    with pytest.raises(SeqlabError, match=r"not a seqlab run directory \(no config.yaml\)"):
        SequenceTagger.load(tmp_path)


# ------------------------------------------------------------------ run_log


def test_run_log_appends_to_train_log_and_detaches_afterwards(tmp_path: Path):
    log = logging.getLogger("seqlab.test_rundir")
    root = logging.getLogger("seqlab")
    handlers, level = list(root.handlers), root.level
    with rundir.run_log(tmp_path):
        log.info("first run")
    with rundir.run_log(tmp_path):
        log.info("resumed")
    log.warning("after the run")
    text = (tmp_path / rundir.LOG).read_text(encoding="utf-8")
    assert "INFO seqlab.test_rundir: first run" in text and "resumed" in text
    assert text.index("first run") < text.index("resumed")
    assert "after the run" not in text
    assert root.handlers == handlers and root.level == level
