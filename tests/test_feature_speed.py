"""benchmarks/feature_speed.py: the JSON it prints on a tiny CoNLL fixture with tiny artefacts."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import FIXTURES

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "feature_speed.py"
TRAIN = FIXTURES / "ner" / "train.txt"


@pytest.fixture(scope="module")
def feature_speed():
    spec = importlib.util.spec_from_file_location("feature_speed_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def fixture_counts() -> tuple[int, int, set[str]]:
    """Sentences, tokens and word types of the fixture, counted here independently of the script."""
    sentences, tokens, types, inside = 0, 0, set(), False
    for line in TRAIN.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            inside = False
            continue
        sentences += not inside
        inside = True
        tokens += 1
        types.add(fields[0])
    return sentences, tokens, types


def write_artefacts(folder: Path) -> dict[str, str]:
    """A Brown paths file, a word2vec file (C&W) and a GloVe-layout file (HLBL slot), 4-d, a few words."""
    (folder / "brown.paths").write_text("00\tEU\t3\n01\tGerman\t2\n10\tthe\t9\n110\t.\t8\n111\tcall\t1\n")
    rng = np.random.default_rng(0)
    words = ["*UNKNOWN*", "eu", "german", "the", "*dddd*"]
    rows = [f"{w} " + " ".join(f"{x:.4f}" for x in rng.normal(size=4)) for w in words]
    (folder / "cw.txt").write_text(f"{len(words)} 4\n" + "\n".join(rows) + "\n")
    (folder / "glove.txt").write_text("\n".join(rows[1:]) + "\n")
    return {"brown": str(folder / "brown.paths"), "cw": str(folder / "cw.txt"), "hlbl": str(folder / "glove.txt")}


def test_benchmark_json_on_the_fixture(feature_speed, tmp_path, capsys):
    paths = write_artefacts(tmp_path)
    missing = tmp_path / "no_such_artefact"
    feature_speed.main(["--file", str(TRAIN), "--repeats", "2", "--type-batch", "5",
                        "--brown", paths["brown"], "--cw", paths["cw"], "--hlbl", paths["hlbl"],
                        "--glove", str(missing), "--ls", str(missing)])
    result = json.loads(capsys.readouterr().out)
    sentences, tokens, types = fixture_counts()
    assert (result["sentences"], result["tokens"], result["types"]) == (sentences, tokens, len(types))
    assert result["peak_rss_mb"] > 0 and result["cpu_count"] >= 1
    ext = result["extractors"]
    assert list(ext) == ["brown", "cw", "hlbl", "glove", "orthographic", "labels", "ls", "quadratic"]
    for name in ("glove", "ls"):
        assert ext[name]["status"] == "skipped" and str(missing) in ext[name]["reason"]
    assert ext["quadratic"]["status"] == "skipped" and "torch layer" in ext["quadratic"]["reason"]
    for name in ("brown", "cw", "hlbl", "orthographic", "labels"):
        record = ext[name]
        assert record["status"] == "ok" and record["load_seconds"] >= 0 and record["dim"] > 0
        for run in ("cold", "warm", "feature_dicts"):
            assert record[run]["tokens_per_second"] > 0 and record[run]["seconds"] > 0
            assert record[run]["tokens"] == tokens  # one row or dict per token of the fixture
        assert record["types"]["types"] == len(types) and record["types"]["types_per_second"] > 0
    assert ext["brown"]["words"] == 5 and ext["brown"]["prefix_ids"]["tokens_per_second"] > 0
    # EU, German, the, . and call are in the clusters (exact case): count them in the fixture
    known = sum(1 for line in TRAIN.read_text().splitlines() if line.split()[:1] in (["EU"], ["German"], ["the"],
                                                                                       ["."], ["call"]))
    assert ext["brown"]["token_coverage"] == pytest.approx(known / tokens, abs=1e-4)
    assert (ext["cw"]["words"], ext["cw"]["dim"], ext["hlbl"]["words"]) == (5, 4, 4)
    assert ext["labels"]["labels"] == ["I-LOC", "I-MISC", "I-ORG", "I-PER", "O"]


def test_only_the_chosen_extractors_and_bad_input(feature_speed, tmp_path, capsys):
    feature_speed.main(["--file", str(TRAIN), "--repeats", "1", "--extractors", "orthographic", "quadratic"])
    assert list(json.loads(capsys.readouterr().out)["extractors"]) == ["orthographic", "quadratic"]
    bad = tmp_path / "bad.txt"
    bad.write_text("EU NNP I-NP I-ORG\nrejects VBZ\n")
    with pytest.raises(SystemExit) as exit_info:
        feature_speed.main(["--file", str(bad), "--extractors", "orthographic"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"{bad}:2" in err and "expected 4 columns" in err
