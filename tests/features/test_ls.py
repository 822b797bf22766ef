"""features.ls and features.ls_build: MinMax scaling, look-up of known and unknown words, the artefact, leak checks."""
from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from features.labels import LeakageError
from features.ls import FORMAT, MANIFEST, TYPES, LSVectors, cosine, ls_from_vectors, minmax_scale
from features.ls_build import LSOptions, build_ls
from features.ls_corpus import sha256_file

TYPED = Path(__file__).parents[1] / "fixtures" / "ls" / "typed.txt"
TINY = LSOptions(dim=8, min_count=1, epochs=5, bucket=100_000)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    pytest.importorskip("fasttext")
    out = tmp_path_factory.mktemp("ls") / "vectors"
    build_ls([TYPED], out, options=TINY, progress=False)
    return out


def test_minmax_example_of_the_paper():
    # Ghaddar & Langlais 2018 §3: [..., 0.095, ..., 0.20, ..., 0.76, ...] -> [..., -1, ..., -0.67, ..., 1, ...]
    # (with only these three coefficients 0.20 maps to 2 * 0.105 / 0.665 - 1 = -0.684)
    scaled = minmax_scale(np.array([[0.095, 0.20, 0.76]]))
    np.testing.assert_allclose(scaled, [[-1.0, 2 * 0.105 / 0.665 - 1, 1.0]], atol=1e-6)
    assert abs(scaled[0, 1] - (-0.67)) < 0.02


def test_minmax_is_per_vector_and_a_constant_vector_becomes_zero():
    scaled = minmax_scale(np.array([[1.0, 2.0, 3.0], [10.0, 0.0, 5.0], [0.3, 0.3, 0.3]]))
    np.testing.assert_allclose(scaled, [[-1, 0, 1], [1, -1, 0], [0, 0, 0]], atol=1e-6)
    assert scaled.dtype == np.float32
    with pytest.raises(ValueError, match=r"2-D matrix .* got shape \(3,\)"):
        minmax_scale(np.zeros(3))


def test_cosine_and_ls_from_vectors():
    words = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    types = np.array([[2.0, 0.0], [0.0, 3.0], [-1.0, 0.0]])
    np.testing.assert_allclose(cosine(words, types), [[1, 0, -1], [0, 0, 0], [0.7071, 0.7071, -0.7071]], atol=1e-4)
    np.testing.assert_allclose(ls_from_vectors(words, types)[0], [1, 0, -1], atol=1e-6)


class FakeModel:
    """fastText's one method that LSVectors uses for unknown words."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors, self.asked = vectors, []

    def get_word_vector(self, word: str) -> np.ndarray:
        self.asked.append(word)
        return np.asarray(self.vectors.get(word, [0.0, 0.0]), dtype=np.float32)


def small(model=None) -> LSVectors:
    types = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    table = np.array([[1.0, 0.0, -1.0]], dtype=np.float32)
    return LSVectors(["/a", "/b", "/c"], types, ["paris"], table, model=model)


def test_known_words_are_uncased_and_unknown_words_use_the_model():
    model = FakeModel({"berlin": [0.0, 2.0]})
    vectors = small(model)
    out = vectors(["Paris", "PARIS", "Berlin", "berlin"])
    assert out.shape == (4, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out[0], [1, 0, -1])
    np.testing.assert_allclose(out[1], out[0])
    np.testing.assert_allclose(out[2], [-1, 1, -1])  # cosines (0, 1, 0), scaled to [-1, 1]
    np.testing.assert_allclose(out[3], out[2])
    assert model.asked == ["berlin"]  # each unknown word type once
    assert "Paris" in vectors and "Berlin" not in vectors and vectors.dim == 3


def test_without_a_model_unknown_words_get_zeros_and_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        out = small()(["paris", "nowhere"])
    np.testing.assert_allclose(out[1], np.zeros(3))
    assert "no fasttext.bin" in caplog.text


def test_shapes_are_checked():
    with pytest.raises(ValueError, match=r"LS table must be \(1 words, 2 types\), but got shape \(1, 3\)"):
        LSVectors(["/a", "/b"], np.zeros((2, 4)), ["x"], np.zeros((1, 3)))
    with pytest.raises(TypeError, match="single string"):
        small()("paris")


def test_build_saves_an_artefact_that_loads_back(built):
    vectors = LSVectors.load(built)
    assert {"/person", "/person/director", "/building/hotel", "/location/gpe", "/art/film"} <= set(vectors.types)
    assert vectors.types == sorted(vectors.types) and vectors.dim == len(vectors.types)
    assert "hilton" in vectors.words and not any(w.startswith("/person") for w in vectors.words)
    row = vectors.lookup("Hilton")
    assert row.min() == pytest.approx(-1.0) and row.max() == pytest.approx(1.0)
    # a known word's table row is what the model gives; an unknown word comes from sub-words
    np.testing.assert_allclose(row, ls_from_vectors(vectors.word_vectors(["hilton"]), vectors.type_vectors)[0],
                               atol=1e-5)
    unknown = vectors.lookup("Hiltonian")
    assert "Hiltonian" not in vectors and np.abs(unknown).max() == pytest.approx(1.0)


def test_the_manifest_records_sources_and_counts(built):
    manifest = json.loads((built / MANIFEST).read_text())
    assert manifest["format"] == FORMAT and manifest["hierarchy_separator"] == "_"
    (source,) = manifest["sources"]
    assert source["path"] == str(TYPED.resolve()) and source["sha256"] == sha256_file(TYPED)
    assert source["sentences"] == 12 and manifest["counts"]["mentions"] == source["mentions"] == 27
    assert manifest["options"]["dim"] == 8 and manifest["distant"] is None
    assert manifest["type_mentions"]["/location"] == manifest["type_mentions"]["/location/gpe"] == 9


def _flat_corpus(path: Path, labels: tuple[str, ...] = ("PERSON", "WORK_OF_ART")) -> Path:
    """An OntoNotes-like typed file: flat types, one of them with an underscore in its name."""
    path.write_text("".join(f"Ann B-{labels[0]}\nread O\nUlysses B-{labels[1]}\n. O\n\n" for _ in range(3)),
                    encoding="utf-8")
    return path


def test_each_typed_file_keeps_its_own_hierarchy(tmp_path):
    pytest.importorskip("fasttext")
    flat = _flat_corpus(tmp_path / "flat.txt")
    vectors = build_ls([TYPED, flat], tmp_path / "mixed", options=TINY, progress=False)
    assert {"/person/director", "/building/hotel", "/work_of_art"} <= set(vectors.types)
    assert "/work" not in vectors.types  # the flat file's WORK_OF_ART is not split on "_"
    manifest = json.loads((tmp_path / "mixed" / MANIFEST).read_text())
    assert [s["hierarchy_separator"] for s in manifest["sources"]] == ["_", None]
    assert manifest["hierarchy_separator"] is None
    # types are lower-cased: the flat file's 3 PERSON mentions join the fixture's 7 person_* under /person
    assert manifest["type_mentions"]["/person"] == 7 + 3


def test_a_label_split_two_ways_is_refused(tmp_path):
    two_level = _flat_corpus(tmp_path / "two_level.txt", ("person_writer", "art_book"))
    flat = _flat_corpus(tmp_path / "flat.txt", ("person_writer", "ORG"))
    with pytest.raises(ValueError, match=r"'person_writer' is split on '_' in .*two_level.txt but on None in "
                                         r".*flat.txt; give --hierarchy-sep"):
        build_ls([two_level, flat], tmp_path / "out", options=TINY, progress=False)
    assert not (tmp_path / "out").exists()


def test_top_types_and_show(built):
    vectors = LSVectors.load(built)
    top = vectors.top_types("hotel", 3)
    assert len(top) == 3 and top[0][1] == pytest.approx(1.0) and top[0][1] >= top[1][1] >= top[2][1]
    text = vectors.show("Zyxw", 2)
    assert text.startswith("Zyxw (not in the vocabulary: from sub-words): top 2 of") and len(text.splitlines()) == 3


def test_leak_check_matches_sources_by_content(built, tmp_path):
    vectors = LSVectors.load(built)
    copy = tmp_path / "renamed_dev.txt"
    shutil.copy(TYPED, copy)
    with pytest.raises(LeakageError, match=r"built from .*typed\.txt.* same content as data\.dev"):
        vectors.check_not_built_from({"data.dev": copy})
    other = tmp_path / "other.txt"
    other.write_text("Paris B-LOC\n")
    vectors.check_not_built_from({"data.dev": other, "data.test": tmp_path / "absent.txt"})


def test_build_refuses_an_existing_folder_and_bad_input(built, tmp_path):
    with pytest.raises(ValueError, match="already exists; remove it, give another --out, or pass --overwrite"):
        build_ls([TYPED], built, options=TINY, progress=False)
    bad = tmp_path / "bad.txt"
    bad.write_text("Paris B-LOC\nBerlin LOC\n")
    with pytest.raises(ValueError, match=r"bad\.txt:2: expected a tag"):
        build_ls([bad], tmp_path / "out", options=TINY, progress=False)
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out.*"))  # nothing half-written
    with pytest.raises(ValueError, match="distant supervision needs unlabelled corpora"):
        from features.ls_distant import DistantOptions
        build_ls([TYPED], tmp_path / "out", options=TINY, distant=DistantOptions(), progress=False)


@pytest.mark.parametrize("damage, message", [
    (lambda d: (d / TYPES).unlink(), r"not a complete LS artefact, types\.txt is missing"),
    (lambda d: (d / MANIFEST).write_text("{"), r"manifest\.json:1: not valid JSON"),
    (lambda d: (d / MANIFEST).write_text('{"format": "other"}'), r"expected format 'seqlab-ls/1', but got 'other'"),
    (lambda d: (d / TYPES).write_text("/a\n\n"), r"types\.txt:2: expected one entry a line"),
    (lambda d: (d / TYPES).write_text("/a\n"), r"type vectors must be \(1 types, dim\)"),
])
def test_damaged_artefacts_are_clear_errors(built, tmp_path, damage, message):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    damage(copy)
    with pytest.raises(ValueError, match=message):
        LSVectors.load(copy)


def test_a_missing_artefact_names_the_build_command(tmp_path):
    with pytest.raises(FileNotFoundError, match="LS vectors not found: .*seqlab features ls build"):
        LSVectors.load(tmp_path / "none")


def always_nan(*args, **kwargs):
    raise RuntimeError("Encountered NaN.")


def test_a_failed_fasttext_training_leaves_no_folder(monkeypatch, tmp_path):
    fasttext = pytest.importorskip("fasttext")
    monkeypatch.setattr(fasttext, "train_unsupervised", always_nan)
    with pytest.raises(ValueError, match=r"fastText training failed 3 times \(Encountered NaN\.\)"):
        build_ls([TYPED], tmp_path / "bad", options=TINY, progress=False)
    assert not (tmp_path / "bad").exists() and not list(tmp_path.iterdir())


def test_the_manifest_records_what_fasttext_was_given(built):
    manifest = json.loads((built / MANIFEST).read_text())
    assert manifest["fasttext"]["threads"] == 10  # TINY asks for 1: fastText needs 10 to initialise its matrix
    assert manifest["fasttext"]["bucket"] - TINY.bucket in range(10)
