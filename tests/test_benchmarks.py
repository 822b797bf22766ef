"""benchmarks/*.py: every script starts as a module from the repository root and parses its options against this
tree's seqlab, and the tagger and relation speed scripts print JSON on tiny models trained here from the fixtures."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import seqlab
from tests.conftest import FIXTURES, forget_new_log_handlers

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py") if p.name != "__init__.py")
NER, SEMEVAL = FIXTURES / "ner", FIXTURES / "semeval"


def run_script(name: str, *args: str, data: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m benchmarks.NAME ARGS`` from the repository root (which imports seqlab from this tree)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if data is not None:
        env["SEQLAB_DATA"] = str(data)
    return subprocess.run([sys.executable, "-m", f"benchmarks.{name.removesuffix('.py')}", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_script_list_is_not_empty():
    assert {"tagger_speed.py", "relation_speed.py", "window_speed.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_help(name):
    done = run_script(name, "--help")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", ["chunker_vs_crfsuite.py", "tagger_vs_ncrfpp.py"])
def test_seqlab_surface_imports(name):
    """These scripts import seqlab only when they run (in ``seqlab_surface``): every name must resolve."""
    module = importlib.import_module(f"benchmarks.{name.removesuffix('.py')}")
    assert all(callable(thing) for thing in module.seqlab_surface())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("benchmark_runs")
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(NER))
        seqlab.train(NER / "tiny.yaml", out / "tagger", overrides=("train.epochs=1", "train.threads=1"),
                     progress=False)
        mp.setenv("SEQLAB_DATA", str(SEMEVAL))
        seqlab.train(SEMEVAL / "tiny.yaml", out / "relation", overrides=("train.epochs=1",), progress=False)
    return {"tagger": out / "tagger", "relation": out / "relation"}


def test_tagger_speed_prints_json(runs):
    done = run_script("tagger_speed.py", "--run", str(runs["tagger"]), "--threads", "1", "--train-sentences", "1",
                      "--batch-sizes", "1", "--repeats", "1", data=NER)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["run"] == str(runs["tagger"]) and result["threads"] == 1
    assert result["train"]["sentences"] >= 1 and result["train"]["sentences_per_second"] > 0
    assert [d["batch_size"] for d in result["decode"]] == [1] and result["decode"][0]["tokens_per_second"] > 0
    assert result["peak_rss_mb"] > 0


def test_brown_blocks_prints_json():
    done = run_script("brown_blocks.py", "--slots", "300")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [r["pass"] for r in result["results"]] == ["update", "neighbour_sums"]
    update, sums = result["results"]
    for way in ("blocks", "compiled"):  # each against the one-pass reference
        assert update[way]["same"] and update[way]["max_abs_difference"] == 0.0  # the cells computed alike
        assert sums[way]["max_abs_difference"] < 1e-6 * 300 * 300  # the fresh row: the same sums, other rounding
        assert update[way]["cpu_seconds"] >= 0 and update[way]["peak_mb_above_start"] >= 0
    assert sums["blocks"]["max_abs_difference"] == sums["compiled"]["max_abs_difference"]  # rows added in order


def test_brown_window_times_words_and_reads_its_counts_back(tmp_path):
    """Per-word time of the merge window on a small corpus; the counts kept in --counts give the same run."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(60)]
    lines = [" ".join(rng.choice(words, size=12, p=np.arange(60, 0, -1) / 1830)) for _ in range(300)]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts = tmp_path / "counts.npz"
    runs = [run_script("brown_window.py", "--corpus", str(corpus), "--counts", str(counts), "--clusters", "8",
                       "--words", "20", "--skip", "5") for _ in range(2)]
    assert counts.exists()
    results = []
    for done in runs:
        assert done.returncode == 0, done.stderr
        results.append(json.loads(done.stdout))
    first, again = results
    assert (first["first_rank"], first["words"], first["folds"] + first["merges"]) == (13, 20, 20)
    assert first["cpu_ms_per_word"] > 0 and first["vocabulary"] == 60
    assert {k: v for k, v in first.items() if "cpu" not in k and k not in ("load_average", "peak_rss_mb")} == \
        {k: v for k, v in again.items() if "cpu" not in k and k not in ("load_average", "peak_rss_mb")}
    done = run_script("brown_window.py", "--corpus", str(corpus), "--clusters", "8", "--skip", "100")
    assert done.returncode != 0 and "none past rank 108" in done.stderr
    counts.write_bytes(b"not an npz")
    done = run_script("brown_window.py", "--corpus", str(corpus), "--counts", str(counts))
    assert done.returncode != 0 and f"--counts {counts}: not the counts" in done.stderr and "Traceback" not in done.stderr
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    done = run_script("brown_window.py", "--corpus", str(tmp_path / "empty.txt"))
    assert done.returncode != 0 and "empty.txt" in done.stderr and "Traceback" not in done.stderr


def test_relation_speed_prints_json(runs):
    test_file = SEMEVAL / "test.txt"
    done = run_script("relation_speed.py", "--run", str(runs["relation"]), "--file", str(test_file),
                      "--threads", "1", "--batch-size", "1", "--train-sentences", "1", data=SEMEVAL)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["run"], result["file"], result["batch_size"]) == (str(runs["relation"]), str(test_file), 1)
    assert result["sentences"] > 0
    for key in ("read_and_tokenize_sentences_per_second", "encode_sentences_per_second",
                "classify_sentences_per_second", "train_sentences_per_second", "train_epoch_seconds_7200_sentences"):
        assert result[key]["wall"] > 0 and result[key]["cpu"] > 0


def _check_timed_sides(figures: dict, sides: tuple[str, ...]) -> None:
    """A summarised timing (benchmarks.onnx_speed.summarise): each side's seconds and rates, each non-torch side's
    ratio to torch by CPU and by wall time, per round and as min / median / max."""
    for side in sides:
        assert set(figures[side]) == {"cpu_seconds", "seconds", "tokens_per_cpu_second", "tokens_per_second"}
        assert figures[side]["seconds"] > 0 and figures[side]["tokens_per_second"] > 0
    for side in sides[1:]:
        for measure in ("cpu", "wall"):
            ratio = figures[f"ratio_{side}_over_torch_{measure}"]
            assert set(ratio) == {"min", "median", "max", "per_round"} and len(ratio["per_round"]) == 1
            assert 0 < ratio["min"] <= ratio["median"] <= ratio["max"]


def test_onnx_speed_prints_json(runs, tmp_path):
    pytest.importorskip("onnxruntime", reason="the onnx extra (pip install 'seqlab[onnx]') is not installed")
    done = run_script("onnx_speed.py", "--model", str(runs["tagger"]), "--file", "dev.txt", "--export",
                      str(tmp_path / "exported"), "--batch-sizes", "1", "--rounds", "1", "--process-rounds", "1",
                      "--int8", data=NER)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    sides = ("torch", "onnx", "onnx_int8")
    assert {"command", "model", "file", "sentences", "tokens", "threads", "export_seconds", "differing_labels",
            "differing_labels_by_side", "f1", "in_process", "whole_process", "versions", "machine",
            "load_average_before", "load_average_after"} <= set(result)
    assert (result["model"], result["file"], result["threads"]) == (str(runs["tagger"]), "dev.txt", 1)
    assert result["sentences"] > 0 and result["tokens"] >= result["sentences"]
    assert (tmp_path / "exported" / "model.onnx").is_file() and set(result["export_seconds"]) == set(sides[1:])
    assert result["differing_labels"] == result["differing_labels_by_side"]["onnx"] == 0  # fp32: the same labels
    assert set(result["differing_labels_by_side"]) == set(sides[1:])
    assert set(result["f1"]) == set(sides) and result["f1"]["onnx"] == result["f1"]["torch"]
    assert set(result["versions"]) == {"torch", "onnxruntime", "onnx"}
    batch = result["in_process"]["batch_1"]
    assert (batch["sentences"], batch["tokens"]) == (result["sentences"], result["tokens"])
    _check_timed_sides(batch, sides)
    process = result["whole_process"]
    assert process["lines"] == result["sentences"] and process["tokens"] == result["tokens"]
    _check_timed_sides(process, sides)
    assert process["identical_output"] is True and process["differing_output_lines"]["onnx"] == 0
    assert set(process["differing_output_lines"]) == set(sides[1:])


def test_portable_paths_name_no_machine(monkeypatch, tmp_path):
    """Paths written into benchmarks/results/*.json: data under $SEQLAB_DATA, the checkout relative, else a basename."""
    from benchmarks import sidebyside

    data = tmp_path / "data"
    monkeypatch.setenv("SEQLAB_DATA", str(data))
    assert sidebyside.portable_path(data / "conll2003" / "test.txt") == "$SEQLAB_DATA/conll2003/test.txt"
    assert sidebyside.portable_path(BENCHMARKS / "brown_speed.py") == "benchmarks/brown_speed.py"
    assert sidebyside.portable_path(tmp_path / "brown-cluster" / "wcluster") == "wcluster"
    assert sidebyside.portable_path("runs/glove1") == "runs/glove1"
    command = [str(tmp_path / "wcluster"), "--text", str(data / "a b.txt"), "--c", "100"]
    assert sidebyside.portable_command(command) == "wcluster --text $SEQLAB_DATA/'a b.txt' --c 100"


def test_embedding_geometry_measures_the_shared_direction_and_projects_it_out(tmp_path):
    from features.vocab import PADDING, UNKNOWN, Embeddings

    rng = np.random.default_rng(0)
    common = np.ones(4)
    shared = common + 0.01 * rng.standard_normal((50, 4))  # every word nearly the common vector
    words = [PADDING, UNKNOWN] + [f"w{i}" for i in range(50)]
    Embeddings(words, np.vstack([np.zeros((2, 4)), shared]).astype(np.float32)).save(tmp_path / "v.txt")
    done = run_script("embedding_geometry.py", str(tmp_path / "v.txt"), "--top", "50", "--pairs", "500",
                      "--project-out", str(tmp_path / "p.txt"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["top"] == 50 and report["mean_cosine_random_pairs"] > 0.99
    assert abs(report["projected"]["mean_cosine_random_pairs"]) < 0.2
    projected = Embeddings.load(tmp_path / "p.txt")
    direction = shared.mean(axis=0) / np.linalg.norm(shared.mean(axis=0))  # the frequent rows' mean
    assert list(projected.words) == words and np.allclose(projected.matrix @ direction, 0, atol=1e-5)


def test_embedding_geometry_names_a_bad_file_in_one_line(tmp_path):
    (tmp_path / "bad.txt").write_text("2 3\nthe 0.1 0.2\n", encoding="utf-8")
    done = run_script("embedding_geometry.py", str(tmp_path / "bad.txt"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"embedding_geometry: {tmp_path / 'bad.txt'}:2: expected a word and 3 values")
    assert done.stderr.count(str(tmp_path / "bad.txt")) == 1 and len(done.stderr.splitlines()) == 1
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    empty = run_script("embedding_geometry.py", str(tmp_path / "empty.txt"), str(tmp_path / "missing.txt"))
    assert empty.returncode == 2 and empty.stderr.count(str(tmp_path / "empty.txt")) == 1 and "empty" in empty.stderr


def test_ud_raw_text_scores_tokenization_with_the_official_script(tmp_path):
    pytest.importorskip("spacy", reason="the languages extra (spaCy) is not installed")
    scorer = os.environ.get("CONLL18_UD_EVAL")
    if not scorer or not Path(scorer).is_file():
        pytest.skip("the CoNLL 2018 scorer is not here: set CONLL18_UD_EVAL to conll18_ud_eval.py "
                    "(UniversalDependencies/tools)")
    from tests.text.test_learned import TRAIN

    from benchmarks.ud_raw_text import with_heads

    (tmp_path / "tb").mkdir()
    gold = "".join(with_heads(block + "\n\n") for block in TRAIN.strip().split("\n\n"))  # the script reads HEAD
    for split in ("train", "test"):
        (tmp_path / "tb" / f"fr_tiny-ud-{split}.conllu").write_text(gold, encoding="utf-8")
    done = run_script("ud_raw_text.py", "--treebank", "tb", "--out", str(tmp_path / "out"), data=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["language"] == "fr" and set(result["f1"]) == {"Tokens", "Sentences", "Words"}
    assert result["f1"]["Tokens"] == 100.0 and result["f1"]["Words"] == 100.0
    assert "\n5-6\tdu\t" in (tmp_path / "out" / "fr_tiny-ud-test.system.conllu").read_text(encoding="utf-8")
