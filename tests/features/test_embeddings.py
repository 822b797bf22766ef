"""features.embeddings: both text layouts, lookup rules, scaling, nearest words, errors naming file and line."""
from __future__ import annotations

import gzip
import itertools
import logging
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from features.base import DiscreteExtractor, FeatureFileError, SentenceTransformer
from features.embeddings import EmbeddingFeatures
from features.vectors import detect_format
from features.scaling import scale_embeddings

REPO = Path(__file__).resolve().parents[2]
# Turian et al.'s layout: word, then the numbers, single spaces, no header
TURIAN = """*UNKNOWN* 0 0 1
the 1 2 3
Apple 1 0 0
apple 0.5 0.5 0
*DDDD* -1 -2 -3
"""
WORDS = ["*UNKNOWN*", "the", "Apple", "apple", "*DDDD*"]
RAW = np.array([[0, 0, 1], [1, 2, 3], [1, 0, 0], [0.5, 0.5, 0], [-1, -2, -3]], dtype=np.float32)


def data_root() -> Path:
    """$SEQLAB_DATA, else ../shared/data beside the repository root."""
    env = os.environ.get("SEQLAB_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def write(path: Path, text: str | bytes) -> Path:
    data = text.encode("utf-8") if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def word2vec_text(words=WORDS, vectors=RAW) -> str:
    return f"{len(words)} {vectors.shape[1]}\n" + "".join(
        w + " " + " ".join(f"{x:g}" for x in row) + "\n" for w, row in zip(words, vectors)
    )


@pytest.mark.parametrize(
    "name, text, layout",
    [
        ("embeddings-scaled.EMBEDDING_SIZE=3.txt", TURIAN, "turian"),
        ("turian.txt.gz", TURIAN, "turian"),
        ("vectors.w2v.txt", word2vec_text(), "word2vec"),
        ("vectors.w2v.txt.gz", word2vec_text(), "word2vec"),
        # fastText .vec style: a space after every value
        ("vectors.vec", word2vec_text().replace("\n", " \n").replace(f"5 3 \n", "5 3\n", 1), "word2vec"),
    ],
)
def test_layouts_read_exactly(tmp_path, name, text, layout):
    path = write(tmp_path / name, text)
    assert detect_format(path) == layout
    emb = EmbeddingFeatures.load(path, scale=None)
    assert emb.words == WORDS and emb.dim == 3 and len(emb) == 5
    np.testing.assert_array_equal(emb.vectors, RAW)
    assert emb.vectors.dtype == np.float32
    forced = EmbeddingFeatures.load(path, fmt=layout, scale=None)
    np.testing.assert_array_equal(forced.vectors, RAW)


def test_glove_is_an_alias_of_the_turian_layout(tmp_path):
    emb = EmbeddingFeatures.load(write(tmp_path / "g.txt", TURIAN), fmt="glove", scale=None)
    assert emb.words == WORDS


def test_scaled_by_default(tmp_path):
    emb = EmbeddingFeatures.load(write(tmp_path / "t.txt", TURIAN))
    np.testing.assert_allclose(emb.vectors, scale_embeddings(RAW, 0.1), rtol=1e-6)
    assert float(emb.vectors.std(dtype=np.float64)) == pytest.approx(0.1, rel=1e-5)
    assert emb.scale == 0.1
    half = EmbeddingFeatures(WORDS, RAW, scale=0.5)
    assert float(half.vectors.std(dtype=np.float64)) == pytest.approx(0.5, rel=1e-5)


def test_lookup_rules():
    emb = EmbeddingFeatures(WORDS, RAW, scale=None, lowercase=True, normalize_numbers=True)
    assert emb.unknown_word == "*UNKNOWN*"
    arr = emb(["The", "Apple", "APPLE", "1980", "19", "pear"])
    assert arr.dtype == np.float32 and arr.shape == (6, 3)
    np.testing.assert_array_equal(arr, RAW[[1, 2, 3, 4, 0, 0]])  # exact first, then lower-cased, then *DDDD*
    assert emb.key("APPLE") == "apple" and emb.key("pear") is None
    assert "1980" in emb and "pear" not in emb
    assert emb.lookup("pear") is None
    np.testing.assert_array_equal(emb.lookup("the"), RAW[1])
    strict = EmbeddingFeatures(WORDS, RAW, scale=None)
    np.testing.assert_array_equal(strict(["The", "1980"]), RAW[[0, 0]])  # case-sensitive: the *UNKNOWN* row


def test_zeros_without_an_unknown_row():
    emb = EmbeddingFeatures(WORDS[1:], RAW[1:], scale=None)
    assert emb.unknown_word is None
    np.testing.assert_array_equal(emb(["the", "pear"]), [RAW[1], [0, 0, 0]])
    assert emb([]).shape == (0, 3)


def test_feature_dicts_match_the_array():
    emb = EmbeddingFeatures(WORDS, RAW, scale=None)
    assert emb.feature_dicts(["the"]) == [{"emb[0]": 1.0, "emb[1]": 2.0, "emb[2]": 3.0}]
    assert isinstance(emb, DiscreteExtractor)


def test_nearest_by_cosine():
    words = ["a", "b", "c", "d", "zero"]
    vectors = np.array([[1, 0], [0.9, 0.1], [0, 1], [-1, 0], [0, 0]], dtype=np.float32)
    emb = EmbeddingFeatures(words, vectors)  # scaling does not change cosines
    near = emb.nearest("a", 3)
    assert [w for w, _ in near] == ["b", "c", "zero"]  # a itself left out; c and zero tie at 0, in file order
    assert near[0][1] == pytest.approx(0.9 / math.sqrt(0.82), rel=1e-6)
    assert near[1][1] == pytest.approx(0.0, abs=1e-7)
    assert [w for w, _ in emb.nearest("a", 100)] == ["b", "c", "zero", "d"]
    with pytest.raises(KeyError, match="'pear' has no vector"):
        emb.nearest("pear")
    with pytest.raises(ValueError, match="k must be a positive int, but got 0"):
        emb.nearest("a", 0)


BAD_TURIAN = [
    ("the 1 2 3\ncat 1 2\n", r"t\.txt:2: expected a word and 3 values \(as on line 1\), but got 2 values in 'cat 1 2'"),
    ("the 1 2 3\ncat 1 2 3 4\n", r"t\.txt:2: expected a word and 3 values \(as on line 1\), but got 4"),
    ("the 1 2 3\ncat 1 x 3\n", r"t\.txt:2: expected a number, but got 'x'"),
    ("the 1 2 3\ncat 1 nan 3\n", r"t\.txt:2: expected a finite number, but got 'nan'"),
    ("the 1 2 3\ncat 1 1e99 3\n", r"t\.txt:2: expected a finite number, but got '1e99'"),
    ("the 1 2 3\n\ncat 1 2 3\n", r"t\.txt:2: empty line"),
    ("the 1 2 3\ncat\t1\t2\t3\n", r"t\.txt:2: .*fields must be separated by single spaces"),
    ("the 1 2 3\ncat  1 2 3\n", r"t\.txt:2: .*single spaces"),
    ("lonely\n", r"t\.txt:1: expected a word and its values, but got 'lonely'"),
    (b"the 1 2 3\ncaf\xe9 1 2 3\n", r"t\.txt:2: not UTF-8 text"),
]


@pytest.mark.parametrize("text, message", BAD_TURIAN)
def test_turian_layout_errors(tmp_path, text, message):
    with pytest.raises(FeatureFileError, match=message):
        EmbeddingFeatures.load(write(tmp_path / "t.txt", text))


def test_errors_name_lines_deep_in_a_gzipped_file(tmp_path):
    lines = [f"w{i} {i} 1" for i in range(20000)]
    lines[17321] = "w17321 1"
    path = write(tmp_path / "big.txt.gz", "\n".join(lines) + "\n")
    with pytest.raises(FeatureFileError, match=r"big\.txt\.gz:17322: expected a word and 2 values"):
        EmbeddingFeatures.load(path)
    lines[17321] = "w17321 1 oops"
    with pytest.raises(FeatureFileError, match=r"big\.txt\.gz:17322: expected a number, but got 'oops'"):
        EmbeddingFeatures.load(write(path, "\n".join(lines) + "\n"))


BAD_WORD2VEC = [
    # gensim would read this short line silently, spreading the one value
    ("3 2\na 1 2\nb 3\nc 5 6\n", r"w\.txt:3: expected a word and 2 values \(as declared in the header\), but got 1"),
    ("3 2\na 1 2\nb 3 4 5\nc 5 6\n", r"w\.txt:3: expected a word and 2 values .*but got 3"),
    ("3 2\na 1 2\nb 3 x\nc 5 6\n", r"w\.txt:3: expected a number, but got 'x'"),
    ("5 2\na 1 2\nb 3 4\n", r"w\.txt:1: the header declares 5 vectors, but the file has 2"),
    ("2 2\na 1 2\nb inf 4\n", r"w\.txt:3: expected a finite number, but got 'inf'"),
    (b"2 2\na 1 2\n\xff 3 4\n", r"w\.txt:3: not UTF-8 text"),
]


@pytest.mark.parametrize("text, message", BAD_WORD2VEC)
def test_word2vec_errors(tmp_path, text, message):
    with pytest.raises(FeatureFileError, match=message):
        EmbeddingFeatures.load(write(tmp_path / "w.txt", text))


def test_forced_word2vec_needs_a_header(tmp_path):
    with pytest.raises(FeatureFileError, match=r"t\.txt:1: expected a header '<count> <dim>', but got 'the 1 2 3'"):
        EmbeddingFeatures.load(write(tmp_path / "t.txt", "the 1 2 3\n"), fmt="word2vec")


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda p: EmbeddingFeatures.load(write(p / "e.txt", "")), ValueError, r"e\.txt: the file is empty"),
        (lambda p: EmbeddingFeatures.load(p / "nope.txt"), FileNotFoundError, r"embedding file not found: .*nope\.txt"),
        (lambda p: EmbeddingFeatures.load(write(p / "t.txt", TURIAN), fmt="glov"), ValueError,
         "unknown vector format 'glov': expected one of auto, glove, turian, word2vec, fasttext_vec, word2vec_bin; did you mean 'glove'"),
        (lambda p: EmbeddingFeatures(["a"], RAW), ValueError,
         "words and vectors must match, but got 1 words and 5 rows"),
        (lambda p: EmbeddingFeatures(["a", "a"], RAW[:2]), ValueError, "'a' occurs more than once"),
        (lambda p: EmbeddingFeatures([], np.zeros((0, 3))), ValueError, r"non-empty \(words, dim\) matrix"),
        (lambda p: EmbeddingFeatures(WORDS, RAW)("the"), TypeError, "single string 'the'"),
    ],
)
def test_other_errors(tmp_path, call, error, message):
    with pytest.raises(error, match=message):
        call(tmp_path)


def test_missing_gensim_gives_an_install_hint(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "gensim.models", None)
    with pytest.raises(ImportError, match="pip install gensim"):
        EmbeddingFeatures.load(write(tmp_path / "w.bin", "2 3\n"), fmt="word2vec_bin")
    assert EmbeddingFeatures.load(write(tmp_path / "t.txt", TURIAN)).dim == 3  # text layouts need no gensim
    assert EmbeddingFeatures.load(write(tmp_path / "w.txt", word2vec_text())).dim > 0


def test_a_duplicate_word_keeps_its_first_vector(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="features.vectors"):
        emb = EmbeddingFeatures.load(write(tmp_path / "t.txt", "the 1 2 3\ncat 1 2 3\nthe 4 5 6\n"), scale=None)
    assert emb.words == ["the", "cat"] and emb.lookup("the").tolist() == [1, 2, 3]
    assert "t.txt:3: duplicate word 'the' (first on line 1)" in caplog.text


def test_sklearn_adapter():
    emb = EmbeddingFeatures(WORDS, RAW)
    sentences = [["the", "apple"], ["pear"]]
    out = SentenceTransformer(emb).fit_transform(sentences)
    np.testing.assert_array_equal(out, emb.vectors[[1, 3, 0]])
    assert out.dtype == np.float32


def test_real_glove_first_lines(tmp_path):
    source = data_root() / "wordreprs" / "glove6b50d" / "glove.6B.50d.txt.gz"
    if not source.is_file():
        pytest.skip(f"GloVe 6B 50d not found at {source}: set SEQLAB_DATA or place the data at ../shared/data")
    with gzip.open(source, "rt", encoding="utf-8") as f:
        head = "".join(itertools.islice(f, 2000))
    emb = EmbeddingFeatures.load(write(tmp_path / "glove-head.txt.gz", head), lowercase=True)
    assert (len(emb), emb.dim) == (2000, 50) and emb.words[0] == "the"
    assert emb(["EU", "rejects", "German", "call"]).shape == (4, 50)
    assert "german" in [w for w, _ in emb.nearest("france", 20)]


def test_features_import_neither_seqlab_nor_torch_nor_gensim():
    code = (
        "import sys; import features.corpus, features.orthographic, features.labels, "
        "features.scaling, features.embeddings; "
        "bad = sorted(m for m in ('seqlab', 'torch', 'gensim') if m in sys.modules); "
        "assert not bad, bad"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
