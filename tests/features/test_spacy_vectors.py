"""features.spacy_vectors: word vectors read from a spaCy pipeline folder or installed package."""
from __future__ import annotations

import numpy as np
import pytest

from features.base import FeatureError
from features.vectors import load_vectors, select_vectors

spacy = pytest.importorskip("spacy", reason="spaCy is not installed (pip install -e '.[languages]')")


@pytest.fixture
def pipeline(tmp_path):
    nlp = spacy.blank("fr")
    for i, word in enumerate(["maison", "Paris", "été"]):
        nlp.vocab.set_vector(word, np.full(4, i + 1, dtype=np.float32))
    nlp.to_disk(tmp_path / "pipe")
    return tmp_path / "pipe"


def test_vectors_of_a_pipeline_folder(pipeline):
    vectors = load_vectors(pipeline, "spacy")
    assert vectors.dim == 4 and len(vectors) == 3 and not vectors.has_subwords
    assert "été" in vectors and "chien" not in vectors
    picked = select_vectors(vectors, ["Maison", "été", "chien"])
    assert sorted(picked) == ["Maison", "été"]  # Maison by its lower-cased form
    np.testing.assert_array_equal(picked["été"], np.full(4, 3, dtype=np.float32))


def test_a_pipeline_without_vectors_is_refused(tmp_path):
    spacy.blank("fr").to_disk(tmp_path / "sm")
    with pytest.raises(FeatureError, match="no word vectors .*md or lg pipeline"):
        load_vectors(tmp_path / "sm", "spacy")


def test_an_unknown_package_names_the_install_command():
    with pytest.raises(FeatureError, match="pip install xx-core-news-md"):
        load_vectors("xx_core_news_md", "spacy")
