"""features.corpus: Liang's cleaning, number shapes, streaming and writing corpora."""
from __future__ import annotations

import gzip
import itertools
import os
from pathlib import Path

import pytest

from features.base import FeatureFileError
from features.corpus import (
    CorpusStats,
    corpus_stats,
    is_clean,
    normalize_number,
    read_corpus,
    write_corpus,
)


def data_root() -> Path:
    """$SEQLAB_DATA, else ../shared/data beside the repository root."""
    env = os.environ.get("SEQLAB_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.mark.parametrize(
    "tokens, clean",
    [
        (["abcdefghi", "."], True),  # 9 of 10: exactly 90% is kept
        (["abcdefgh", "."], False),  # 8 of 9 = 88.9%
        (["a" * 63 + "." * 7], True),  # 63 of 70 = 90%, where 0.9 * 70 in floats is 63.00000000000001
        (["a" * 62 + "." * 7], False),
        (["The", "cat"], False),  # the capital counts against: 5 of 6
        (["the", "cat", "sat", "on", "the", "mat", "."], True),  # 15 of 16
        (["ab cd"], True),  # whitespace is not counted
        (["café"], False),  # only a-z count: 3 of 4
        (["in", "1980"], False),
        ([], False),
        ([""], False),
    ],
)
def test_is_clean_threshold(tokens, clean):
    assert is_clean(tokens) is clean


@pytest.mark.parametrize(
    "token, shape",
    [
        ("1980", "*DDDD*"),
        ("3.5", "*D.D*"),
        ("1,234.5", "*D,DDD.D*"),
        ("08/22", "*DD/DD*"),
        ("1996-08-22", "*DDDD-DD-DD*"),
        ("12:30", "*DD:DD*"),
        ("+0.05", "*+D.DD*"),
        ("7", "*D*"),
        ("1980s", "1980s"),  # a letter: kept
        ("F-16", "F-16"),
        ("mid-1990", "mid-1990"),
        (".", "."),  # no digit: kept
        ("--", "--"),
        ("½", "½"),  # numeric but not a decimal digit: kept
        ("word", "word"),
    ],
)
def test_normalize_number(token, shape):
    assert normalize_number(token) == shape


def write_lines(path: Path, lines: list[str]) -> Path:
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


PARAGRAPHS = [
    "The cat sat on the mat in 1980. the dog sat on the rug at 3.5 pm.",
    "",
    "PRICES ROSE 5 PCT . Prices rose.",
    "prices rose again.",
]


@pytest.mark.parametrize("name", ["corpus.txt", "corpus.txt.gz", "gzipped-without-suffix"])
def test_read_corpus_plain_and_gzipped(tmp_path, name):
    path = tmp_path / name
    data = "".join(p + "\n" for p in PARAGRAPHS).encode("utf-8")
    path.write_bytes(data if name == "corpus.txt" else gzip.compress(data))
    assert list(read_corpus(path)) == [
        ["The", "cat", "sat", "on", "the", "mat", "in", "1980", ".", "the", "dog", "sat", "on", "the", "rug",
         "at", "3.5", "pm", "."],
        ["PRICES", "ROSE", "5", "PCT", "."],
        ["Prices", "rose", "."],
        ["prices", "rose", "again", "."],
    ]


def test_read_corpus_options_apply_in_order(tmp_path):
    path = write_lines(tmp_path / "c.txt", PARAGRAPHS)
    # clean tests the original text, lowercase comes next, and number shapes stay upper-case
    assert list(read_corpus(path, clean=True, lowercase=True, normalize_numbers=True)) == [
        ["prices", "rose", "again", "."],
    ]
    assert list(read_corpus(path, lowercase=True, normalize_numbers=True))[1] == ["prices", "rose", "*D*", "pct", "."]


def test_read_corpus_pretokenized_lines(tmp_path):
    path = write_lines(tmp_path / "c.txt", ["U.S. *DDDD* can't  go", "", "one"])
    assert list(read_corpus(path, tokenize=False)) == [["U.S.", "*DDDD*", "can't", "go"], ["one"]]


def test_read_corpus_folder_and_lists(tmp_path):
    write_lines(tmp_path / "b.txt.gz", ["Second file."])
    write_lines(tmp_path / "a.txt", ["First file."])
    (tmp_path / "PROVENANCE.md").write_text("Not corpus text.\n")
    expected = [["First", "file", "."], ["Second", "file", "."]]
    assert list(read_corpus(tmp_path)) == expected
    assert list(read_corpus([tmp_path / "a.txt", str(tmp_path / "b.txt.gz")])) == expected


def test_read_corpus_streams(tmp_path):
    path = write_lines(tmp_path / "c.txt", ["One. Two."] * 1000)
    assert list(itertools.islice(read_corpus(path), 3)) == [["One", "."], ["Two", "."], ["One", "."]]


def test_read_corpus_strips_bom_and_crlf(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes("\ufeffHello there.\r\nBye.\r\n".encode("utf-8"))
    assert list(read_corpus(path)) == [["Hello", "there", "."], ["Bye", "."]]


def test_read_corpus_missing_file_fails_before_reading(tmp_path):
    with pytest.raises(FileNotFoundError, match="corpus file not found: .*nope.txt"):
        read_corpus(tmp_path / "nope.txt")


def test_read_corpus_empty_folder(tmp_path):
    (tmp_path / "notes.md").write_text("x")
    with pytest.raises(ValueError, match="holds no .txt or .txt.gz files"):
        read_corpus(tmp_path)


@pytest.mark.parametrize("lines", [[], [""], ["", "   ", ""]])
def test_empty_corpus_names_its_files(tmp_path, lines):
    a = write_lines(tmp_path / "a.txt", lines)
    b = write_lines(tmp_path / "b.txt.gz", [])
    with pytest.raises(ValueError, match=r"empty corpus: no sentences in .*a\.txt, .*b\.txt\.gz$"):
        list(read_corpus([a, b]))


def test_corpus_emptied_by_cleaning(tmp_path):
    path = write_lines(tmp_path / "a.txt", ["The End.", "ALL CAPS."])
    with pytest.raises(ValueError, match=r"a\.txt after cleaning \(all 2 sentences were dropped\)"):
        list(read_corpus(path, clean=True))


def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"Fine line.\nCaf\xe9 au lait.\n")
    with pytest.raises(FeatureFileError, match=r"bad\.txt:2: not UTF-8 text \(invalid continuation byte at byte 3"):
        list(read_corpus(path))


def test_invalid_utf8_in_gzip_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(gzip.compress(b"One.\nTwo.\n\xff\n"))
    with pytest.raises(FeatureFileError, match=r"bad\.txt\.gz:3: not UTF-8"):
        list(read_corpus(path))


def test_truncated_gzip_names_file(tmp_path):
    path = tmp_path / "cut.txt.gz"
    data = gzip.compress("".join(f"Sentence number {i}.\n" for i in range(2000)).encode())
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(FeatureFileError, match=r"cut\.txt\.gz:\d+: cannot read \((EOFError|BadGzipFile|error)"):
        list(read_corpus(path))


def test_corpus_stats():
    stats = corpus_stats([["a", "b", "a"], ["b", "c"], []])
    assert stats == CorpusStats(sentences=3, tokens=5, types=3)
    assert str(CorpusStats(1234, 5, 6)) == "1,234 sentences, 5 tokens, 6 types"


@pytest.mark.parametrize("name", ["out.txt", "out.txt.gz"])
def test_write_corpus_round_trip(tmp_path, name):
    sentences = [["EU", "rejects", "*DD*"], ["Zürich", "'s", "."]]
    stats = write_corpus(iter(sentences), tmp_path / "sub" / name, progress=False)
    assert stats == CorpusStats(2, 6, 6)
    assert list(read_corpus(tmp_path / "sub" / name, tokenize=False)) == sentences
    assert os.listdir(tmp_path / "sub") == [name]  # no temporary file left


@pytest.mark.parametrize(
    "sentences, message",
    [
        ([["ok"], ["two words"]], r"sentence 2: tokens must be non-empty and hold no whitespace"),
        ([["ok"], ["a", ""]], r"sentence 2: tokens must be non-empty"),
        ([["ok"], []], r"sentence 2: tokens must be non-empty"),
        ([], r"no sentences to write to .*out\.txt"),
    ],
)
def test_write_corpus_is_atomic_on_error(tmp_path, sentences, message):
    path = tmp_path / "out.txt"
    path.write_text("old content\n")
    with pytest.raises(ValueError, match=message):
        write_corpus(sentences, path, progress=False)
    assert path.read_text() == "old content\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_real_reuters_first_lines():
    path = data_root() / "unlabeled" / "reuters21578_text.txt"
    if not path.is_file():
        pytest.skip(f"Reuters-21578 text not found at {path}: set SEQLAB_DATA or place the data at ../shared/data")
    first = list(itertools.islice(read_corpus(path), 50))
    assert first[0] == ["BAHIA", "COCOA", "REVIEW", "."]
    assert first[1][:3] == ["Showers", "continued", "throughout"]
    assert all(first)
    cleaned = list(itertools.islice(read_corpus(path, clean=True), 50))
    assert all(is_clean(s) for s in cleaned)
    normalized = list(itertools.islice(read_corpus(path, clean=True, normalize_numbers=True), 50))
    assert len(normalized) == 50 and any("*D.D*" in s for s in normalized)  # "around 6.4 mln bags"
    stats = corpus_stats(itertools.islice(read_corpus(path), 200))
    assert stats.sentences == 200 and stats.tokens > 2000


def test_real_wikipedia_first_lines():
    path = data_root() / "unlabeled" / "wikipedia_en_2014" / "enwiki2014_part_AA.txt.gz"
    if not path.is_file():
        pytest.skip(f"Wikipedia 2014 text not found at {path}: set SEQLAB_DATA or place the data at ../shared/data")
    first = next(read_corpus(path))
    assert first[:6] == ["Chen", "Zhili", "(", ";", "born", "November"]
