"""Bulk tagging (seqlab.apps.parallel and seqlab tag --workers/--shard): the same output as one process."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import seqlab
from seqlab.cli import main
from seqlab.core.errors import SeqlabError
from seqlab.apps.parallel import parse_shard, parts, shard
from tests.conftest import FIXTURES, forget_new_log_handlers

NER = FIXTURES / "ner"
LINES = ["EU rejects German call to boycott British lamb.", "", "Peter Blackburn said so. BRUSSELS 1996-08-22",
         "The European Commission said on Thursday it disagreed with German advice."] * 9


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("parallel") / "run"
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(NER))
        seqlab.train(NER / "tiny.yaml", out, overrides=("train.threads=1",), progress=False)
    return out


def _tag(argv: list[str], text_file: Path) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["tag", *argv[:1], str(text_file), "--format", "jsonl", *argv[1:]]) == 0
    return out.getvalue()


def test_workers_and_shards_give_the_single_process_output(run, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    single = _tag([str(run)], text)
    assert _tag([str(run), "--workers", "2", "--batch-size", "3"], text) == single
    shards = [_tag([str(run), "--shard", f"{i}/3"], text) for i in range(3)]
    merged = sorted((json.loads(line) for part in shards for line in part.splitlines()),
                    key=lambda record: record["line"])
    assert merged == [json.loads(line) for line in single.splitlines()]  # each line's number is kept


@pytest.mark.parametrize("text", ["3", "3/3", "-1/2", "a/b", "1/0"])
def test_a_bad_shard_is_a_clear_error(text):
    with pytest.raises(SeqlabError, match="--shard: expected i/n"):
        parse_shard(text)


@pytest.mark.parametrize("count", [0, 1, 127, 2048, 8191, 8192, 8193, 20487, 50000])
def test_parts_keep_every_item_in_order_full_chunks_first_then_shrinking(count):
    sizes = [len(part) for part in parts(range(count), 1024, 2)]
    assert [x for part in parts(range(count), 1024, 2) for x in part] == list(range(count))
    assert all(0 < size <= 1024 for size in sizes)
    tail = sizes[next((i for i, size in enumerate(sizes) if size < 1024), len(sizes)):]
    assert tail == sorted(tail, reverse=True)  # once parts shrink they never grow again
    if count > 5 * 1024:  # the input outlasts the read-ahead: the end is cut finer than a chunk
        assert len(tail) >= 8 and max(tail) < 1024 and min(tail[:-1]) == 128


def test_shard_keeps_line_numbers():
    assert list(shard(["a", "b", "c", "d", "e"], 1, 2)) == [(2, "b"), (4, "d")]


def test_workers_refuse_what_is_no_model_before_starting_and_a_failing_load_in_one_line(run, tmp_path, capsys):
    text = tmp_path / "in.txt"
    text.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    assert main(["tag", str(tmp_path / "nowhere"), str(text), "--workers", "2"]) == 2
    assert "not a seqlab model" in capsys.readouterr().err
    broken = tmp_path / "broken"  # looks like a run directory, fails to load inside the workers
    broken.mkdir()
    (broken / "config.yaml").write_text((run / "config.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["tag", str(broken), str(text), "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and str(broken) in err
