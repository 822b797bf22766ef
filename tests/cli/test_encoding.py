"""``--encoding`` on ``seqlab tag``, ``eval`` and ``calibrate`` (seqlab/cli/_util.py, seqlab/data/encoding.py):
input in another encoding is read as its UTF-8 copy is; without the option, a non-UTF-8 file is one error line
naming the file, the line, the encoding it most likely is and the option; output is UTF-8 whatever the locale."""
from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from seqlab.cli import main
from seqlab.cli._util import decoded_lines

NER = Path(__file__).parents[1] / "fixtures" / "ner"
#: Raw text with characters outside ASCII that Latin-1, cp1252 and UTF-16 all hold.
TEXT = "Angela Merkel visitó Zürich y München.\n\nEl señor Pérez habló con la Comisión Europea.\n"
#: A cp1252-only character (the euro sign, and curly quotes): bytes 0x80-0x9f, which make the guess cp1252.
CP1252_TEXT = "The EU paid \u20ac5m to \u201cMüller AG\u201d in Berlin.\n"
GOLD = "Angela B-PER\nMerkel I-PER\nvisitó O\nZürich B-LOC\n. O\n\nEl O\nseñor O\nPérez B-PER\n"


def _write(path: Path, text: str, encoding: str) -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("encoding, text", [("latin-1", TEXT), ("cp1252", CP1252_TEXT), ("utf-16", TEXT)],
                         ids=["latin-1", "cp1252", "utf-16"])
@pytest.mark.parametrize("fmt", ["conll", "jsonl"])
def test_a_file_in_another_encoding_is_tagged_as_its_utf8_copy(tmp_path, capsys, encoding, text, fmt) -> None:
    utf8 = _write(tmp_path / "utf8.txt", text, "utf-8")
    other = _write(tmp_path / "other.txt", text, encoding)
    code, expected, _ = _run(["tag", "en-ner-conll03", str(utf8), "--format", fmt], capsys)
    assert code == 0 and "ü" in expected
    assert _run(["tag", "en-ner-conll03", str(other), "--format", fmt, "--encoding", encoding], capsys) == \
        (0, expected, "")


def test_standard_input_is_read_in_the_encoding_given(tmp_path, capsys, monkeypatch) -> None:
    code, expected, _ = _run(["tag", "en-ner-conll03", str(_write(tmp_path / "u.txt", TEXT, "utf-8"))], capsys)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(TEXT.encode("latin-1")), encoding="utf-8"))
    assert code == 0 and _run(["tag", "en-ner-conll03", "-", "--encoding", "latin1"], capsys) == (0, expected, "")


@pytest.mark.parametrize("encoding, text, guess, where", [
    ("latin-1", TEXT, "latin-1", "1: not valid UTF-8 (byte 0xf3 at column 20)"),
    ("cp1252", CP1252_TEXT, "cp1252", "1: not valid UTF-8 (byte 0x80 at column 13)"),
], ids=["latin-1", "cp1252"])
def test_without_the_option_a_non_utf8_file_is_one_line_naming_the_encoding_to_pass(tmp_path, capsys, encoding, text,
                                                                                   guess, where) -> None:
    path = _write(tmp_path / "in.txt", text, encoding)
    code, out, err = _run(["tag", "en-ner-conll03", str(path)], capsys)
    assert code == 2 and out == ""
    assert err == (f"seqlab: error: {path}:{where}; the file looks like {guess} text: read it with --encoding {guess} "
                   f"(data.encoding: {guess} in a config)\n")


@pytest.mark.parametrize("name, argv", [("in.txt", ["--tokenized"]), ("in.conll", []), ("in.conllu", [])])
def test_pre_tokenized_input_is_read_in_the_encoding_given(tmp_path, capsys, name, argv) -> None:
    tokens = [["Angela", "Merkel", "visitó", "Zürich", "."], ["El", "señor", "Pérez"]]
    if name == "in.txt":
        text = "".join(" ".join(sentence) + "\n" for sentence in tokens)
    elif name == "in.conll":
        text = "\n".join("".join(f"{t} O\n" for t in sentence) for sentence in tokens)
    else:
        text = "\n".join("".join(f"{i}\t{t}\t_\t_\t_\t_\t_\t_\t_\t_\n" for i, t in enumerate(sentence, 1))
                         for sentence in tokens) + "\n"
    utf8, other = _write(tmp_path / f"u{name}", text, "utf-8"), _write(tmp_path / name, text, "latin-1")
    code, expected, _ = _run(["tag", "en-ner-conll03", str(utf8), *argv], capsys)
    assert code == 0 and [line.split(" ")[0] for line in expected.splitlines() if line] == sum(tokens, [])
    assert _run(["tag", "en-ner-conll03", str(other), *argv, "--encoding", "latin-1"], capsys) == (0, expected, "")
    code, _, err = _run(["tag", "en-ner-conll03", str(other), *argv], capsys)
    assert code == 2 and err.count("\n") == 1 and f"{other}:" in err and "--encoding latin-1" in err


def test_output_is_utf8_whatever_the_locale_says(tmp_path, capsys, monkeypatch) -> None:
    path = _write(tmp_path / "in.txt", CP1252_TEXT, "cp1252")
    code, expected, _ = _run(["tag", "en-ner-conll03", str(path), "--encoding", "cp1252"], capsys)
    raw = io.BytesIO()
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(raw, encoding="latin-1"))  # the euro sign is not Latin-1
    assert code == 0 and main(["tag", "en-ner-conll03", str(path), "--encoding", "cp1252"]) == 0
    sys.stdout.flush()
    assert raw.getvalue().decode("utf-8") == expected and "\u20ac" in expected


@pytest.mark.parametrize("verb", ["tag", "eval", "calibrate"])
def test_an_unknown_encoding_is_one_line(tmp_path, capsys, verb) -> None:
    path = _write(tmp_path / "in.txt", GOLD, "utf-8")
    for name in ("klingon", "hex"):  # hex is a codec of bytes, not a text encoding
        code, _, err = _run([verb, "en-ner-conll03", str(path), "--encoding", name], capsys)
        assert (code, err) == (2, f"seqlab: error: --encoding: unknown text encoding {name!r} (e.g. utf-8, latin-1, "
                                  "cp1252, utf-16)\n")


def test_eval_reads_the_gold_file_in_the_encoding_given(tmp_path, capsys) -> None:
    utf8, latin = _write(tmp_path / "u.txt", GOLD, "utf-8"), _write(tmp_path / "l.txt", GOLD, "latin-1")
    code, expected, _ = _run(["eval", "en-ner-conll03", str(utf8), "--output", str(tmp_path / "u.pred")], capsys)
    assert code == 0 and "processed 8 tokens with 3 phrases" in expected
    code, out, _ = _run(["eval", "en-ner-conll03", str(latin), "--encoding", "latin-1", "--output",
                         str(tmp_path / "l.pred")], capsys)
    assert code == 0 and out.replace("l.pred", "u.pred") == expected
    assert (tmp_path / "l.pred").read_bytes() == (tmp_path / "u.pred").read_bytes()  # written in UTF-8
    code, _, err = _run(["eval", "en-ner-conll03", str(latin), "--output", str(tmp_path / "x")], capsys)
    assert code == 2 and err.endswith(f"seqlab: error: {latin}:3: not valid UTF-8 (byte 0xf3 at column 6); the file "
                                      "looks like latin-1 text: read it with --encoding latin-1 (data.encoding: "
                                      "latin-1 in a config)\n")


def test_calibrate_reads_the_dev_file_in_the_encoding_given(tmp_path, capsys, monkeypatch) -> None:
    from seqlab.apps.installed import model_path
    from seqlab.apps.model_cache import unpacked

    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("seqlab.core.calibration.MIN_EACH", 0)
    dev = (NER / "dev.txt").read_text(encoding="utf-8").replace("German", "Görman")
    utf8, latin = _write(tmp_path / "dev.txt", dev, "utf-8"), _write(tmp_path / "dev.l1", dev, "latin-1")
    shutil.copy(model_path(None), tmp_path / "m.seqlab")
    with unpacked(tmp_path / "m.seqlab") as run:
        shutil.copytree(run, tmp_path / "run")
    fitted = {}
    for model, out in ((tmp_path / "run", []), (tmp_path / "m.seqlab", ["--out", str(tmp_path / "c.seqlab")])):
        for path, extra in ((utf8, []), (latin, ["--encoding", "latin-1"])):
            code, printed, _ = _run(["calibrate", str(model), str(path), *out, *extra], capsys)
            assert code == 0, printed
            fitted[model.name, path.name] = json.loads(printed)["temperature"]
        code, _, err = _run(["calibrate", str(model), str(latin), *out], capsys)
        assert code == 2 and f"{latin}:" in err and "read it with --encoding latin-1" in err
    assert len(set(fitted.values())) == 1, fitted


def test_utf16_lines_keep_their_ends_and_lose_the_byte_order_mark() -> None:
    raw = io.BytesIO("Zürich\r\nMünchen\n\nend".encode("utf-16"))
    assert list(decoded_lines(raw, "x", "utf-16")) == ["Zürich\r\n", "München\n", "\n", "end"]
    assert list(decoded_lines(io.BytesIO("a\nb\n".encode("utf-16-le")), "x", "utf-16-le")) == ["a\n", "b\n"]


def test_the_python_api_evaluates_and_decodes_a_file_in_the_encoding_given(tmp_path) -> None:
    """``evaluate`` and ``outcomes`` take ``encoding`` as ``seqlab eval --encoding`` does (the same reader)."""
    import seqlab
    from seqlab.core.errors import SeqlabError

    tagger = seqlab.load("en-ner-conll03")
    utf8, latin = _write(tmp_path / "u.txt", GOLD, "utf-8"), _write(tmp_path / "l.txt", GOLD, "latin-1")
    expected = tagger.evaluate(utf8).to_dict()
    assert tagger.evaluate(latin, encoding="latin-1").to_dict() == expected
    assert tagger.evaluate(tagger.outcomes(latin, encoding="latin-1")).to_dict() == expected
    with pytest.raises(SeqlabError, match="looks like latin-1 text: read it with --encoding latin-1"):
        tagger.evaluate(latin)
