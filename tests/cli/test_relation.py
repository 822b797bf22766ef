"""``seqlab train/eval/classify/explain/score semeval`` for relation runs, and their error paths (exit 2, no traceback)."""
from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from seqlab.cli import main
from tests.conftest import forget_new_log_handlers

FIXTURE = Path(__file__).parents[1] / "fixtures" / "semeval"
TINY = FIXTURE / "tiny.yaml"


def run_cli(argv: list[str], stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    with forget_new_log_handlers(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SEQLAB_DATA", str(FIXTURE))
        run = tmp_path_factory.mktemp("relcli") / "run"
        code, out, _ = run_cli(["train", str(TINY), "--set", "train.epochs=1", "--output", str(run), "--quiet"])
    assert code == 0 and f"run directory: {run}" in out
    return run


def test_train_writes_the_run_directory(run_dir):
    for name in ("config.yaml", "vocabs.json", "model.pt", "checkpoint.pt", "metrics.json", "train.log",
                 "dev.answers.txt", "test.answers.txt", "test.report.txt"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "config.yaml").read_text().startswith("data:") and "task: relation" in (run_dir / "config.yaml").read_text()
    assert json.loads((run_dir / "metrics.json").read_text())["selected_on"] == "dev"


def test_a_finished_run_trains_on_when_its_epochs_are_raised(run_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURE))
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    code, _, _ = run_cli(["train", "--resume", str(run), "--set", "train.epochs=2", "--quiet"])
    assert code == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["epochs"] == 2 and len(metrics["history"]) == 2
    assert "epochs: 2" in (run / "config.yaml").read_text() and "task: relation" in (run / "config.yaml").read_text()


def test_entity_markers_are_input_tokens_at_train_and_classify_time(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURE))
    run = tmp_path / "marked"
    code, _, _ = run_cli(["train", str(TINY), "--set", "train.epochs=1", "--set", "model.entity_markers=true",
                          "--output", str(run), "--quiet"])
    assert code == 0
    words = json.loads((run / "vocabs.json").read_text())["words"]["itos"]
    assert {"<e1>", "</e1>", "<e2>", "</e2>"} <= set(words)
    code, out, _ = run_cli(["classify", str(run), "-"], stdin="The <e1>crash</e1> caused an <e2>attack</e2> .\n",
                           monkeypatch=monkeypatch)
    assert code == 0 and out.startswith("1\t") and out.count("\n") == 1


def test_eval_prints_the_official_report(run_dir, tmp_path):
    code, out, _ = run_cli(["eval", str(run_dir), str(FIXTURE / "test.txt"), "--output", str(tmp_path / "a.txt")])
    assert code == 0 and "<<< The official score is (9+1)-way evaluation" in out
    assert len((tmp_path / "a.txt").read_text().splitlines()) == 6


def test_score_semeval_matches_eval(run_dir, tmp_path):
    run_cli(["eval", str(run_dir), str(FIXTURE / "test.txt"), "--output", str(tmp_path / "a.txt")])
    code, out, _ = run_cli(["score", "semeval", str(tmp_path / "a.txt"), str(FIXTURE / "test_key.txt")])
    _, evaluated, _ = run_cli(["eval", str(run_dir), str(FIXTURE / "test.txt"), "--output", str(tmp_path / "b.txt")])
    assert code == 0 and evaluated.startswith(out)


def test_classify_tsv_and_jsonl(run_dir, monkeypatch):
    code, out, _ = run_cli(["classify", str(run_dir), str(FIXTURE / "unlabelled.txt")])
    rows = [line.split("\t") for line in out.splitlines()]
    assert code == 0 and [r[0] for r in rows] == ["1", "2", "3"] and all(0 < float(r[2]) <= 1 for r in rows)
    code, out, _ = run_cli(["classify", str(run_dir), "-", "--format", "jsonl"],
                           stdin='9\t"The <e1>cup</e1> of <e2>tea</e2>."\n', monkeypatch=monkeypatch)
    record = json.loads(out)
    assert code == 0 and record["id"] == "9" and record["e1"] == "cup" and len(record["probabilities"]) == 19
    assert sum(record["probabilities"].values()) == pytest.approx(1.0, abs=1e-4)
    assert record["probabilities"][record["label"]] == record["confidence"]


def test_classify_reads_another_encoding_when_told_and_names_it_when_not(run_dir, tmp_path):
    latin = tmp_path / "latin1.txt"
    latin.write_bytes('1\t"The <e1>caf\u00e9</e1> of <e2>th\u00e9</e2>."\n'.encode("latin-1"))
    code, out, _ = run_cli(["classify", str(run_dir), str(latin), "--encoding", "latin-1", "--format", "jsonl"])
    assert code == 0 and json.loads(out)["e1"] == "caf\u00e9"
    code, _, err = run_cli(["classify", str(run_dir), str(latin)])
    assert code != 0 and "--encoding" in err and "Traceback" not in err


def test_a_packaged_relation_model_records_its_scores_and_classifies_as_its_run(run_dir, tmp_path, monkeypatch):
    import seqlab
    from seqlab.apps.model_file import read_manifest

    model = tmp_path / "rel.seqlab"
    code, _, _ = run_cli(["package", str(run_dir), "--out", str(model)])
    assert code == 0
    metrics = json.loads((run_dir / "metrics.json").read_text())
    manifest = read_manifest(model)
    assert manifest["task"] == "relation"
    assert manifest["scores"] == {"dev": metrics["dev"]["official_macro_f1"],
                                  "test": metrics["test"]["official_macro_f1"]}
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "nothing here"))
    sentence = "The <e1>crash</e1> caused an <e2>attack</e2> ."
    from_run, from_file = seqlab.load(run_dir, "cpu").classify(sentence), seqlab.load(model, "cpu").classify(sentence)
    assert (from_file.label, from_file.probabilities) == (from_run.label, from_run.probabilities)


def test_explain_writes_heat_maps_and_latent_types(run_dir, tmp_path):
    code, out, _ = run_cli(["explain", str(run_dir), str(FIXTURE / "test.txt"), "--out", str(tmp_path / "x")])
    assert code == 0 and len(out.splitlines()) == 3
    assert "Entity-aware attention" in (tmp_path / "x" / "attention.html").read_text()
    assert (tmp_path / "x" / "latent_types.md").read_text().count("\n| ") == 4  # header + 3 types
    assert (tmp_path / "x" / "latent_types_tsne.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("argv, stdin, message", [
    (["classify", "{run}", "-"], "The cat sat.\n", "<stdin>:1: expected exactly one <e1> tag"),
    (["classify", "{run}", "{fixture}/absent.txt"], None, "absent.txt: no such file"),
    (["classify", "{fixture}", "-"], "", "not a seqlab model"),
    (["eval", "{run}", "{fixture}/test_sentences.txt"], None, "has sentences without labels"),
    (["score", "semeval", "{fixture}/test_key.txt", "{fixture}/train.txt"], None, "train.txt:1: expected 'ID<TAB>LABEL'"),
    (["train", "{fixture}/tiny.yaml", "--set", "model.latent_type=2"], None, "did you mean 'latent_types'?"),
    (["train", "{fixture}/tiny.yaml", "--set", "model.heads=two"], None, "model.heads: expected int"),
    (["train", "--resume", "{tmp}"], None, "no checkpoint.pt there to resume from"),
    (["train", "--resume", "{tmp}", "--set", "train.epochs=9"], None, "no checkpoint.pt there to resume from"),
    (["train", "{fixture}/tiny.yaml", "--set", "data.train={tmp}/empty.txt", "--output", "{tmp}/x"], None,
     "empty.txt: holds no SemEval-2010 Task 8 sentences"),
    (["train", "{fixture}/tiny.yaml", "--set", "data.test={tmp}/empty.txt", "--output", "{tmp}/x"], None,
     "{tmp}/empty.txt: holds no SemEval-2010 Task 8 sentences"),
    (["eval", "{run}", "{tmp}/empty.txt"], None, "empty.txt: holds no SemEval-2010 Task 8 sentences"),
])
def test_error_paths_exit_2_without_traceback(run_dir, tmp_path, monkeypatch, argv, stdin, message):
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURE))
    (tmp_path / "config.yaml").write_text(TINY.read_text())  # a relation config but no checkpoint
    (tmp_path / "empty.txt").write_text("")
    argv = [a.format(run=run_dir, fixture=FIXTURE, tmp=tmp_path) for a in argv]
    message = message.format(tmp=tmp_path)
    code, _, err = run_cli(argv, stdin, monkeypatch)
    assert code == 2 and message in err and "Traceback" not in err, err


def test_relation_config_is_strict_about_its_top_level(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY.read_text().replace("task: relation", "task: relation\nmodle: {}"))
    code, _, err = run_cli(["train", str(bad)])
    assert code == 2 and "modle: unknown key; did you mean 'model'?" in err
