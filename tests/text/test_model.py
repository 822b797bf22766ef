"""A French UPOS model learns its raw-text tokenization at training, keeps it in its run and its .seqlab file, and
tags raw text with it: multiword tokens expanded, CoNLL-U range lines written."""
from __future__ import annotations

from pathlib import Path

import pytest

import seqlab
from seqlab.apps.package import package
from seqlab.core import rundir
from seqlab.tagging.document import render
from tests.conftest import forget_new_log_handlers

pytest.importorskip("spacy", reason="the languages extra (spaCy) is not installed")


def _row(k: int | str, form: str, upos: str = "_") -> str:
    return "\t".join((str(k), form, "_", upos, "_", "_", "_", "_", "_", "_"))


TRAIN = "".join(
    f"# text = {text}\n" + "\n".join(rows) + "\n\n" for text, rows in [
        ("Il vient du port", [_row(1, "Il", "PRON"), _row(2, "vient", "VERB"), _row("3-4", "du"),
                              _row(3, "de", "ADP"), _row(4, "le", "DET"), _row(5, "port", "NOUN")]),
        ("Elle va au port", [_row(1, "Elle", "PRON"), _row(2, "va", "VERB"), _row("3-4", "au"),
                             _row(3, "à", "ADP"), _row(4, "le", "DET"), _row(5, "port", "NOUN")]),
    ])
CONFIG = """data: {train: train.conllu, dev: train.conllu, test: train.conllu, tag_column: upos, tag_scheme: token,
       language: fr}
model: {embeddings: {path: null, dim: 4, min_count: 1}, chars: {dim: 4, hidden: 4}, capitalization: {dim: 2},
        hidden: 8, dropout: 0.0}
train: {optimizer: adam, lr: 0.05, batch_size: 2, epochs: 2, patience: 5, device: cpu, eval_batch_size: 2, threads: 1}
"""


@pytest.fixture(scope="module")
def french(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("french")
    (folder / "train.conllu").write_text(TRAIN, encoding="utf-8")
    (folder / "tiny_fr.yaml").write_text(CONFIG, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(folder))
        seqlab.train(folder / "tiny_fr.yaml", folder / "run", progress=False)
        package(folder / "run", folder / "fr.seqlab")
    return folder / "run", folder / "fr.seqlab"


def test_the_run_and_its_model_file_tag_raw_text_with_the_learned_words(french, tmp_path, monkeypatch) -> None:
    run, model_file = french
    assert (run / rundir.TEXT).is_file()
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path / "no data here"))  # what was learned comes from the model
    monkeypatch.setenv("SEQLAB_CACHE", str(tmp_path / "cache"))
    for where in (run, model_file):
        doc = seqlab.load(where, "cpu").tag("Elle vient du port.")
        assert doc.sentences[0].tokens == ["Elle", "vient", "de", "le", "port", "."]
        assert [t.text for t in doc.surface_tokens()[0]] == ["Elle", "vient", "du", "port", "."]
        assert "\n3-4\tdu\t" in render([(1, doc)], "conllu", token_labels=True)
