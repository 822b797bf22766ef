"""Portable model files: one ``.seqlab`` file holding everything a trained model needs to load.

``seqlab package RUN --out NAME.seqlab`` writes a zip archive of

* ``manifest.json``: format and version, seqlab's version, the task, the sha256 and size of every other member,
  the training data and the run's scores;
* ``config.yaml`` (feature paths rewritten to members of the file), ``vocabs.json``, ``features.json``;
* ``encoder.json``: which pretrained transformer the model reads (path and weights' sha256); the encoder itself
  is not packaged (a frozen one is installed separately; a fine-tuned one's weights are in ``model.pt``);
* ``model.pt``: the best weights, tensors only (``torch.load(weights_only=True)``);
* ``files/<i>/...``: every file a token feature reads at load time (Brown paths, word vectors, an LS folder),
  pruned to the words the model needs (:mod:`seqlab.tagging.prune`; ``--full-features`` keeps them whole).

This module writes model files. Loading trusts nothing in the file: :mod:`seqlab.apps.model_file` checks member
names, sizes, every checksum and the contents before anything is used, and :mod:`seqlab.apps.model_cache` unpacks
the checked members into a run directory that loading reads.
"""
from __future__ import annotations

import json
import logging
import zipfile
import zlib
from pathlib import Path
from typing import Any, Iterator

import yaml

from seqlab.core.strict import load_yaml, read_mapping
from seqlab.apps.model_cache import unpacked
from seqlab.apps.model_file import (FORMAT, FORMAT_VERSION, MANIFEST, MAX_RATIO, RATIO_FLOOR, check_model_file,
                                    reading, sha256_hex, stream)
from seqlab.core import rundir
from seqlab.core.atomic import atomic_open
from seqlab.core.errors import SeqlabError
from seqlab.core.json_limits import read_json
from seqlab.core.scores import measure_report, recorded_scores
from seqlab.data.vocab import load_vocabs

SUFFIX = ".seqlab"
_RUN_MEMBERS = (rundir.CONFIG, rundir.VOCABS, rundir.FEATURES, rundir.WEIGHTS, rundir.ENCODER, rundir.CALIBRATION,
                rundir.CARD, rundir.TEXT)
log = logging.getLogger("seqlab")


def _feature_files(tree: dict[str, Any], run_dir: Path) -> Iterator[tuple[str, Path]]:
    """(member prefix, file or folder on disk) for every token feature that reads one; rewrites the config
    tree's paths to the members they become."""
    from seqlab.core.paths import resolve_data_path

    for i, feature in enumerate((tree.get("model") or {}).get("features") or ()):
        value = feature.get("path")
        if not value:
            continue
        source = resolve_data_path(value, key=f"model.features[{i}].path")
        if not source.exists():
            raise SeqlabError(f"{run_dir}: model.features[{i}].path {value!r} ({source}) does not exist, so it "
                              "cannot be packaged; give the file (SEQLAB_DATA) it was trained with")
        prefix = f"files/{i}/{source.name}"
        feature["path"] = prefix
        yield prefix, source


def _members(run_dir: Path, prune: bool = True) -> dict[str, bytes]:
    """The archive's members (manifest excluded), as bytes; with ``prune``, a tagger's feature tables kept to
    the words it needs (:mod:`seqlab.tagging.prune`)."""
    from seqlab.apps.tasks import task_of
    from seqlab.tagging.prune import PRUNERS, copy_whole, pruned_members

    tree = read_mapping(run_dir / rundir.CONFIG, "run config")
    members: dict[str, bytes] = {}
    features = (tree.get("model") or {}).get("features") or ()
    run_words = task_of(tree, run_dir / rundir.CONFIG).words
    words = run_words(run_dir) if prune and run_words is not None and features else None
    for (prefix, source), feature in zip(list(_feature_files(tree, run_dir)), [f for f in features if f.get("path")]):
        try:
            if words is not None and feature.get("type") in PRUNERS:
                members.update(pruned_members(feature, source, prefix, words))
            else:
                members.update(copy_whole(source, prefix))
        except (ValueError, OSError) as err:  # features/ names the file and what was wrong
            raise SeqlabError(f"{run_dir}: cannot package {source}: {err}") from None
    members[rundir.CONFIG] = yaml.safe_dump(tree, sort_keys=False).encode("utf-8")
    for name in _RUN_MEMBERS[1:]:
        if (run_dir / name).is_file():
            members[name] = (run_dir / name).read_bytes()
    return members


def check_run(run_dir: Path) -> None:
    """Refuse a run directory that would make a model file which cannot load: its config (read strictly), its
    vocabularies, its fitted features' state and its weights (``weights_only``) are each read once here."""
    from seqlab.apps.tasks import read_config

    if not (run_dir / rundir.WEIGHTS).is_file():
        from seqlab.extraction.config import NER_RUN, RELATION_RUN

        if all((run_dir / half / rundir.WEIGHTS).is_file() for half in (NER_RUN, RELATION_RUN)):
            raise SeqlabError(f"{run_dir}: an extraction run (a tagger in ner/ and a relation classifier in "
                              f"relation/) is not packaged as one file yet; load, tag, eval or serve the run "
                              f"directory itself, or package either half")
        raise SeqlabError(f"{run_dir}: no {rundir.WEIGHTS} (is it a finished seqlab run directory?)")
    read_config(run_dir / rundir.CONFIG)
    load_vocabs(run_dir / rundir.VOCABS)
    rundir.load_feature_state(run_dir)
    rundir.load_weights(run_dir)


def _manifest(run_dir: Path, members: dict[str, bytes]) -> dict[str, Any]:
    from seqlab.apps.tasks import DEFAULT_TASK
    from seqlab.core.version import __version__

    tree = load_yaml(members[rundir.CONFIG].decode("utf-8"))
    metrics_path = run_dir / rundir.METRICS
    metrics = read_json(metrics_path) if metrics_path.is_file() else {}
    if not isinstance(metrics, dict):
        raise SeqlabError(f"{metrics_path}: expected a JSON object of scores, got {type(metrics).__name__}")
    scores = {split: score.score for split, score in recorded_scores(metrics, str(metrics_path)).items()}
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "seqlab_version": __version__,
            "task": tree.get("task", DEFAULT_TASK), "training_data": tree.get("data", {}),
            "scores": scores, "measure": metrics.get("measure"), "best_epoch": metrics.get("best_epoch"),
            "members": {name: sha256_hex(data) for name, data in sorted(members.items())},
            "sizes": {name: len(data) for name, data in sorted(members.items())}}


def package(run_dir: str | Path, out: str | Path, *, prune: bool = True, about: dict[str, str] | None = None,
            calibrate: bool = True) -> dict[str, Any]:
    """Write the model of ``run_dir`` as one ``.seqlab`` file at ``out`` (atomically); returns its manifest.
    With ``prune`` (the default) the feature tables are kept to the words the model needs; without, whole.
    The file gets a model card (:mod:`seqlab.apps.card`; ``about``: its person-written part) and, for a tagger
    with ``calibrate``, its confidences' temperature fitted on the dev set unless the run has one. A model
    file given as ``run_dir`` is rewritten with a new card (:func:`refresh`)."""
    run_dir, out = Path(run_dir), Path(out)
    if run_dir.is_file():
        return refresh(run_dir, out, about=about, calibrate=calibrate)
    if not (run_dir / rundir.CONFIG).is_file():
        raise SeqlabError(f"{run_dir}: not a seqlab run directory (no {rundir.CONFIG})")
    if out.is_dir():
        raise SeqlabError(f"--out {out}: is a directory; give a file name such as {out / run_dir.name}{SUFFIX}")
    check_run(run_dir)
    members = _members(run_dir, prune)
    from seqlab.apps.card import describe

    metrics = read_json(run_dir / rundir.METRICS) if (run_dir / rundir.METRICS).is_file() else {}
    added = describe(_load(run_dir), read_mapping(run_dir / rundir.CONFIG, "run config"),
                     metrics if isinstance(metrics, dict) else {}, about or {},
                     calibration=rundir.load_json(run_dir, rundir.CALIBRATION), calibrate=calibrate)
    members.update({name: json.dumps(value, indent=2).encode("utf-8") for name, value in added.items()})
    manifest = _manifest(run_dir, members)
    _write(out, manifest, members)
    return manifest


def _load(run_dir: Path) -> Any:
    """The model of a run directory (or an unpacked model file) on the CPU, by its config's task."""
    from seqlab.apps.tasks import task_of

    return task_of(read_mapping(run_dir / rundir.CONFIG, "run config"), run_dir / rundir.CONFIG).load(run_dir, "cpu")


def _write(out: Path, manifest: dict[str, Any], members: dict[str, bytes]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, "wb") as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2))
        for name, data in sorted(members.items()):
            _deflate(zf, name, data)


def refresh(path: str | Path, out: str | Path, *, about: dict[str, str] | None = None,
            calibrate_on: str | Path | None = None, calibrate: bool = True,
            encoding: str | None = None, offsets: str | None = None) -> dict[str, Any]:
    """Rewrite the model file ``path`` at ``out`` (the same path: atomically in place) with a new card
    (``about`` over the old card's person-written part) and, with ``calibrate_on`` (a labelled file, the dev
    set, read as ``seqlab eval`` reads it: in ``encoding``, None for the model's ``data.encoding``; ``offsets``:
    the unit of a span JSONL or Label Studio file's offsets, None for the model's ``data.offsets``), a
    temperature fitted there; a tagger with no temperature yet (and ``calibrate``) gets one fitted on its dev set
    when that file is here. Every other member is kept byte for byte. Returns the new manifest."""
    from seqlab.apps.card import about_of, describe

    path, out = Path(path), Path(out)
    with unpacked(path) as run_dir:
        model = _load(run_dir)
    with reading(path) as zf:
        checked, tree = check_model_file(zf, path)
        members = {name: b"".join(stream(zf, checked.entries[name], name, str(path)))
                   for name in checked.manifest["members"]}
    old_card = json.loads(members[rundir.CARD]) if rundir.CARD in members else None
    if calibrate_on:
        if model.task != "tagging":
            raise SeqlabError(f"{path}: calibration is for taggers; this is a {model.task} model")
        from seqlab.tagging.calibration import calibrate as fit
        from seqlab.tagging.gold import read_gold

        model, fitted = fit(model, read_gold(model.config.data, calibrate_on, encoding=encoding, offsets=offsets),
                            strict=True)
        members[rundir.CALIBRATION] = json.dumps(fitted, indent=2).encode("utf-8")
    measure = checked.manifest.get("measure") or "F1"
    recorded = {split: measure_report(measure, value) for split, value in
                (checked.manifest.get("scores") or {}).items() if isinstance(value, (int, float))}
    calibration = members.get(rundir.CALIBRATION)
    added = describe(model, tree, recorded, about_of(old_card) | (about or {}), calibrate=calibrate,
                     calibration=json.loads(calibration) if calibration is not None else None)
    members.update({name: json.dumps(value, indent=2).encode("utf-8") for name, value in added.items()})
    manifest = dict(checked.manifest, members={name: sha256_hex(data) for name, data in sorted(members.items())},
                    sizes={name: len(data) for name, data in sorted(members.items())})
    _write(out, manifest, members)
    return manifest


def _deflate(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    """Write one member deflated, or stored when deflate would shrink it past what loading accepts
    (:data:`~seqlab.apps.model_file.MAX_RATIO`; a table of zeros deflates about 1,000 times)."""
    method = zipfile.ZIP_DEFLATED
    if len(data) > RATIO_FLOOR:
        packer = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
        if len(data) > MAX_RATIO * (len(packer.compress(data)) + len(packer.flush())):
            method = zipfile.ZIP_STORED
    zf.writestr(name, data, compress_type=method)
