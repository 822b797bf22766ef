"""examples/turian2010_pipeline.py: the resumable driver of the Turian et al. (2010) inductions and rows."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from examples import turian2010_figure2 as figure
from examples import turian2010_pipeline as pipeline

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (sys.executable, "-m", "examples.turian2010_pipeline")  # as the README runs it, from the repository root


def test_every_input_is_made_by_an_earlier_step_and_every_name_is_unique(tmp_path):
    plan = pipeline.steps(tmp_path / "runs", tmp_path / "data")
    made: set[str] = set()
    for step in plan:
        assert set(step.inputs) <= made, f"{step.name} needs {set(step.inputs) - made} before anything makes it"
        made.update(step.outputs)
    assert len({s.name for s in plan}) == len(plan)
    assert plan[-1].name == "figure2" and plan[-1].outputs == ()  # drawn again from whatever rows exist


def test_the_rows_land_where_the_figure_script_reads_them(tmp_path):
    """The driver's output names and turian2010_figure2.py's must agree, or the figure would stay empty."""
    outputs = {out for step in pipeline.steps(tmp_path / "runs", tmp_path / "data") for out in step.outputs}
    for kind, size in figure.SETTINGS:
        assert f"crfsuite_chunker_{kind}{size}_wiki/{figure.CHUNK_RESULTS}" in outputs
        assert f"ner_linear/{kind}{size}_wiki{figure.NER_RESULTS}" in outputs
    assert "ner_linear/base.crfsuite.json" in outputs and "crfsuite_chunker_baseline/model.crfsuite.json" in outputs


def test_every_table3_row_of_the_paper_has_its_greedy_perceptron_seeds(tmp_path):
    """Table 3's rows (Brown 1000, C&W 50, HLBL 100 and their combinations) run with greedy_ner.py, each seed once,
    after the representations they read."""
    plan = pipeline.steps(tmp_path / "runs", tmp_path / "data")
    order = [step.name for step in plan]
    rows = ("baseline", "brown1000_wiki", "cw50_wiki", "hlbl100_wiki", "brown1000_cw50_wiki", "brown1000_hlbl100_wiki",
            "cw50_hlbl100_wiki", "brown1000_cw50_hlbl100_wiki")
    for row in rows:
        for seed in pipeline.SEEDS:
            name = f"greedy_{row}_s{seed}"
            assert name in order, name
            step = plan[order.index(name)]
            assert step.command[:3] == ("python", "-m", "examples.greedy_ner")
            assert ("--seed", str(seed)) == step.command[step.command.index("--seed"):step.command.index("--seed") + 2]
            assert all(order.index(f"induce_{Path(path).name.split('_')[0]}") < order.index(name)
                       for path in step.inputs)
    outputs = [out for step in plan if step.name.startswith("greedy_") for out in step.outputs]
    assert len(outputs) == len(set(outputs)) == len(rows) * len(pipeline.SEEDS)  # no two rows share a model file


def test_only_the_capped_chunking_row_limits_crfsuites_iterations(tmp_path):
    """C&W 200-d chunking stops at its cap (its SGD would run for hours past it); every other row keeps CRFsuite's own
    stopping rule."""
    chunkers = {s.name: s.command for s in pipeline.steps(tmp_path / "runs", tmp_path / "data")
                if s.name.startswith("chunk_")}
    capped = {name for name, command in chunkers.items() if "--max-iterations" in command}
    assert capped == {"chunk_cw200_wiki"}
    command = chunkers["chunk_cw200_wiki"]
    assert command[command.index("--max-iterations") + 1] == str(pipeline.CHUNK_ITERATIONS[("cw", 200)])


@pytest.mark.parametrize("runs", ["runs", "../elsewhere/runs", "ABSOLUTE"])
def test_the_rows_read_the_representations_where_the_inductions_write_them(tmp_path, monkeypatch, runs):
    """The example scripts resolve a bare relative path under SEQLAB_DATA: a row must name the runs folder's file."""
    from seqlab.core.paths import resolve_data_path

    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "data"))
    runs_dir = tmp_path / "runs" if runs == "ABSOLUTE" else Path(runs)
    plan = pipeline.steps(runs_dir, tmp_path / "data")
    written = {runs_dir / out for step in plan if step.name.startswith("induce_") for out in step.outputs}
    read = [resolve_data_path(step.command[i + 1], key="row", must_exist=False)
            for step in plan for i, flag in enumerate(step.command) if flag in ("--brown", "--embeddings")]
    assert read and {path.resolve() for path in read} <= {path.resolve() for path in written}


def test_status_follows_the_files(tmp_path):
    runs = tmp_path / "runs"
    step = pipeline._ner(runs, (("brown", 1000),))
    assert pipeline.status(step, runs) == "waits for features/brown1000_wiki.paths"
    (runs / "features").mkdir(parents=True)
    (runs / "features" / "brown1000_wiki.paths").write_text("0\tthe\t5\n")
    assert pipeline.status(step, runs) == "to run"
    (runs / "ner_linear").mkdir()
    (runs / "ner_linear" / "brown1000_wiki.crfsuite.json").write_text("{}")
    assert pipeline.status(step, runs) == "done"


def test_a_step_is_run_logged_and_recorded_with_its_own_cpu_time(tmp_path):
    runs = tmp_path / "runs"
    burn = "import sys\nx = 0\nfor i in range(3_000_000): x += i\nopen(sys.argv[1], 'w').write(str(x))"
    step = pipeline.Step("burn", (sys.executable, "-c", burn, str(runs / "out.txt")), ("out.txt",))
    assert pipeline.run_step(step, runs) == 0
    assert (runs / "out.txt").read_text() == str(sum(range(3_000_000)))
    record = json.loads((runs / "turian2010" / "burn.json").read_text())
    assert record["returncode"] == 0 and record["command"][0] == sys.executable
    assert 0 < record["user_cpu_s"] <= record["wall_s"] + 0.5 and record["peak_rss_mb"] > 1
    assert (runs / "turian2010" / "burn.log").read_text().startswith("$ ")
    failing = pipeline.Step("fails", (sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"), ("never",))
    assert pipeline.run_step(failing, runs) == 3
    assert "boom" in (runs / "turian2010" / "fails.log").read_text()
    missing = pipeline.Step("missing", (str(tmp_path / "no-such-program"),), ("never",))
    assert pipeline.run_step(missing, runs) == 127
    assert "cannot start" in (runs / "turian2010" / "missing.log").read_text()


def test_list_and_dry_run_run_nothing(tmp_path):
    runs = tmp_path / "runs"
    listed = subprocess.run([*SCRIPT, "--runs", str(runs), "--list"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    assert listed[0].split() == ["chunk_baseline", "to", "run"]
    assert not any(line.startswith("induce_brown10000") for line in listed)  # many CPU-hours: only with --long
    rows = [line.split()[0] for line in listed if "brown10000" in line]
    assert rows == ["chunk_brown10000_wiki", "ner_brown10000_wiki"]  # listed, each waiting for the clusters
    assert all("features/brown10000_wiki.paths" in line for line in listed if "brown10000" in line)
    dry = subprocess.run([*SCRIPT, "--runs", str(runs), "--dry-run", "--long", "--only",
                          "induce_brown10000|ner_cw50_hlbl100"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "--clusters 10000" in dry and "ner_cw50_hlbl100_wiki: skipped, waits for" in dry
    assert not runs.exists()
    bad = subprocess.run([*SCRIPT, "--runs", str(runs), "--only", "("], cwd=ROOT, capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "not a regular expression" in bad.stderr and "Traceback" not in bad.stderr


def test_the_neural_rows_load_as_configs_and_read_the_skipgram_vectors(tmp_path, monkeypatch):
    """Each training step's config and --set overrides load strictly, and the skip-gram runs read the file the
    induction writes, wherever --runs points."""
    from seqlab.core.paths import resolve_data_path
    from seqlab.relation.config import load_relation_config
    from seqlab.tagging.config import load_config

    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "data"))
    monkeypatch.chdir(ROOT)  # the configs are named from the repository root
    runs = tmp_path / "elsewhere"
    plan = pipeline.steps(runs, tmp_path / "data")
    induced = next(runs / out for s in plan if s.name == "induce_skipgram300" for out in s.outputs if out.endswith(".txt"))
    trains = [s for s in plan if s.name.startswith("train_")]
    assert len(trains) == 4 * len(pipeline.SEEDS)
    for step in trains:
        config, sets = step.command[2], [step.command[i + 1] for i, a in enumerate(step.command) if a == "--set"]
        loaded = (load_relation_config if "semeval" in config else load_config)(config, sets)
        assert loaded.train.seed in pipeline.SEEDS
        if "skipgram300" in step.name:
            path = (loaded.model.embeddings.path if "semeval" in config else loaded.model.features[0].path)
            assert resolve_data_path(path, key="row", must_exist=False).resolve() == induced.resolve()
            assert step.inputs == ("features/skipgram300_wiki.txt",)
        assert step.resume[:3] == ("seqlab", "train", "--resume") and step.resume_from.endswith("/checkpoint.pt")


def test_a_killed_training_step_resumes_from_its_checkpoint(tmp_path):
    runs = tmp_path / "runs"
    step = next(s for s in pipeline.steps(runs, tmp_path / "data") if s.name == "train_semeval10_ea_markers_s1")
    assert step.command_now(runs) == step.command and "--output" in step.command
    (runs / "semeval10_ea_markers_s1").mkdir(parents=True)
    (runs / "semeval10_ea_markers_s1" / "checkpoint.pt").write_bytes(b"")
    assert step.command_now(runs) == ("seqlab", "train", "--resume", str(runs / "semeval10_ea_markers_s1"), "--quiet")
    assert pipeline.status(step, runs) == "to run"
    (runs / "semeval10_ea_markers_s1" / "metrics.json").write_text("{}")
    assert pipeline.status(step, runs) == "done"
    versus = next(s for s in pipeline.steps(runs, tmp_path / "data") if s.name == "versus_semeval10_skipgram300")
    assert versus.command[:2] == ("seqlab", "summarize") and "--versus" in versus.command
    assert pipeline.status(versus, runs).startswith("waits for semeval10_skipgram300_s1/metrics.json")


def test_every_example_a_step_runs_starts_as_a_module_from_the_repository_root(tmp_path):
    """The steps run ``python -m examples.NAME`` from the repository root: each module must start there (``--help``
    needs no data and no python-crfsuite), and a script run as a file says how to run it, in one line."""
    modules = {step.command[2] for step in pipeline.steps(tmp_path / "runs", tmp_path / "data")
               if step.command[:2] == ("python", "-m")}
    assert modules == {"examples.crfsuite_chunker", "examples.crfsuite_ner", "examples.greedy_ner",
                       "examples.turian2010_figure2"}
    for module in sorted(modules):
        done = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.startswith("usage:"), (module, done.stderr)
    as_file = subprocess.run([sys.executable, "examples/crfsuite_ner.py", "--help"], cwd=ROOT, capture_output=True,
                             text=True)
    assert as_file.returncode == 1 and "Traceback" not in as_file.stderr
    assert as_file.stderr == "crfsuite_ner: run it from the repository root as a module: python -m examples.crfsuite_ner\n"
