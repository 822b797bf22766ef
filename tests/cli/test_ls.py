"""``seqlab features ls {build,show}`` through ``main([...])``; bad input is exit 2 with one error line."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from seqlab.cli import main
from seqlab.core.errors import SeqlabError

pytest.importorskip("fasttext")

LS = Path(__file__).parents[1] / "fixtures" / "ls"
TINY = ["--dim", "8", "--min-count", "1", "--epochs", "5", "--bucket", "100000", "--quiet"]


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "ls"
    assert main(["features", "ls", "build", "--typed", str(LS / "typed.txt"), "--out", str(out), *TINY]) == 0
    return out


def test_build_writes_the_artefact_and_a_summary(capsys, tmp_path):
    out = tmp_path / "sub" / "ls"
    code, stdout, _ = run(capsys, "features", "ls", "build", "--typed", LS / "typed.txt", "--out", out, *TINY,
                          "--unlabeled", LS / "unlabeled.txt")
    assert code == 0 and (out / "ls.npy").is_file() and (out / "fasttext.bin").is_file()
    lines = stdout.splitlines()
    assert re.match(r"LS vectors: [\d,]+ words x \d+ types, from 12 sentences with 27 mentions", lines[0])
    assert lines[1].startswith("distant supervision: ") and "unlabelled sentences kept" in lines[1]
    assert re.match(r"fastText [\d.]+ s, total [\d.]+ s; [\d.]+ MB", lines[2]) and lines[3] == f"wrote {out}"


@pytest.mark.parametrize("terminal, quiet, shown", [(True, False, True), (False, False, False), (True, True, False)])
def test_fasttext_progress_is_shown_only_on_a_terminal(monkeypatch, capsys, tmp_path, terminal, quiet, shown):
    import seqlab.cli.ls as ls_cli

    seen = {}

    def fake_build(*args, progress, **kwargs):
        seen["progress"] = progress
        raise SeqlabError("stop here")

    monkeypatch.setattr(ls_cli, "build", fake_build)
    monkeypatch.setattr(ls_cli.sys.stderr, "isatty", lambda: terminal)
    flags = ["--quiet"] if quiet else []
    code, _, err = run(capsys, "features", "ls", "build", "--typed", LS / "typed.txt", "--out", tmp_path / "o", *flags)
    assert code == 2 and "stop here" in err and seen == {"progress": shown}


def test_show_prints_the_top_types_of_each_word(capsys, built):
    code, stdout, _ = run(capsys, "features", "ls", "show", "--top", 3, built, "Hilton", "Zyxw")
    assert code == 0
    blocks = stdout.split("\n\n")
    assert blocks[0].startswith("Hilton (in the vocabulary): top 3 of ") and len(blocks[0].splitlines()) == 4
    assert "Zyxw (not in the vocabulary: from sub-words)" in blocks[1]
    first = blocks[0].splitlines()[1].split()
    assert first[0] == "1" and first[1].startswith("/") and first[2] == "+1.000"


def test_the_hierarchy_can_be_turned_off(capsys, tmp_path):
    out = tmp_path / "flat"
    code, _, _ = run(capsys, "features", "ls", "build", "--typed", LS / "typed.txt", "--out", out, *TINY,
                     "--hierarchy-sep", "none")
    types = (out / "types.txt").read_text().split()
    assert code == 0 and "/person_director" in types and "/person" not in types


def bad_typed(tmp: Path) -> Path:
    (tmp / "bad.txt").write_text("Paris\tB-LOC\nis\tO\nnice\n", encoding="utf-8")
    return tmp / "bad.txt"


@pytest.mark.parametrize("argv, message", [
    (lambda t, b: ["build", "--typed", t / "nope.txt", "--out", t / "o"], r"typed corpus file not found: .*nope\.txt"),
    (lambda t, b: ["build", "--typed", bad_typed(t), "--out", t / "o"], r"bad\.txt:3: expected a token and a tag"),
    (lambda t, b: ["build", "--typed", LS / "typed.txt", "--out", b], r"already exists; remove it"),
    (lambda t, b: ["build", "--typed", LS / "typed.txt", "--out", t / "o", "--dim", 0],
     "dim must be a positive integer, but got 0"),
    (lambda t, b: ["build", "--typed", LS / "typed.txt", "--out", t / "o", "--unlabeled", LS / "typed.txt",
                   "--min-link-prob", 2], r"min_link_prob must be in \[0, 1\]"),
    (lambda t, b: ["show", t / "none", "Paris"], r"LS vectors not found: .*none"),
    (lambda t, b: ["show", "--top", 0, b, "Paris"], "--top must be a positive integer, but got 0"),
])
def test_bad_input_is_one_error_line_and_exit_2(capsys, tmp_path, built, argv, message):
    code, _, stderr = run(capsys, "features", "ls", *argv(tmp_path, built))
    errors = [line for line in stderr.splitlines() if line.startswith("seqlab: error:")]
    assert code == 2 and len(errors) == 1 and re.search(message, errors[0]), stderr
    assert "Traceback" not in stderr
