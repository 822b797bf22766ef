"""features.vector_cache: a parsed vector file is read back from the cache, keyed by file and reader."""
from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest

from features import vector_cache
from features.vectors import read_vectors
from features.vector_cache import cache_root, cached_vectors, entry_for

GLOVE = "the 0.1 0.2 0.3\nof -0.5 0.25 1\nWörld 1e-3 2 -3\n"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("SEQLAB_CACHE", str(root))
    return root


@pytest.fixture
def glove(tmp_path) -> Path:
    path = tmp_path / "vectors.txt"
    path.write_text(GLOVE, encoding="utf-8")
    return path


class CountingReader:
    def __init__(self, words: list[str], matrix: np.ndarray) -> None:
        self.calls, self.words, self.matrix = 0, words, matrix

    def __call__(self) -> tuple[list[str], np.ndarray]:
        self.calls += 1
        return list(self.words), self.matrix.copy()


def test_root_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLAB_CACHE", "OFF")
    assert cache_root() is None
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path))
    assert cache_root() == tmp_path
    monkeypatch.delenv("SEQLAB_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "seqlab"


def test_the_second_read_comes_from_the_cache(cache, glove, caplog):
    reader = CountingReader(["the", "of", "Wörld"], np.arange(9, dtype=np.float32).reshape(3, 3))
    first = cached_vectors(glove, "test", reader)
    with caplog.at_level(logging.INFO, logger="features.vector_cache"):
        second = cached_vectors(glove, "test", reader)
    assert reader.calls == 1 and "3 vectors from the cache" in caplog.text
    assert second[0] == first[0] == ["the", "of", "Wörld"]
    np.testing.assert_array_equal(second[1], first[1])
    assert second[1].dtype == np.float32 and second[1].flags.writeable  # callers may scale it in place
    assert not any(p.name.startswith(".") for p in (cache / "vectors").iterdir())  # no temporary folder left


def test_words_with_odd_characters_come_back_as_they_were(cache, glove):
    words = ["a\rb", "tab\there", "line\u2028sep", "naïve", ""]
    reader = CountingReader(words, np.arange(10, dtype=np.float32).reshape(5, 2))
    cached_vectors(glove, "test", reader)
    assert cached_vectors(glove, "test", reader)[0] == words and reader.calls == 1


def test_a_changed_file_or_another_reader_parses_again(cache, glove):
    reader = CountingReader(["a"], np.ones((1, 2), dtype=np.float32))
    cached_vectors(glove, "test", reader)
    cached_vectors(glove, "other reader", reader)
    assert reader.calls == 2
    stat = glove.stat()
    os.utime(glove, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    cached_vectors(glove, "test", reader)
    assert reader.calls == 3


def test_an_unreadable_entry_is_parsed_again_and_replaced(cache, glove, caplog):
    reader = CountingReader(["a", "b"], np.ones((2, 2), dtype=np.float32))
    cached_vectors(glove, "test", reader)
    entry = entry_for(glove.resolve(), "test", cache)
    (entry / vector_cache.MATRIX).write_bytes(b"\x93NUMPY truncated")
    with caplog.at_level(logging.WARNING, logger="features.vector_cache"):
        words, _ = cached_vectors(glove, "test", reader)
    assert reader.calls == 2 and words == ["a", "b"] and "ignoring the unreadable vector cache entry" in caplog.text
    (entry / vector_cache.WORDS).write_text("a", encoding="utf-8")  # one word for two rows
    cached_vectors(glove, "test", reader)
    assert reader.calls == 3


def test_a_pickled_matrix_is_never_loaded(cache, glove):
    reader = CountingReader(["a"], np.ones((1, 2), dtype=np.float32))
    cached_vectors(glove, "test", reader)
    entry = entry_for(glove.resolve(), "test", cache)
    np.save(entry / vector_cache.MATRIX, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    cached_vectors(glove, "test", reader)
    assert reader.calls == 2


def test_an_unwritable_cache_only_costs_the_speed_up(tmp_path, monkeypatch, glove, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("SEQLAB_CACHE", str(blocker))
    reader = CountingReader(["a"], np.ones((1, 2), dtype=np.float32))
    with caplog.at_level(logging.WARNING, logger="features.vector_cache"):
        words, _ = cached_vectors(glove, "test", reader)
    assert words == ["a"] and "could not write the vector cache entry" in caplog.text


def test_off_means_no_files(tmp_path, monkeypatch, glove):
    monkeypatch.setenv("SEQLAB_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    reader = CountingReader(["a"], np.ones((1, 2), dtype=np.float32))
    cached_vectors(glove, "test", reader)
    cached_vectors(glove, "test", reader)
    assert reader.calls == 2 and not (tmp_path / "xdg").exists()


def test_features_read_vectors_gives_the_same_table_from_the_cache(cache, glove):
    parsed = read_vectors(glove)
    cached = read_vectors(glove)
    assert cached[0] == parsed[0] == ["the", "of", "Wörld"]
    np.testing.assert_array_equal(cached[1], parsed[1])
    assert len(list((cache / "vectors").iterdir())) == 1


def test_load_vectors_gives_the_same_vectors_from_the_cache(cache, glove):
    from features.vectors import load_vectors

    first, second = load_vectors(glove, "glove"), load_vectors(glove, "glove")
    assert len(second) == 3 and second.dim == 3 and "Wörld" in second
    np.testing.assert_array_equal(second.lookup("of"), first.lookup("of"))
    np.testing.assert_allclose(second.lookup("of"), [-0.5, 0.25, 1.0])
    read_vectors(glove)
    assert len(list((cache / "vectors").iterdir())) == 1  # one reader, one entry, made once
