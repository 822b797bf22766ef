"""probes/: the fault sweep's own oracles (its gold files' scheme rewriting, its outcome classes, its input kinds)
and its command line; the sweep itself is run on purpose (``python -m probes.sweep``), not here."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from probes import inputs, sweep
from seqlab.data.schemes import convert

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("ours, theirs", [("iob2", "iob2"), ("bilou", "bilou"), ("iobes", "bioes")])
def test_the_gold_files_scheme_rewriting_matches_seqlabs(ours, theirs):
    tags = ["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-LOC", "I-ORG", "O", "I-MISC"]
    assert inputs._iob1_to(tags, ours) == convert(tags, theirs)


@pytest.mark.parametrize("rc, err, outcome", [
    (0, "", "ok"),
    (2, "seqlab: error: a.txt:3: expected 4 columns\n", "clear-error"),
    (2, "usage: seqlab train\nseqlab train: error: bad\n", "clear-error"),
    (1, "Traceback (most recent call last):\n  x\nValueError: y\n", "traceback"),
    (0, "Traceback (most recent call last):\n  x\nValueError: y\n", "traceback"),
    (1, "Killed\n", "unclear-error"),
    (2, "seqlab: error: one\nseqlab: error: two\n", "unclear-error"),
])
def test_outcomes_tell_a_clear_error_from_a_traceback_or_noise(rc, err, outcome):
    assert sweep.classify(sweep.Result(rc, "", err)) == outcome


def test_every_labelled_kind_a_tagger_reads_has_gold_tokens():
    kinds = inputs.labelled_kinds()
    assert len(kinds) >= 30 and all(k.tokens > 0 for k in kinds.values() if k.ok)


def test_the_sweep_starts_as_a_module_from_the_repository_root():
    done = subprocess.run([sys.executable, "-m", "probes.sweep", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("usage:") and "--no-tmpfs" in done.stdout, done.stderr


def test_forged_model_files_are_self_consistent_so_only_the_loaders_own_checks_refuse_them(tmp_path):
    import hashlib
    import json
    import zipfile

    from probes import hostile

    source = tmp_path / "m.seqlab"
    with zipfile.ZipFile(source, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"format": "seqlab-model", "members": {}}))
        zf.writestr("config.yaml", "model: {features: []}\n")
        zf.writestr("vocabs.json", '{"tags": {"itos": ["O"]}}')
    forged = hostile.forge(source, tmp_path / "f.seqlab", hostile._feature("/dev/zero"))
    with zipfile.ZipFile(forged) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        members = {name: zf.read(name) for name in zf.namelist() if name != "manifest.json"}
    assert manifest["members"] == {name: hashlib.sha256(data).hexdigest() for name, data in members.items()}
    assert manifest["sizes"] == {name: len(data) for name, data in members.items()}
    assert b"/dev/zero" in members["config.yaml"]


@pytest.mark.parametrize("status, answer, outcome", [
    (200, {"documents": []}, "ok"), (422, {"error": "text: bad"}, "clear-error"),
    (500, {"error": "internal error: RuntimeError"}, "traceback"), (0, None, "unclear-error"),
    (422, {"error": "two\nlines"}, "unclear-error"),
])
def test_serve_answers_are_classified_like_the_command_lines_outcomes(status, answer, outcome):
    from probes import hostile

    assert hostile._http_outcome(status, answer) == outcome
