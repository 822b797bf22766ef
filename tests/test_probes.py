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


def test_a_probe_killed_at_its_bound_is_a_hang_or_a_memory_blow_up():
    assert sweep.classify(sweep.Result(-9, "", "", killed="time")) == "hang"
    assert sweep.classify(sweep.Result(-9, "", "Traceback (most recent call last):\n", killed="memory")) == "memory"


def _sleep(argv):
    import time

    time.sleep(float(argv[0]))
    return 0


def _grow(argv):
    hoard = bytearray(int(argv[0]) << 20)
    hoard[::4096] = b"x" * len(hoard[::4096])  # touch every page, so that it is resident
    import time

    time.sleep(30)  # held long enough for a busy parent to see it
    return 0


def _echo(argv):
    import os

    os.write(1, os.read(0, 100).upper())  # the descriptors: pytest has put its own sys.stdin and sys.stdout
    return 3


def test_a_forked_probe_reads_its_stdin_and_is_stopped_at_its_bounds(tmp_path):
    from probes.runner import fork_run

    stdin = tmp_path / "in.txt"
    stdin.write_text("paris\n")
    echoed = fork_run(["x"], tmp_path, stdin=stdin, entry=_echo)
    assert (echoed.rc, echoed.out, echoed.killed) == (3, "PARIS\n", "")
    assert fork_run(["30"], tmp_path, timeout=0.5, entry=_sleep).killed == "time"
    assert fork_run(["800"], tmp_path, max_mb=100, entry=_grow).killed == "memory"


def _expanded(node, seen=None) -> int:
    """How many values a composed YAML node holds once every alias is written out."""
    import yaml

    seen = {} if seen is None else seen
    if id(node) not in seen:
        children = node.value if isinstance(node, yaml.SequenceNode) else \
            [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else []
        seen[id(node)] = 1 + sum(_expanded(child, seen) for child in children)
    return seen[id(node)]


def test_the_yaml_probe_lists_build_and_their_bombs_are_real(tmp_path):
    import yaml

    from probes import configs
    from seqlab.core.strict import dump_config
    from seqlab.tagging.config import load_config

    base = (inputs.NER / "tiny.yaml").read_text()
    pwned = tmp_path / "PWNED"
    files, items = configs.config_files(base, pwned), configs.set_items(pwned)
    run_config = dump_config(load_config(inputs.NER / "tiny.yaml"))  # as seqlab train writes a run's config.yaml
    in_models = {**configs.model_configs(run_config, pwned), **configs.model_ranges(run_config)}
    assert len(files) >= 20 and len(items) >= 10 and len(in_models) >= 7
    assert all(says for _, says in [*files.values(), *items.values(), *in_models.values()])
    assert all(text != base for text, _ in files.values()) and all(text != run_config for text, _ in in_models.values())
    assert _expanded(yaml.compose(configs.laughs(flow=True))) > 10**9
    assert _expanded(yaml.compose(configs.laughs())) > 10**9
    assert yaml.safe_load(configs.legal_aliases(base)) == yaml.safe_load(base)
    train = tmp_path / "train.txt"
    train.write_text(configs.chunk_sentences(120))
    assert len([b for b in train.read_text().split("\n\n") if b.strip()]) == 120
    assert {expect for _, expect, _ in configs.smoke_cases(train).values()} == {"ok", "clear-error"}


def test_the_defence_probe_lists_build():
    from probes import defences
    from seqlab.cli import parser

    lines = defences.tokenizer_lines()
    assert len(lines) >= 15 and len(lines["60 KB of _+ then @"]) > 60_000
    for name, (call, expect, want) in defences.API_CASES.items():
        assert callable(call) and expect in ("ok", "clear-error"), name
        assert isinstance(want, str) if expect == "clear-error" else want is not None, name
    verbs = defences.verb_parsers(parser())
    assert {("train",), ("score", "conll"), ("features", "ls", "build"), ("serve",)} <= set(verbs)
    check = defences.positional_help(verbs[("package",)])
    assert check(sweep.Result(0, "usage: seqlab package\n\npositional arguments:\n  run  a run directory\n", "")) is None
    assert "no help" in check(sweep.Result(0, "usage: seqlab package\n\npositional arguments:\n  run\n  -h\n", ""))
    tokens = defences.check_tokens("Paris , Bonn")
    assert tokens(sweep.Result(0, "Paris B-LOC\n, O\nBonn B-LOC\n", "")) is None
    assert tokens(sweep.Result(0, "Paris B-LOC\n", "")) is not None
