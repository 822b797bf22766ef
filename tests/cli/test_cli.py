"""Tests for the ``seqlab`` command: each verb through ``main([...])``, and bad input as exit 2 without traceback."""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from seqlab.cli import main
from seqlab.core.strict import dump_config
from seqlab.data.conll import split_fields
from seqlab.tagging.config import load_config
from tests.conftest import forget_new_log_handlers

NER = Path(__file__).parents[1] / "fixtures" / "ner"
TINY = NER / "tiny.yaml"
FAST = ["--set", "train.epochs=1", "--set", "train.threads=1"]
LABEL = re.compile(r"^(O|[IB]-(PER|LOC|ORG|MISC))$")


@pytest.fixture(scope="module", autouse=True)
def data_env():
    """SEQLAB_DATA pointed at the tiny NER fixture for the whole module (the config's paths are relative)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SEQLAB_DATA", str(NER))
        yield NER


@pytest.fixture(autouse=True)
def _no_leaked_handlers():
    with forget_new_log_handlers():
        yield


@pytest.fixture(scope="module")
def trained(tmp_path_factory, data_env):
    """One run made by ``seqlab train CONFIG --set ... --output DIR --quiet``: (run dir, exit code, stdout)."""
    run = tmp_path_factory.mktemp("cli") / "run"
    out = io.StringIO()
    with forget_new_log_handlers(), contextlib.redirect_stdout(out):
        code = main(["train", str(TINY), *FAST, "--output", str(run), "--quiet"])
    return run, code, out.getvalue()


@pytest.fixture
def run_dir(trained) -> Path:
    return trained[0]


def read_columns(path: Path) -> list[list[list[str]]]:
    """Sentences of a CoNLL file as rows of fields, -DOCSTART- lines left out (read independently of seqlab)."""
    sentences, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if current:
                sentences.append(current)
            current = []
        else:
            current.append(fields)
    if current:
        sentences.append(current)
    return sentences


def single_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("seqlab: error: "), err
    return lines[0]


# ---------------------------------------------------------------- train


def test_train_makes_a_run_directory(trained):
    run, code, stdout = trained
    assert code == 0
    assert stdout.splitlines()[-1] == f"run directory: {run}"
    for name in ("config.yaml", "vocabs.json", "model.pt", "checkpoint.pt", "metrics.json", "train.log"):
        assert (run / name).is_file(), name
    assert load_config(run / "config.yaml").train.epochs == 1  # --set reached the saved config
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["epochs"] == 1 and len(metrics["history"]) == 1
    log = (run / "train.log").read_text()
    assert re.search(r"pretrained vectors for \d+ of \d+ corpus word types", log)  # logged while building
    assert log.index("run directory") < log.index("pretrained vectors") < log.index("epoch 1:")
    assert "min left" not in log  # one epoch: none to go


def test_resume_of_a_finished_run_just_finishes_again(run_dir, tmp_path, capsys):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    weights = (copy / "model.pt").read_bytes()
    (copy / "metrics.json").unlink()
    assert main(["train", "--resume", str(copy), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    metrics = json.loads((copy / "metrics.json").read_text())  # written again by the finishing step
    assert metrics["epochs"] == 1 and len(metrics["history"]) == 1  # no extra epoch was run
    assert (copy / "model.pt").read_bytes() == weights


def test_resume_with_set_is_an_error(run_dir, capsys):
    assert main(["train", "--resume", str(run_dir), "--set", "train.threads=2", "--set", "train.lr=0.5"]) == 2
    line = single_error_line(capsys.readouterr().err)
    assert "--set train.lr=0.5 cannot be combined with --resume" in line
    assert "only train.threads, train.device, which say where it runs, may change" in line
    assert "train.epochs, train.patience may be raised" in line


def test_resume_with_more_epochs_equals_the_longer_run_from_the_start(tmp_path, caplog):
    decay = ["--set", "train.lr_decay=0.8", "--set", "train.threads=1", "--quiet"]  # the decay goes on across the stop
    longer, extended = tmp_path / "longer", tmp_path / "extended"
    with forget_new_log_handlers(), contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", str(TINY), "--set", "train.epochs=3", *decay, "--output", str(longer)]) == 0
        assert main(["train", str(TINY), "--set", "train.epochs=1", *decay, "--output", str(extended)]) == 0
    assert main(["train", "--resume", str(extended), "--set", "train.epochs=3", "--set", "train.threads=2",
                 "--quiet"]) == 0
    assert f"extending {extended}: train.epochs 1 -> 3" in caplog.text
    saved = load_config(extended / "config.yaml").train
    assert saved.epochs == 3 and saved.threads == 1  # the raise is recorded, where it ran is not
    a, b = json.loads((longer / "metrics.json").read_text()), json.loads((extended / "metrics.json").read_text())
    assert b["epochs"] == 3 and [e["lr"] for e in b["history"]] == pytest.approx([0.016, 0.0128, 0.01024])
    for key in ("loss", "dev_score", "lr"):
        assert [e[key] for e in a["history"]] == [e[key] for e in b["history"]], key
    assert a["test"] == b["test"]
    assert (longer / "test.predictions.txt").read_text() == (extended / "test.predictions.txt").read_text()
    assert archive_weights_equal(longer, extended)


def archive_weights_equal(a: Path, b: Path) -> bool:
    from seqlab.core import rundir

    wa, wb = rundir.load_checkpoint(a)["model"], rundir.load_checkpoint(b)["model"]
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def test_resume_cannot_lower_epochs_or_patience(run_dir, tmp_path, capsys):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    before = (copy / "config.yaml").read_bytes()
    assert main(["train", "--resume", str(copy), "--set", "train.patience=1"]) == 2
    line = single_error_line(capsys.readouterr().err)
    assert "--set train.patience=1: a resumed run's train.patience can only be raised" in line
    assert (copy / "config.yaml").read_bytes() == before


def test_resume_may_move_a_run_to_other_threads_or_device(run_dir, tmp_path, capsys):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    (copy / "metrics.json").unlink()
    assert main(["train", "--resume", str(copy), "--quiet", "--set", "train.threads=2", "--set", "train.device=cpu"]) == 0
    assert json.loads((copy / "metrics.json").read_text())["epochs"] == 1
    assert load_config(copy / "config.yaml").train.threads == load_config(run_dir / "config.yaml").train.threads


# ---------------------------------------------------------------- bad input


def bad_conll(tmp_path: Path) -> Path:
    path = tmp_path / "bad.txt"
    path.write_text("EU NNP I-NP I-ORG\nrejects VBZ I-NP O\nGerman JJ I-MISC\n\n", encoding="utf-8")
    return path


def bad_tag(tmp_path: Path) -> Path:
    path = tmp_path / "badtag.txt"
    path.write_text("EU NNP I-NP I-ORG\n\nPeter NNP I-NP I-PER\nBlackburn NNP I-NP X-PER\n", encoding="utf-8")
    return path


def bad_prediction(tmp_path: Path) -> Path:
    path = tmp_path / "pred.txt"
    path.write_text("EU I-ORG I-ORG\nrejects O\n", encoding="utf-8")
    return path


def unknown_key_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "typo.yaml"
    path.write_text(TINY.read_text(encoding="utf-8").replace("train:\n", "trian:\n"), encoding="utf-8")
    return path


def bad_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "broken.yaml"
    path.write_text("data: [train\n", encoding="utf-8")
    return path


def empty_file(tmp_path: Path) -> Path:
    path = tmp_path / "empty.txt"
    path.write_text("-DOCSTART- -X- -X- O\n\n", encoding="utf-8")
    return path


def duplicate_key_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "twice.yaml"
    path.write_text(TINY.read_text(encoding="utf-8").replace("  epochs: 3\n", "  epochs: 3\n  epochs: 5\n"),
                    encoding="utf-8")
    return path


def binary_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    return path


LAUGHS = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}' if i else 'ha'] * 9)}]\n" for i in range(9))


def alias_bomb_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "laughs.yaml"
    path.write_text(TINY.read_text(encoding="utf-8") + LAUGHS, encoding="utf-8")
    return path


def alias_bomb_model(tmp_path: Path) -> Path:
    """A model folder whose config.yaml is a "billion laughs" document."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.yaml").write_text(LAUGHS, encoding="utf-8")
    return model


def unseen_type(tmp_path: Path) -> Path:
    path = tmp_path / "dev_foo.txt"
    path.write_text((NER / "dev.txt").read_text(encoding="utf-8").replace("I-PER", "I-FOO"), encoding="utf-8")
    return path


BAD_INPUTS = {
    "a dev type training never shows": (
        lambda t, r: ["train", str(TINY), *FAST, "--set", f"data.dev={unseen_type(t)}", "--output", str(t / "x")],
        r"data\.dev: .*dev_foo\.txt, sentence \d+: type 'FOO' never occurs in the training data \(.*train\.txt: "
        r"LOC, MISC, ORG, PER\)"),
    "a key given twice": (
        lambda t, r: ["train", str(duplicate_key_yaml(t)), "--output", str(t / "x")],
        r"twice\.yaml:21:3: not valid YAML: duplicate key 'epochs' \(first given on line 20\)"),
    "a config that is not text": (
        lambda t, r: ["train", str(binary_yaml(t)), "--output", str(t / "x")],
        r"binary\.yaml: not valid UTF-8 \(byte 0x89 at offset 0\)"),
    "an empty dev file": (
        lambda t, r: ["train", str(TINY), *FAST, "--set", f"data.dev={empty_file(t)}", "--output", str(t / "x")],
        r"data\.dev: .*empty\.txt: no sentences \(the file is empty, or holds only blank and -DOCSTART- lines\)"),
    "an empty training file": (
        lambda t, r: ["train", str(TINY), *FAST, "--set", f"data.train={empty_file(t)}", "--output", str(t / "x")],
        r"data\.train: .*empty\.txt: no sentences"),
    "eval an empty file": (lambda t, r: ["eval", str(r), str(empty_file(t))], r"empty\.txt: no sentences"),
    "unknown --set key": (
        lambda t, r: ["train", str(TINY), "--set", "model.hiden=3", "--output", str(t / "x")],
        r"model\.hiden: unknown key; did you mean 'hidden'\?"),
    "unknown key in the file": (
        lambda t, r: ["train", str(unknown_key_yaml(t)), "--output", str(t / "x")],
        r"trian: unknown key; did you mean 'train'\?"),
    "an alias bomb in the config": (
        lambda t, r: ["train", str(alias_bomb_yaml(t)), "--output", str(t / "x")],
        r"laughs\.yaml:\d+:\d+: refused: aliases expand it to more than 100000 values"),
    "an alias bomb in a --set value": (
        lambda t, r: ["train", str(TINY), "--set", "model.hidden={" + LAUGHS.replace("\n", ", ")[:-2] + "}",
                      "--output", str(t / "x")],
        r"--set model\.hidden: aliases expand it to more than 100000 values"),
    "an alias bomb in a model's config.yaml": (
        lambda t, r: ["eval", str(alias_bomb_model(t)), str(NER / "dev.txt")],
        r"model/config\.yaml:\d+:\d+: refused: aliases expand it"),
    "a config nested 10,000 deep": (
        lambda t, r: ["train", str(TINY), "--set", "model.hidden=" + "[" * 10_000 + "]" * 10_000,
                      "--output", str(t / "x")],
        r"--set model\.hidden: nested deeper than 64 levels"),
    "a seed beyond 2**32 - 1": (
        lambda t, r: ["train", str(TINY), "--set", f"train.seed={10**30}", "--output", str(t / "x")],
        r"train\.seed: expected an integer from -4294967295 to 4294967295, got 10{30}"),
    "a negative seed": (
        lambda t, r: ["train", str(TINY), "--set", "train.seed=-1", "--output", str(t / "x")],
        r"train\.seed: expected a seed from 0 to 4294967295, got -1"),
    "wrong type": (
        lambda t, r: ["train", str(TINY), "--set", "model.hidden=big", "--output", str(t / "x")],
        r"model\.hidden: expected int, got str 'big'"),
    "--set without =": (
        lambda t, r: ["train", str(TINY), "--set", "model.hidden", "--output", str(t / "x")],
        r"expected KEY=VALUE"),
    "missing config": (
        lambda t, r: ["train", str(t / "nope.yaml"), "--output", str(t / "x")],
        r"config file '.*nope\.yaml' does not exist"),
    "invalid YAML": (
        lambda t, r: ["train", str(bad_yaml(t)), "--output", str(t / "x")],
        r"broken\.yaml:\d+:\d+: not valid YAML"),
    "no config": (lambda t, r: ["train", "--quiet"], r"give a CONFIG file"),
    "malformed data line": (
        lambda t, r: ["train", str(TINY), *FAST, "--set", f"data.train={bad_conll(t)}", "--output", str(t / "x")],
        r"bad\.txt:3: expected 4 columns"),
    "malformed tag in data": (
        lambda t, r: ["train", str(TINY), *FAST, "--set", f"data.train={bad_tag(t)}", "--output", str(t / "x")],
        r"badtag\.txt:4: malformed tag 'X-PER'"),
    "missing data file": (
        lambda t, r: ["train", str(TINY), *FAST, "--set", "data.train=missing.txt", "--output", str(t / "x")],
        r"data\.train: file '.*missing\.txt' does not exist .*SEQLAB_DATA"),
    "run exists": (lambda t, r: ["train", str(TINY), "--output", str(r)], r"already holds a run; use --resume"),
    "resume a non-run": (lambda t, r: ["train", "--resume", str(t)], r"config\.yaml' does not exist"),
    "eval on a non-run": (
        lambda t, r: ["eval", str(t), str(NER / "dev.txt")], r"not a seqlab model \(no config\.yaml\)"),
    "eval a missing file": (lambda t, r: ["eval", str(r), str(t / "none.txt")], r"none\.txt: no such file"),
    "eval a malformed file": (lambda t, r: ["eval", str(r), str(bad_conll(t))], r"bad\.txt:3: expected 4 columns"),
    "tag a missing file": (lambda t, r: ["tag", str(r), str(t / "none.txt")], r"none\.txt: no such file"),
    "tag with a non-run": (
        lambda t, r: ["tag", str(t), str(NER / "dev.txt")], r"not a seqlab model"),
    "score a malformed file": (
        lambda t, r: ["score", "conll", str(bad_prediction(t))], r"pred\.txt:2: expected 3 columns"),
    "score a missing file": (lambda t, r: ["score", "conll", str(t / "none.txt")], r"none\.txt: no such file"),
}


KNOWN_BUGS: dict[str, str] = {}


@pytest.mark.parametrize("case", [
    pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[case])) if case in KNOWN_BUGS else case
    for case in BAD_INPUTS
])
def test_bad_input_is_exit_2_with_one_line(case, tmp_path, run_dir, capsys):
    argv, pattern = BAD_INPUTS[case]
    assert main(argv(tmp_path, run_dir)) == 2
    captured = capsys.readouterr()
    line = single_error_line(captured.err)
    assert re.search(pattern, line), line
    assert captured.out == ""
    assert not (tmp_path / "x").exists()  # a run that could not start leaves no directory behind


def test_a_run_that_cannot_start_removes_its_run_directory_but_no_parent(tmp_path, capsys):
    out = tmp_path / "new" / "deeper" / "run"
    assert main(["train", str(TINY), *FAST, "--set", "data.train=missing.txt", "--output", str(out)]) == 2
    assert "missing.txt" in single_error_line(capsys.readouterr().err)
    assert not out.exists() and list(out.parent.iterdir()) == []  # another run may be starting in a parent


@pytest.mark.parametrize("verb", [["eval", "RUN", str(NER / "dev.txt")], ["tag", "RUN"]])
@pytest.mark.parametrize("size", ["0", "-3", "ten"])
def test_batch_size_must_be_a_positive_integer(verb, size, run_dir, capsys):
    argv = [str(run_dir) if a == "RUN" else a for a in verb]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--batch-size", size])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --batch-size: expected a positive integer" in err and "Traceback" not in err


# ---------------------------------------------------------------- score and eval


def test_score_conll_prints_conllevals_report(tmp_path, capsys):
    path = tmp_path / "pred.txt"
    path.write_text(
        "-DOCSTART- -X- O O\n\n"
        "EU NNP I-ORG I-ORG\nrejects VBZ O O\nGerman JJ I-MISC O\ncall NN O O\n\n"
        "Peter NNP I-PER I-PER\nBlackburn NNP I-PER I-LOC\n",
        encoding="utf-8",
    )
    assert main(["score", "conll", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # 6 tokens + the -DOCSTART- line; gold EU/ORG German/MISC Peter Blackburn/PER, found EU/ORG Peter/PER Blackburn/LOC
    assert lines[0] == "processed 7 tokens with 3 phrases; found: 3 phrases; correct: 1."
    assert lines[1] == "accuracy:  71.43%; precision:  33.33%; recall:  33.33%; FB1:  33.33"
    assert lines[2:] == [
        "              LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  1",
        "             MISC: precision:   0.00%; recall:   0.00%; FB1:   0.00  0",
        "              ORG: precision: 100.00%; recall: 100.00%; FB1: 100.00  1",
        "              PER: precision:   0.00%; recall:   0.00%; FB1:   0.00  1",
    ]


def test_eval_prints_the_report_and_writes_token_gold_pred(run_dir, tmp_path, capsys):
    out = tmp_path / "dev.pred.txt"
    dev = NER / "dev.txt"
    assert main(["eval", str(run_dir), str(dev), "--output", str(out), "--batch-size", "2"]) == 0
    report = capsys.readouterr().out
    gold_sentences = read_columns(dev)
    n_tokens = sum(len(s) for s in gold_sentences)
    assert report.splitlines()[0].startswith(f"processed {n_tokens} tokens with ")
    assert report.splitlines()[-1] == f"predictions written to {out}"
    written = read_columns(out)
    assert all(len(row) == 3 for s in written for row in s)
    assert [[row[0] for row in s] for s in written] == [[row[0] for row in s] for s in gold_sentences]
    assert [[row[1] for row in s] for s in written] == [[row[-1] for row in s] for s in gold_sentences]
    assert all(LABEL.match(row[2]) for s in written for row in s)
    # The file scores as the report said: score conll reads back what eval wrote.
    assert main(["score", "conll", str(out)]) == 0
    assert capsys.readouterr().out == report.rsplit("predictions written to", 1)[0]


def _layouts(tmp_path: Path) -> dict[str, Path]:
    """The fixture's dev file in the layouts of public NER files: token TAG (space, TAB), IOB2 tags, TAG token,
    -DOCSTART- lines without a blank line after them, and whitespace-only tokens in a TAB file."""
    from seqlab.data.schemes import convert

    sentences = [[(row[0], row[-1]) for row in s] for s in read_columns(NER / "dev.txt")]
    iob2 = [list(zip([w for w, _ in s], convert([t for _, t in s], "iob2"))) for s in sentences]
    files = {
        "space": "\n\n".join("\n".join(f"{w} {t}" for w, t in s) for s in iob2),
        "tab": "\n\n".join("\n".join(f"{w}\t{t}" for w, t in s) for s in iob2),
        "docstart": "\n\n".join("-DOCSTART- O\n" + "\n".join(f"{w} {t}" for w, t in s) for s in iob2),
        "tag_first": "\n\n".join("\n".join(f"{t} {w}" for w, t in s) for s in iob2),
        "whitespace_tokens": "\n\n".join("\n".join(f"{w}\t{t}" for w, t in s) + "\n \tO\n\u00a0\tO" for s in iob2),
    }
    for name, text in files.items():
        (tmp_path / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
    return {name: tmp_path / f"{name}.txt" for name in files}


def test_eval_reads_public_layouts_in_the_gold_files_scheme(run_dir, tmp_path, capsys):
    """token TAG files (space or TAB), IOB2, -DOCSTART- anywhere, TAG token with --columns, whitespace-only
    tokens: each is scored as the 4-column IOB1 original is, with predictions written in IOB2."""
    files = _layouts(tmp_path)
    assert main(["eval", str(run_dir), str(NER / "dev.txt"), "--output", str(tmp_path / "gold.pred")]) == 0
    original = capsys.readouterr().out.splitlines()[2:-1]  # the per-type lines (accuracy depends on the scheme)
    for name, path in files.items():
        extra = ["--columns", "ner,word"] if name == "tag_first" else []
        out = tmp_path / f"{name}.pred"
        assert main(["eval", str(run_dir), str(path), "--output", str(out), *extra]) == 0, name
        report = capsys.readouterr().out.splitlines()
        assert report[2:-1] == original, name
        rows = [split_fields(line) for line in out.read_text(encoding="utf-8").splitlines() if line]
        predicted = [row[2] for row in rows]
        assert not any(a == "O" and b.startswith("I-") for a, b in zip(["O", *predicted], predicted)), name  # IOB2
        assert all(len(row) == 3 for row in rows), name  # a space token stays one field (TAB-separated, as read)
    assert main(["score", "conll", str(tmp_path / "whitespace_tokens.pred")]) == 0
    assert "\u00a0\tO\t" in (tmp_path / "whitespace_tokens.pred").read_text(encoding="utf-8")  # written as read


def test_eval_names_the_fix_for_a_tag_first_file_and_for_bad_column_names(run_dir, tmp_path, capsys):
    files = _layouts(tmp_path)
    assert main(["eval", str(run_dir), str(files["tag_first"])]) == 2
    err = capsys.readouterr().err
    assert "the last column holds" in err and "name the columns (e.g. --columns ner,word)" in err
    assert main(["eval", str(run_dir), str(files["tag_first"]), "--columns", "ner,token"]) == 2
    err = capsys.readouterr().err
    assert "one of the model's column names ['word', 'pos', 'chunk', 'ner']" in err and "unknown: ['token']" in err


def test_eval_default_output_is_inside_the_run(run_dir, capsys):
    assert main(["eval", str(run_dir), str(NER / "dev.txt")]) == 0
    default = run_dir / "eval" / "dev.txt.pred.txt"
    assert capsys.readouterr().out.splitlines()[-1] == f"predictions written to {default}"
    assert default.is_file()


def test_tag_a_file(run_dir, tmp_path, capsys):
    path = tmp_path / "raw.txt"
    path.write_text("Peter Blackburn said so. EU rejects it.\n\nGerman lamb.\n", encoding="utf-8")
    assert main(["tag", str(run_dir), str(path), "--format", "conll"]) == 0
    blocks = capsys.readouterr().out.rstrip("\n").split("\n\n")
    tokens = [[line.split(" ")[0] for line in block.split("\n")] for block in blocks]
    assert tokens == [["Peter", "Blackburn", "said", "so", "."], ["EU", "rejects", "it", "."], ["German", "lamb", "."]]


# ---------------------------------------------------------------- as a program


def test_runs_as_a_program():
    helped = subprocess.run([sys.executable, "-m", "seqlab.cli", "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: seqlab")
    for verb in ("train", "eval", "score", "tag"):
        assert verb in helped.stdout
    failed = subprocess.run([sys.executable, "-m", "seqlab.cli", "score", "conll", "no/such/file.txt"],
                            capture_output=True, text=True, timeout=60)
    assert failed.returncode == 2
    assert failed.stderr == "seqlab: error: no/such/file.txt: no such file\n"
    script = shutil.which("seqlab")
    if script is not None:
        helped = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=60)
        assert helped.returncode == 0 and helped.stdout.startswith("usage: seqlab")


def test_gensim_info_logging_is_quiet_unless_verbose(tmp_path, capsys):
    gensim_log, missing = logging.getLogger("gensim"), str(tmp_path / "missing.txt")
    gensim_log.setLevel(logging.NOTSET)
    try:
        assert main(["-v", "score", "conll", missing]) == 2
        assert gensim_log.level == logging.NOTSET  # --verbose: everything, gensim's lifecycle events included
        assert main(["score", "conll", missing]) == 2
        assert gensim_log.level == logging.WARNING
    finally:
        gensim_log.setLevel(logging.NOTSET)


@pytest.mark.parametrize("verb", ["eval", "tag"])
def test_a_folder_where_a_file_is_expected_is_named_as_a_folder(verb, run_dir, tmp_path, capsys):
    assert main([verb, str(run_dir), str(tmp_path)]) == 2
    assert single_error_line(capsys.readouterr().err) == f"seqlab: error: {tmp_path}: a folder, not a file"


def test_a_log_that_is_not_a_terminal_gets_progress_lines_not_a_bar(tmp_path, capsys, caplog, monkeypatch):
    from seqlab.core import trainer

    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", str(TINY), "--set", "train.epochs=2", "--set", "train.batch_size=1",
                     "--output", str(tmp_path / "run")]) == 0
    assert "epoch 1/2" not in capsys.readouterr().err  # no bar drawn with carriage returns
    assert re.search(r"epoch 1: .*; about \d+ s left \(1 of 2 epochs done\)", caplog.text)
    assert not re.search(r"epoch 1/2: \d+%", caplog.text)  # an epoch shorter than a minute: no progress line
    caplog.clear()
    monkeypatch.setattr(trainer, "PROGRESS_EVERY_SECONDS", 0.0)  # a line whenever the bar would be drawn
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", str(TINY), "--set", "train.epochs=2", "--set", "train.batch_size=1",
                     "--output", str(tmp_path / "run2")]) == 0
    lines = re.findall(r"epoch 1/2: (\d+)% \((\d) of 5 sentences\), loss [\d.]+, \d+ sent/s; about \d+ s left",
                       caplog.text)
    assert lines and lines[0][:2] == ("20", "1")  # the first one after one sentence: the time left already



def _parsers(p: argparse.ArgumentParser, name: str = "seqlab") -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(name, p)]
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for verb, sub in action.choices.items():
                found += _parsers(sub, f"{name} {verb}")
    return found


def test_every_positional_argument_has_a_help_text():
    from seqlab.cli import parser

    missing = [f"{name} {a.dest}" for name, p in _parsers(parser()) for a in p._actions
               if not a.option_strings and not isinstance(a, argparse._SubParsersAction) and not a.help]
    assert missing == []


@pytest.mark.parametrize("verb, shown", [
    (["tag"], ["--format {conll,jsonl,inline", "default: conll", "--batch-size BATCH_SIZE", "default: 100"]),
    (["serve"], ["--port PORT", "default: 8080", "(default: 1000000)"]),
    (["eval"], ["model_dir", "a run directory, a .seqlab file or an installed model's name"]),
    (["inspect"], ["a .seqlab model file"]),
    (["score", "conll"], ["columns 'token ... gold pred'"]),
])
def test_help_says_what_each_argument_is_and_its_default(verb, shown, capsys):
    with pytest.raises(SystemExit):
        main([*verb, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for text in shown:
        assert text in out, out
    assert "(default: None)" not in out and "(default: False)" not in out


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_a_port_out_of_range_is_an_argument_error(port, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["serve", "model", "--port", port])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --port: expected a port from 0 to 65535 (0: any free one), got {port}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("stream, argv, name", [
    ("stdin", ["tag", "RUN"], "standard input"),
    ("stdout", ["tag", "RUN", str(NER / "dev.txt")], "standard output"),
])
def test_a_closed_standard_stream_is_one_error_line(stream, argv, name, run_dir, monkeypatch, capsys):
    monkeypatch.setattr(sys, stream, None)  # how Python starts with `<&-` or `>&-`
    assert main([str(run_dir) if a == "RUN" else a for a in argv]) == 2
    assert single_error_line(capsys.readouterr().err) == (
        f"seqlab: error: {name}: closed when seqlab started (redirect it instead: < FILE, > FILE, > /dev/null)")


def test_a_closed_standard_output_from_the_shell_is_one_error_line(run_dir):
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m seqlab tag {run_dir} {NER / 'dev.txt'} >&-"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert single_error_line(done.stderr).startswith("seqlab: error: standard output: closed when seqlab started")


def test_two_training_processes_log_each_message_once(tmp_path):
    done = subprocess.run([sys.executable, "-m", "seqlab", "train", str(TINY), "--nproc", "2", *FAST, "--quiet",
                           "--output", str(tmp_path / "run")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SEQLAB_DATA": str(NER), "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line.split(" ", 1)[1] for line in done.stderr.splitlines() if re.match(r"\d\d:\d\d:\d\d (INFO|WARN)", line)]
    assert any("pretrained vectors for" in line for line in lines)
    assert len(lines) == len(set(lines)), "\n".join(lines)


def test_the_command_line_starts_without_torch():
    """`seqlab --help` (and parsing any verb's arguments) imports neither torch nor scikit-learn: 0.2 s, not 1–3 s."""
    import subprocess
    import sys

    probe = ("import sys, seqlab.cli; seqlab.cli.parser().parse_args(['train', 'x.yaml']); "
             "print(sorted(m for m in ('torch', 'sklearn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_score_runs_without_torch_or_scikit_learn(tmp_path):
    """`seqlab score conll FILE` scores without importing torch or scikit-learn (seqeval's metrics package
    imports scikit-learn: a second or more of start-up)."""
    import subprocess
    import sys

    scored = tmp_path / "pred.txt"
    scored.write_text("EU B-ORG B-ORG\nrejects O O\nGerman B-MISC I-MISC\n\n", encoding="utf-8")
    probe = ("import sys, contextlib, io, seqlab.cli as c\nwith contextlib.redirect_stdout(io.StringIO()):\n"
             f"    c.main(['score', 'conll', {str(scored)!r}])\n"
             "print(sorted(m for m in ('torch', 'sklearn', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("argv, verb", [(["tag", "m", "f"], "tag"), (["-v", "eval", "m", "f"], "eval"), ([], None),
                                        (["--help"], None), (["-h", "tag"], None), (["-v"], None)])
def test_the_verb_is_the_first_item_that_is_no_option(argv, verb):
    from seqlab.cli import _verb

    assert _verb(argv) == verb


@pytest.mark.parametrize("verb", ["tag", "eval", "train", "convert", "export", "serve", "features"])
def test_a_verb_in_a_module_of_its_own_parses_as_with_every_verb(verb):
    """`seqlab VERB` builds only its module's parsers: the same help, with no other verb's module imported for it."""
    from seqlab.cli import parser

    def verbs(p):
        return p._subparsers._group_actions[0].choices

    lean, full = verbs(parser(verb)), verbs(parser())
    assert verb in lean and set(lean) < set(full)
    assert lean[verb].format_help() == full[verb].format_help()


def test_dry_run_prints_the_resolved_config_and_trains_nothing(tmp_path, capsys):
    child = tmp_path / "child.yaml"
    child.write_text(f"base: {TINY}\nmodel: {{hidden: 7}}\n", encoding="utf-8")
    out = tmp_path / "run"
    assert main(["train", str(child), "--set", "train.epochs=2", "--dry-run", "--output", str(out)]) == 0
    tree = __import__("yaml").safe_load(capsys.readouterr().out)
    assert tree["model"]["hidden"] == 7 and tree["train"]["epochs"] == 2 and "base" not in tree
    assert tree == __import__("yaml").safe_load(dump_config(load_config(child, ["train.epochs=2"])))
    assert not out.exists()
