"""seqlab summarize: run directories made by hand, with figures worked out by hand."""
from __future__ import annotations

import json

import pytest
import torch

from seqlab.core import rundir
from seqlab.cli import main
from seqlab.core.errors import SeqlabError
from seqlab.apps.summarize import mean_std, read_run, render, summarize

TAGGER = "data: {train: t.txt, dev: d.txt, test: e.txt}\ntrain: {seed: %d, lr_decay: %s}\n"
RELATION = "task: relation\ndata: {train: t.txt}\ntrain: {seed: %d}\n"


def tagger_run(path, seed, f1, *, lr_decay="0.95", precision=None, per=None):
    path.mkdir()
    (path / "config.yaml").write_text(TAGGER % (seed, lr_decay))
    history = [{"epoch": e, "dev_score": 90.0 + e, "train_seconds": 1800.0} for e in (1, 2)]
    test = {"precision": precision or f1, "recall": f1, "f1": f1,
            "per_type": {t: {"f1": v} for t, v in (per or {"PER": f1, "LOC": f1}).items()}}
    (path / "metrics.json").write_text(json.dumps({"best_epoch": 2, "epochs": 2, "history": history,
                                                   "dev": {"f1": 92.0}, "test": test}))
    return path


def test_three_seeds_give_mean_and_sample_std(tmp_path):
    runs = [tagger_run(tmp_path / f"s{s}", s, f1) for s, f1 in ((1, 90.0), (2, 90.5), (3, 91.0))]
    summary = summarize(runs)
    assert summary["finished"] == 3 and summary["config_differences"] == {}  # seeds alone differ
    mean, std = summary["mean_std"]["test_f1"]
    assert mean == pytest.approx(90.5) and std == pytest.approx(0.5)  # sqrt(((-.5)^2 + 0 + .5^2) / 2)
    assert summary["mean_std"]["train_hours"] == (pytest.approx(1.0), pytest.approx(0.0))  # 2 x 1800 s
    table = render(summary)
    assert "| mean ± std (3 finished) |  | 92.00 ± 0.00 | 90.50 ± 0.50 | 90.50 ± 0.50 | **90.50 ± 0.50** |" in table
    assert "| LOC | PER |" in table and "Config keys that differ" not in table


@pytest.mark.parametrize("best", ["best_score", "best_f1"])  # best_f1: a checkpoint of an older seqlab
def test_a_run_still_training_is_listed_from_its_checkpoint_and_left_out_of_the_mean(tmp_path, best):
    done = [tagger_run(tmp_path / f"s{s}", s, f1) for s, f1 in ((1, 90.0), (2, 91.0))]
    busy = tmp_path / "s3"
    busy.mkdir()
    (busy / "config.yaml").write_text(TAGGER % (3, "0.95"))
    dev = "dev_score" if best == "best_score" else "dev_f1"
    state = {"epoch": 7, best: 93.25, "best_epoch": 5, "bad_epochs": 2,
             "history": [{"epoch": e, dev: 93.0, "train_seconds": 360.0} for e in range(1, 8)]}
    rundir.save_checkpoint(busy, {"generator": torch.Generator().get_state(), "torch_rng": torch.get_rng_state(),
                                   "state": json.dumps(state)})
    row = read_run(busy)
    assert (row.finished, row.epochs, row.best_epoch, row.dev, row.train_hours) == (False, 7, 5, 93.25, pytest.approx(0.7))
    summary = summarize([*done, busy])
    assert summary["finished"] == 2 and summary["mean_std"]["test_f1"][0] == pytest.approx(90.5)
    assert "| " + str(busy) + " | 5 / 7 | 93.25 | no test score yet (left out of the mean) |" in render(summary)


def test_configs_that_differ_beyond_the_seed_are_named(tmp_path):
    a = tagger_run(tmp_path / "a", 1, 90.0)
    b = tagger_run(tmp_path / "b", 2, 90.0)
    c = tagger_run(tmp_path / "c", 1, 90.0, lr_decay="0.975")
    differences = summarize([a, b, c])["config_differences"]
    assert differences == {"train.lr_decay": {"0.95": [str(a), str(b)], "0.975": [str(c)]}}
    assert "- train.lr_decay: 0.95 (a, b); 0.975 (c)" in render(summarize([a, b, c]))


def test_relation_runs_use_the_official_macro_f1(tmp_path):
    runs = []
    for seed, f1 in ((1, 80.0), (2, 81.0)):
        path = tmp_path / f"r{seed}"
        path.mkdir()
        (path / "config.yaml").write_text(RELATION % seed)
        scores = {"official_macro_f1": f1, "macro_precision": f1 - 1, "macro_recall": f1 + 1,
                  "relations": {"Cause-Effect": {"f1": f1 + 5}}}
        (path / "metrics.json").write_text(json.dumps({"best_epoch": 3, "epochs": 4, "history": [],
                                                       "dev": {**scores, "official_macro_f1": 79.0}, "test": scores}))
        runs.append(path)
    summary = summarize(runs)
    assert summary["task"] == "relation"
    assert summary["mean_std"]["test_precision"][0] == pytest.approx(79.5)
    assert summary["per_type_mean_std"]["Cause-Effect"][0] == pytest.approx(85.5)
    assert "test macro-F1" in render(summary) and "**80.50 ± 0.71**" in render(summary)
    with pytest.raises(SeqlabError, match="mix taggers and relation classifiers"):
        summarize([runs[0], tagger_run(tmp_path / "t", 1, 90.0)])


def test_bad_run_directories_are_clear_errors(tmp_path):
    with pytest.raises(SeqlabError, match="not a directory"):
        read_run(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SeqlabError, match="no config.yaml there"):
        read_run(empty)
    (empty / "config.yaml").write_text(TAGGER % (1, "0.95"))
    with pytest.raises(SeqlabError, match="neither metrics.json nor checkpoint.pt"):
        read_run(empty)
    (empty / "metrics.json").write_text("{not json")
    with pytest.raises(SeqlabError, match=r"metrics.json:1:2: not valid JSON"):
        read_run(empty)
    (empty / "metrics.json").write_text(json.dumps({"history": [], "test": {"f1": 90.0}}))
    with pytest.raises(SeqlabError, match=r"metrics.json: not the metrics of a seqlab tagger run .*'precision'"):
        read_run(empty)


@pytest.mark.parametrize("recorded", [False, True])
def test_pos_runs_are_summarized_by_token_accuracy(tmp_path, recorded):
    from seqlab.core.scores import record

    dev, test = {"accuracy": 95.0}, {"accuracy": 94.0, "per_label": {"NOUN": {"f1": 93.0}}}
    if recorded:
        dev, test = record(95.0, "accuracy", dev), record(94.0, "accuracy", test)
    path = tmp_path / "pos"
    path.mkdir()
    (path / "config.yaml").write_text("data: {train: t.conllu, tag_scheme: token}\ntrain: {seed: 1}\n")
    (path / "metrics.json").write_text(json.dumps({"best_epoch": 1, "epochs": 1, "history": [], "dev": dev,
                                                   "test": test}))
    row = read_run(path)
    assert (row.measure, row.dev, row.test_f1, row.test_precision, row.per_type) == ("accuracy", 95.0, 94.0, None,
                                                                                      {"NOUN": 93.0})
    assert "94.00" in render(summarize([path]))


def test_mean_std_of_one_value_has_no_std():
    assert mean_std([90.0]) == (90.0, None)


def test_cli_prints_the_table_or_json_and_errors_without_a_traceback(tmp_path, capsys):
    runs = [str(tagger_run(tmp_path / f"s{s}", s, f1)) for s, f1 in ((1, 90.0), (2, 91.0))]
    assert main(["summarize", *runs]) == 0
    assert "**90.50 ± 0.71**" in capsys.readouterr().out
    assert main(["summarize", "--json", *runs]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mean_std"]["test_f1"][0] == pytest.approx(90.5) and out["rows"][1]["test_f1"] == 91.0
    assert main(["summarize", str(tmp_path / "missing")]) == 2
    assert "seqlab: error:" in capsys.readouterr().err


def test_a_checkpoint_without_the_loop_state_is_a_clear_error(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(TAGGER % (1, "0.95"))
    rundir.save_checkpoint(run, {"generator": torch.Generator().get_state(), "torch_rng": torch.get_rng_state(),
                                  "state": json.dumps({"epoch": 3})})
    with pytest.raises(SeqlabError, match=r"checkpoint.pt: not the checkpoint of a seqlab run .*'best_epoch'"):
        read_run(run)
    for state, message in (("{broken", r"checkpoint.pt \(its state\):1:2: not valid JSON"),
                           (7, r"checkpoint.pt: not the checkpoint of a seqlab run .*'state' is int")):
        rundir.save_checkpoint(run, {"generator": torch.Generator().get_state(),
                                      "torch_rng": torch.get_rng_state(), "state": state})
        with pytest.raises(SeqlabError, match=message):
            read_run(run)



def test_versus_compares_two_groups_of_seeds(tmp_path, capsys):
    a = [str(tagger_run(tmp_path / f"a{s}", s, f1)) for s, f1 in ((1, 90.0), (2, 90.2), (3, 90.4))]
    b = [str(tagger_run(tmp_path / f"b{s}", s, f1, lr_decay="0.975")) for s, f1 in ((1, 90.6), (2, 90.8), (3, 91.0))]
    assert main(["summarize", *a, "--versus", *b]) == 0
    out = capsys.readouterr().out
    assert "test: A 90.20 (3 runs) − B 90.80 (3 runs) = -0.60; permutation test over seeds p = 0.100 (exact, all 20 splits)" in out
    assert "A and B differ in: train.lr_decay 0.95 (3 runs) vs 0.975 (3 runs)" in out
    assert "Config keys that differ" not in out  # within each group, only the seeds differ
    assert main(["summarize", *a, "--versus", *b, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["versus"]["scores"]["test_f1"]["p_value"] == pytest.approx(2 / 20)


def test_a_saved_summary_stands_in_for_run_directories_that_are_gone(tmp_path, capsys):
    import shutil

    a = [str(tagger_run(tmp_path / f"a{s}", s, f1)) for s, f1 in ((1, 90.0), (2, 90.2), (3, 90.4))]
    b = [str(tagger_run(tmp_path / f"b{s}", s, f1, lr_decay="0.975")) for s, f1 in ((1, 90.6), (2, 90.8), (3, 91.0))]
    assert main(["summarize", *b, "--json"]) == 0
    saved = tmp_path / "b.json"
    saved.write_text(capsys.readouterr().out)
    assert main(["summarize", *a, "--versus", *b]) == 0
    with_dirs = capsys.readouterr().out
    for run in b:
        shutil.rmtree(run)
    assert main(["summarize", *a, "--versus", str(saved)]) == 0
    assert capsys.readouterr().out == with_dirs  # rows, means, p-value and config differences alike
    assert main(["summarize", str(saved), a[0]]) == 0  # a saved summary and a run directory in one table
    assert "- train.lr_decay: 0.975 (b1, b2, b3); 0.95 (a1)" in capsys.readouterr().out


def test_a_json_file_that_is_not_a_saved_summary_is_a_clear_error(tmp_path):
    bad = tmp_path / "metrics.json"
    bad.write_text(json.dumps({"rows": [{"run": "x"}], "configs": {}}))
    with pytest.raises(SeqlabError, match=r"metrics.json: not a summary saved with `seqlab summarize --json`"):
        summarize([bad])
    bad.write_text(json.dumps({"rows": [], "configs": {}}) + "trailing")
    with pytest.raises(SeqlabError, match="not valid JSON"):
        summarize([bad])


@pytest.mark.parametrize("text, message", [
    ("{not json", r"metrics.json:1:2: not valid JSON: Expecting property name"),
    ("[" * 100_000 + "]" * 100_000, r"metrics.json: JSON nested deeper than 64 levels; refused"),
    (b"{\"history\": \"\xff\"}", r"metrics.json: not valid UTF-8"),
])
def test_a_corrupt_metrics_file_is_one_line_naming_it(tmp_path, capsys, text, message):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(TAGGER % (1, "0.95"))
    (run / "metrics.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(SeqlabError, match=message) as err:
        read_run(run)
    assert "\n" not in str(err.value) and str(run / "metrics.json") in str(err.value)
    assert main(["summarize", str(run)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(run / "metrics.json") in lines[0]
