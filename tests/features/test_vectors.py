"""features.vectors, the one word-vector reader: every format round-trips, selection rules, and errors that name file and line.

Fixtures are written into tmp_path in the real formats: by gensim (word2vec text and
binary, GloVe without header, gzipped), in fastText's own ``.vec`` layout, and as tiny
fastText models trained on a few hundred words.
"""
from __future__ import annotations

import gzip
import logging
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from features.base import FeatureError, FeatureFileError
from features.vectors import FORMATS, READ_FORMATS, PretrainedVectors, load_vectors, read_vectors, select_vectors
from seqlab.core.paths import data_root

WORDS = ["the", "Paris", "paris", "london", "cat", "é-ville", "2024"]
VECTORS = np.random.default_rng(0).normal(size=(len(WORDS), 4)).astype(np.float32)
TEXT_FORMATS = ("glove", "word2vec", "word2vec_bin", "fasttext_vec")
GLOVE_6B = Path("wordreprs/glove6b50d/glove.6B.50d.txt.gz")


def write_vectors(path: Path, fmt: str, words=WORDS, vectors=VECTORS) -> Path:
    """Write ``words``' vectors to ``path`` in ``fmt`` (gzipped if ``path`` ends in .gz)."""
    if fmt == "fasttext_vec":  # fastText's own layout: header, then a space after every value
        lines = [f"{len(words)} {vectors.shape[1]}"] + [
            w + " " + "".join(f"{x:.5f} " for x in row) for w, row in zip(words, vectors)
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
        return path
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vectors.shape[1])
    kv.add_vectors(words, vectors)
    kv.save_word2vec_format(str(path), binary=fmt == "word2vec_bin", write_header=fmt != "glove")
    return path


def write_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def train_fasttext(path: Path, **options) -> Path:
    """A tiny skip-gram fastText model (well under a second), saved to ``path``."""
    from features.fasttext_train import train_unsupervised

    rng = random.Random(0)
    vocab = "the cat sat on a mat dog ran in park Paris London city river bank money house tree".split()
    corpus = path.with_suffix(".txt")
    corpus.write_text("\n".join(" ".join(rng.choices(vocab, k=10)) for _ in range(40)) + "\n")
    settings = dict(model="skipgram", dim=8, epoch=1, min_count=1, minn=2, maxn=4, bucket=2000, verbose=0)
    model = train_unsupervised(str(corpus), **(settings | options))
    model.save_model(str(path))
    return path


@pytest.fixture(scope="module")
def fasttext_bin(tmp_path_factory) -> Path:
    return train_fasttext(tmp_path_factory.mktemp("fasttext") / "tiny.bin")


@pytest.fixture
def glove(tmp_path) -> PretrainedVectors:
    return load_vectors(write_vectors(tmp_path / "tiny.glove.txt", "glove"), "glove")


def test_formats():
    assert FORMATS == ("glove", "word2vec", "word2vec_bin", "fasttext_vec", "fasttext_bin", "spacy")
    assert set(READ_FORMATS) == set(FORMATS) - {"fasttext_bin", "spacy"} | {"auto", "turian"}


@pytest.mark.parametrize("suffix", ["", ".gz"])
@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_round_trip(tmp_path, fmt, suffix):
    path = write_vectors(tmp_path / f"vectors.{fmt}{suffix}", fmt)
    vectors = load_vectors(str(path), fmt)
    assert (len(vectors), vectors.dim, vectors.has_subwords) == (len(WORDS), 4, False)
    for word, row in zip(WORDS, VECTORS):
        assert word in vectors
        found = vectors.lookup(word)
        assert found.dtype == np.float32
        np.testing.assert_allclose(found, row, atol=1e-5)
    assert "Cat" not in vectors and vectors.lookup("Cat") is None  # exact keys, no case folding


def test_lookup_returns_a_copy(glove):
    glove.lookup("cat")[:] = 0
    np.testing.assert_allclose(glove.lookup("cat"), VECTORS[WORDS.index("cat")])


def test_duplicate_words_keep_the_first(tmp_path, caplog):
    path = write_text(tmp_path / "dup.txt", "a 1 2\nb 3 4\na 5 6\n")
    with caplog.at_level(logging.WARNING, logger="features.vectors"):
        vectors = load_vectors(path, "glove")
    assert "dup.txt:3: duplicate word 'a' (first on line 1); keeping the first vector" in caplog.text
    assert len(vectors) == 2
    np.testing.assert_array_equal(vectors.lookup("a"), [1, 2])


def test_zero_vector_written_in_full_is_fine(tmp_path):
    # A row of equal values is also what gensim makes of a one-value line; this one is real.
    vectors = load_vectors(write_text(tmp_path / "unk.txt", "<unk> 0 0 0\nb 1 2 3\n"), "glove")
    np.testing.assert_array_equal(vectors.lookup("<unk>"), [0, 0, 0])


def test_truncated_word2vec_bin(tmp_path):
    path = write_vectors(tmp_path / "cut.bin", "word2vec_bin")
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(FeatureError, match=r"cut\.bin: cannot read word2vec binary vectors .*truncated"):
        load_vectors(path, "word2vec_bin")


def test_logs_what_was_loaded(tmp_path, caplog):
    path = write_vectors(tmp_path / "tiny.txt", "word2vec")
    with caplog.at_level(logging.INFO, logger="features.vectors"):
        load_vectors(path, "word2vec")
    assert f"loaded {len(WORDS)} word2vec vectors of dim 4 from {path}" in caplog.text


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_fasttext_bin_has_subwords(tmp_path, fasttext_bin, suffix):
    import fasttext

    model = fasttext.load_model(str(fasttext_bin))
    path = fasttext_bin
    if suffix:
        path = tmp_path / "tiny.bin.gz"
        path.write_bytes(gzip.compress(fasttext_bin.read_bytes()))
    vectors = load_vectors(path, "fasttext_bin")
    assert (len(vectors), vectors.dim, vectors.has_subwords) == (len(model.words), 8, True)
    assert "cat" in vectors and "cats" not in vectors and "Cat" not in vectors
    for word in ("cat", "cats", "Cat"):
        np.testing.assert_array_equal(vectors.lookup(word), model.get_word_vector(word))
    assert np.abs(vectors.lookup("cats")).sum() > 0


def test_fasttext_bin_without_subwords(tmp_path):
    vectors = load_vectors(train_fasttext(tmp_path / "words-only.bin", maxn=0, dim=10), "fasttext_bin")
    assert not vectors.has_subwords
    assert vectors.lookup("cat") is not None and vectors.lookup("cats") is None


def test_select_prefers_exact_then_lowercase(glove):
    chosen = select_vectors(glove, ["Paris", "London", "cat", "Berlin", "cat"])
    assert list(chosen) == ["Paris", "London", "cat"]  # Berlin: not found, left out
    np.testing.assert_allclose(chosen["Paris"], VECTORS[WORDS.index("Paris")])  # not paris's
    np.testing.assert_allclose(chosen["London"], VECTORS[WORDS.index("london")])
    assert all(v.dtype == np.float32 for v in chosen.values())


def test_select_without_lowercase_fallback(glove):
    assert list(select_vectors(glove, ["Paris", "London", "cat"], lowercase_fallback=False)) == ["Paris", "cat"]


def test_select_subwords_for_unseen_words(fasttext_bin):
    import fasttext

    model = fasttext.load_model(str(fasttext_bin))
    vectors = load_vectors(fasttext_bin, "fasttext_bin")
    chosen = select_vectors(vectors, ["City", "Cities", "cat"])
    assert list(chosen) == ["City", "Cities", "cat"]
    np.testing.assert_array_equal(chosen["City"], model.get_word_vector("city"))  # lower-cased form is known
    np.testing.assert_array_equal(chosen["Cities"], model.get_word_vector("Cities"))  # subwords, as written
    assert all(v.dtype == np.float32 for v in chosen.values())


def test_select_from_a_dict_store():
    vectors = PretrainedVectors(dim=2, has_subwords=False, store={"a": np.array([1.0, 2.0])})
    chosen = select_vectors(vectors, ["A", "b"])
    assert list(chosen) == ["A"] and chosen["A"].dtype == np.float32


def test_select_rejects_a_single_string(glove):
    with pytest.raises(TypeError, match="single string 'cat'"):
        select_vectors(glove, "cat")


# (file name, content, fmt, line, message pattern); line None: a FeatureError without a line.
MALFORMED = [
    ("short.txt", "a 1 2 3\nb 4 5\n", "glove", 2, r"expected a word and 3 values \(as on line 1\), but got 2"),
    ("long.txt", "a 1 2 3\nb 4 5 6 7\n", "glove", 2, r"expected a word and 3 values .*got 4"),
    ("one.txt", "a 1 2 3\nb 4\n", "glove", 2, r"expected a word and 3 values .*got 1"),  # gensim broadcasts it
    ("word.txt", "a 1 2 3\nb 4 x 6\n", "glove", 2, r"expected a number, but got 'x'"),
    ("nan.txt", "a 1 2 3\nb 4 nan 6\n", "glove", 2, r"expected a finite number, but got 'nan'"),
    ("spaces.txt", "a 1 2 3\nb 4  5\n", "glove", 2, r"got ''; fields must be separated by single spaces"),
    ("tabs.txt", "a\t1\t2\nb\t3\t4\n", "glove", 1, r"expected a word and its values, but got 'a\\t1\\t2'; fields must be separated by single spaces"),
    ("blank.txt", "a 1 2 3\n\nb 4 5 6\n", "glove", 2, r"empty line \(expected a word and its values\)"),
    ("header.txt", "2 3\na 1 2 3\nb 4 5 6\n", "glove", 1, r"header '2 3'.*fmt='word2vec'"),
    ("latin1.txt", "a 1 2 3\n\xe9t\xe9 4 5 6\n", "glove", 2, r"not UTF-8 text"),
    ("noheader.vec", "a 1 2 3\n", "word2vec", 1, r"expected a header '<count> <dim>', but got 'a 1 2 3'.*fmt='glove'"),
    ("dim.vec", "2 4\na 1 2 3\nb 4 5 6\n", "fasttext_vec", 2, r"4 values \(as declared in the header\), but got 3"),
    ("count.vec", "3 3\na 1 2 3\nb 4 5 6\n", "word2vec", 1, r"header declares 3 vectors, but the file has 2"),
    ("empty.txt", "", "glove", None, r"empty.txt: the file is empty"),
    ("empty.vec", "", "word2vec", None, r"empty.vec: the file is empty"),
    ("header-only.vec", "0 3\n", "word2vec", None, r"header-only.vec: the file holds no word vectors"),
    ("glove.bin", "a 1 2 3\n", "word2vec_bin", 1, r"expected a header .*but got 'a 1 2 3'.*fmt='glove'"),
    ("w2v.bin", "2 3\na 1 2 3\nb 4 5 6\n", "word2vec_bin", 2, r"word2vec text, not binary.*fmt='word2vec'"),
    ("text.bin", "a 1 2 3\n", "fasttext_bin", None, r"text.bin: not a fastText \.bin model"),
]


@pytest.mark.parametrize(("name", "content", "fmt", "line", "pattern"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_files(tmp_path, name, content, fmt, line, pattern):
    path = tmp_path / name
    path.write_bytes(content.encode("latin-1" if name.startswith("latin1") else "utf-8"))
    with pytest.raises(FeatureError, match=pattern) as caught:
        load_vectors(path, fmt)
    assert str(path) in str(caught.value)
    if line is not None:
        assert isinstance(caught.value, FeatureFileError) and caught.value.line == line
        assert str(caught.value).startswith(f"{path}:{line}: ")


def test_malformed_line_in_gzipped_file(tmp_path):
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(gzip.compress(b"a 1 2 3\nb 4 5 6\nc 7 8\n"))
    with pytest.raises(FeatureFileError, match=r"bad\.txt\.gz:3: expected a word and 3 values"):
        load_vectors(path, "glove")


@pytest.mark.parametrize("fmt", TEXT_FORMATS + ("fasttext_bin",))
def test_corrupt_gzip(tmp_path, fmt):
    path = tmp_path / "corrupt.gz"
    written = write_vectors(tmp_path / "vectors", "glove" if fmt == "fasttext_bin" else fmt).read_bytes()
    path.write_bytes(gzip.compress(written)[:-12])  # cut off mid-stream
    with pytest.raises(FeatureError, match=r"corrupt\.gz(:\d+)?: cannot (read|decompress)"):
        load_vectors(path, fmt)


@pytest.mark.parametrize(
    ("path", "fmt", "pattern"),
    [
        ("nope.txt", "glove", r"nope\.txt: no such file \(expected glove word vectors\)"),
        (".", "glove", r"not a file"),
        ("nope.txt", "glvoe", r"unknown vector format 'glvoe': expected one of glove, word2vec, word2vec_bin, "
                              r"fasttext_vec, fasttext_bin, spacy; did you mean 'glove'\?"),
        ("nope.txt", "fasttext", r"unknown vector format 'fasttext'.*did you mean 'fasttext_vec'\?"),
        ("nope.txt", "senna", r"unknown vector format 'senna': expected one of [a-z0-9_, ]+$"),
    ],
)
def test_bad_arguments(tmp_path, path, fmt, pattern):
    with pytest.raises(FeatureError, match=pattern):
        load_vectors(tmp_path / path, fmt)


@pytest.mark.parametrize(("module", "fmt"), [("gensim.models", "word2vec_bin"), ("fasttext", "fasttext_bin")])
def test_missing_dependency_has_install_hint(tmp_path, monkeypatch, module, fmt):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    path = write_text(tmp_path / "any", "a 1 2\n")
    with pytest.raises(ImportError, match=f"pip install {module.split('.')[0]}") as caught:
        load_vectors(path, fmt)
    assert isinstance(caught.value, FeatureError)  # shown without a traceback by seqlab


@pytest.mark.parametrize("fmt", ["glove", "word2vec", "fasttext_vec"])
def test_text_formats_need_no_gensim(tmp_path, monkeypatch, fmt):
    path = write_vectors(tmp_path / "v.txt", fmt)
    monkeypatch.setitem(sys.modules, "gensim.models", None)
    monkeypatch.setitem(sys.modules, "gensim", None)
    assert len(load_vectors(path, fmt)) == len(WORDS)


def test_header_line_in_a_glove_file_read_as_auto_is_a_vector_line(tmp_path):
    words, matrix = read_vectors(write_text(tmp_path / "v.txt", "a 1 2\nb 3 4\n"))
    assert words == ["a", "b"] and matrix.dtype == np.float32


@pytest.mark.slow
def test_real_glove_6b_50d():
    root = data_root()
    if root is None or not (root / GLOVE_6B).is_file():
        pytest.skip(f"{GLOVE_6B} not found under the data folder ({root}); set SEQLAB_DATA=/path/to/data")
    vectors = load_vectors(root / GLOVE_6B, "glove")
    assert (len(vectors), vectors.dim) == (400_000, 50)
    np.testing.assert_allclose(vectors.lookup("the")[:3], [0.418, 0.24968, -0.41242], rtol=1e-6)
    chosen = select_vectors(vectors, ["The", "Paris", "qwzxqwzx"])
    assert list(chosen) == ["The", "Paris"]  # GloVe 6B is lower-cased
