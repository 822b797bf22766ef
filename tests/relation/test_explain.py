"""Tests for seqlab.relation.explain's pure parts: attention HTML, the latent type table, the t-SNE map."""
from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from seqlab.data.semeval import RelationExample
from seqlab.relation.explain import (COLOURS, _cell, _sentence_html, latent_type_table, tsne_figure, tsne_map,
                                     write_attention_html, write_tsne)

LABELS = ["Cause-Effect(e1,e2)", "Other", "Message-Topic(e2,e1)"]


def _example(id_: str = "7", tokens: tuple[str, ...] = ("The", "<b>", "caused", "A&B", "\"x'"),
             e1: tuple[int, int] = (1, 1), e2: tuple[int, int] = (3, 4),
             label: str | None = "Other") -> RelationExample:
    return RelationExample(id_, tokens, e1, e2, label)


def _info(n: int, probs: list[float] | None = None, self_attention: bool = True) -> dict[str, object]:
    alpha = np.linspace(0.1, 1.0, n)
    info: dict[str, object] = {"probs": np.array(probs or [0.2, 0.7, 0.1]), "alpha": alpha / alpha.sum()}
    if self_attention:
        matrix = np.arange(1, n * n + 1, dtype=float).reshape(n, n)
        info["self_attention"] = matrix / matrix.sum(axis=1, keepdims=True)
    return info


def _cells(text: str) -> list[tuple[str, str]]:
    """(style, content) of each ``<td>`` that has a style."""
    return re.findall(r'<td style="([^"]*)" title="[^"]*">([^<]*)</td>', text)


# ------------------------------------------------------------------ attention HTML


def test_cell_scales_the_colour_and_escapes_its_text():
    assert _cell(0.5, 1.0, "a<b") == ('<td style="background: rgba(214, 39, 40, 0.500);" title="0.5000">a&lt;b</td>')
    assert "rgba(214, 39, 40, 1.000)" in _cell(3.0, 1.0, "x")  # capped at the full colour
    assert "rgba(214, 39, 40, 0.000)" in _cell(0.0, 0.0, "x")  # an all-zero row does not divide by 0
    assert "font-weight: bold; text-decoration: underline;" in _cell(0.1, 1.0, "x", entity=True)
    assert "bold" not in _cell(0.1, 1.0, "x")


def test_sentence_html_escapes_tokens_and_marks_entities():
    example = _example()
    text = _sentence_html(example, _info(5), LABELS)
    for raw in ("<b>", "A&B", "\"x'"):
        assert f">{raw}<" not in text
    cells = _cells(text.split("<h3>Self-attention")[0])  # the entity-aware attention row
    assert [content for _, content in cells] == ["The", "&lt;b&gt;", "caused", "A&amp;B", "&quot;x&#x27;"]
    marked = ["underline" in style for style, _ in cells]
    assert marked == [False, True, False, True, True]  # e1 = (1, 1), e2 = (3, 4), inclusive


def test_sentence_html_shows_the_prediction_gold_label_and_escaped_id():
    text = _sentence_html(_example(id_="a<1>"), _info(5), LABELS)
    assert text.startswith("<h2>a&lt;1&gt;: predicted Other (0.700), gold Other</h2>")
    unlabelled = _sentence_html(_example(label=None), _info(5, probs=[0.1, 0.2, 0.7]), LABELS)
    assert "predicted Message-Topic(e2,e1) (0.700)</h2>" in unlabelled and "gold" not in unlabelled


def test_sentence_html_colours_the_largest_attention_fully():
    info = _info(5)
    cells = _cells(_sentence_html(_example(), info, LABELS).split("<h3>Self-attention")[0])
    levels = [float(re.search(r"rgba\(214, 39, 40, ([0-9.]+)\)", style).group(1)) for style, _ in cells]
    assert levels[-1] == 1.0
    assert levels == pytest.approx(list(info["alpha"] / info["alpha"].max()), abs=1e-3)


def test_sentence_html_self_attention_matrix_has_a_row_and_column_per_token():
    example = _example()
    text = _sentence_html(example, _info(5), LABELS)
    matrix = text.split("<h3>Self-attention")[1]
    assert matrix.count("<tr>") == 1 + len(example.tokens)
    assert matrix.count("<th>&lt;b&gt;</th>") == 2  # column header and row header
    assert len(_cells(matrix)) == len(example.tokens) ** 2
    assert "<h3>Self-attention" not in _sentence_html(example, _info(5, self_attention=False), LABELS)


def test_write_attention_html_writes_the_first_sentences_only(tmp_path: Path):
    examples = [_example(id_=str(i), tokens=("w<", f"t{i}", "x", "y"), e1=(0, 0), e2=(2, 3)) for i in range(4)]
    single = [_info(4) for _ in examples]
    info = {key: [one[key] for one in single] for key in single[0]}
    path = tmp_path / "attention.html"
    write_attention_html(path, examples, info, LABELS, count=2)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.endswith("</body></html>\n")
    assert re.findall(r"<h2>(\w+):", text) == ["0", "1"]
    assert "w&lt;" in text and "w<" not in text
    assert [p.name for p in tmp_path.iterdir()] == ["attention.html"]


# ------------------------------------------------------------------ latent type table


def _typed(pairs: list[tuple[str, str]]) -> list[RelationExample]:
    """One example per (e1 text, e2 text), the texts as single tokens."""
    return [RelationExample(str(i), (a, "and", b), (0, 0), (2, 2)) for i, (a, b) in enumerate(pairs)]


def test_latent_type_table_groups_by_argmax_and_sorts_by_weight():
    examples = _typed([("Cat", "car"), ("dog", "engine"), ("cat", "wheel")])
    info = {
        "e1_types": [np.array([0.9, 0.1, 0.0]), np.array([0.6, 0.3, 0.1]), np.array([0.7, 0.2, 0.1])],
        "e2_types": [np.array([0.2, 0.8, 0.0]), np.array([0.1, 0.85, 0.05]), np.array([0.3, 0.3, 0.4])],
    }
    lines = latent_type_table(examples, info, top=10).splitlines()
    assert lines[:2] == ["| latent type | entity mentions | top entities (type weight) |", "|---|---|---|"]
    # "Cat" and "cat" are one word with its highest weight; every mention still counts
    assert lines[2] == "| 1 | 3 | cat (0.90), dog (0.60) |"
    assert lines[3] == "| 2 | 2 | engine (0.85), car (0.80) |"
    assert lines[4] == "| 3 | 1 | wheel (0.40) |"
    assert len(lines) == 5


def test_latent_type_table_cuts_at_top_breaks_ties_by_word_and_shows_empty_types():
    examples = _typed([("b", "a"), ("c", "d")])
    info = {"e1_types": [np.array([0.5, 0.5, 0.0, 0.0]), np.array([0.9, 0.1, 0.0, 0.0])],
            "e2_types": [np.array([0.5, 0.0, 0.0, 0.5]), np.array([0.2, 0.0, 0.0, 0.8])]}
    lines = latent_type_table(examples, info, top=2).splitlines()
    # type 1: c 0.9, then a and b tie at 0.5 (argmax takes the first maximum): alphabetical, cut at 2
    assert lines[2] == "| 1 | 3 | c (0.90), a (0.50) |"
    assert lines[3] == "| 2 | 0 | none |"
    assert lines[4] == "| 3 | 0 | none |"
    assert lines[5] == "| 4 | 1 | d (0.80) |"


def test_latent_type_table_uses_multi_token_entity_text():
    examples = [RelationExample("1", ("the", "Big", "Apple", "of", "New", "York"), (1, 2), (4, 5))]
    info = {"e1_types": [np.array([0.1, 0.9])], "e2_types": [np.array([0.6, 0.4])]}
    lines = latent_type_table(examples, info, top=5).splitlines()
    assert lines[2:] == ["| 1 | 1 | new york (0.60) |", "| 2 | 1 | big apple (0.90) |"]


# ------------------------------------------------------------------ t-SNE map


def test_tsne_map_gives_a_point_per_state_and_per_type():
    """The one test with the real t-SNE of scikit-learn."""
    rng = np.random.default_rng(0)
    type_vectors = rng.normal(size=(3, 4)) * 3
    assigned = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2])
    states = type_vectors[assigned] + rng.normal(scale=0.1, size=(12, 4))
    states_xy, types_xy = tsne_map(states, type_vectors, seed=1)
    assert states_xy.shape == (12, 2) and types_xy.shape == (3, 2) and np.isfinite(states_xy).all()


class _FakeTSNE:
    """Stands in for scikit-learn's TSNE (2 s to import, 1 s a fit): the first two coordinates, as given."""

    calls: list[dict] = []

    def __init__(self, **kwargs) -> None:
        _FakeTSNE.calls.append(kwargs)

    def fit_transform(self, points: np.ndarray) -> np.ndarray:
        _FakeTSNE.calls[-1]["points"] = points
        return points[:, :2].copy()


@pytest.fixture
def fake_tsne(monkeypatch) -> type[_FakeTSNE]:
    _FakeTSNE.calls = []
    monkeypatch.setitem(sys.modules, "sklearn.manifold", types.SimpleNamespace(TSNE=_FakeTSNE))
    return _FakeTSNE


def test_tsne_map_fits_states_then_types_together(fake_tsne):
    states = np.array([[0.0, 0.0], [10.0, 5.0], [5.0, 10.0]], dtype=np.float32)
    type_vectors = np.array([[2.5, 2.5], [7.5, 0.0]])
    states_xy, types_xy = tsne_map(states, type_vectors, seed=3)
    (call,) = fake_tsne.calls
    assert call["random_state"] == 3 and call["n_components"] == 2
    assert call["perplexity"] == 2.0  # 5 points: (5 - 1) // 3 = 1, raised to the minimum of 2
    assert call["points"].dtype == np.float64 and call["points"].tolist() == states.tolist() + type_vectors.tolist()
    assert states_xy.tolist() == states.tolist() and types_xy.tolist() == type_vectors.tolist()


def test_tsne_map_caps_the_perplexity_at_30(fake_tsne):
    tsne_map(np.zeros((200, 3)), np.ones((4, 3)))
    assert fake_tsne.calls[0]["perplexity"] == 30.0


def test_the_tsne_figure_colours_dots_by_type_and_wraps_the_palette():
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_hex

    k = len(COLOURS) + 2
    xy = np.random.default_rng(1).normal(size=(k, 2))
    figure = tsne_figure(xy + 0.01, np.arange(k), xy)
    dots, squares = figure.axes[0].collections
    assert [to_hex(c) for c in dots.get_facecolors()] == [COLOURS[i % len(COLOURS)] for i in range(k)]
    assert [to_hex(c) for c in squares.get_facecolors()] == [COLOURS[i % len(COLOURS)] for i in range(k)]
    assert np.allclose(squares.get_offsets(), xy)
    assert [t.get_text() for t in figure.axes[0].texts] == [f"type {i + 1}" for i in range(k)]


def test_write_tsne_writes_a_png_or_says_matplotlib_is_missing(fake_tsne, tmp_path, monkeypatch, caplog):
    pytest.importorskip("matplotlib")
    path = tmp_path / "map.png"
    assert write_tsne(path, np.ones((3, 2)), np.zeros(3, dtype=int), np.ones((1, 2)))  # identical points too
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setattr("seqlab.render.plots.have_matplotlib", lambda: False)
    with caplog.at_level("INFO"):
        assert not write_tsne(tmp_path / "none.png", np.ones((3, 2)), np.zeros(3, dtype=int), np.ones((1, 2)))
    assert not (tmp_path / "none.png").exists() and "pip install 'seqlab[plots]'" in caplog.text
