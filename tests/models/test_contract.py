"""The contract every model kind keeps (after AllenNLP's ModelTestCase and flair's BaseModelTest).

For the BiLSTM-CRF, the softmax tagger, the windowed I-T-W-O tagger, the token-label (POS) tagger and the
relation classifier, and the BiLSTM-CRF and the relation classifier reading a tiny BERT built here (frozen and
fine-tuned): ``seqlab.train`` trains a tiny model on a real-format fixture; every parameter gets a gradient; the
run directory, loaded with ``seqlab.load`` **in a fresh Python process**, predicts exactly the labels the
training process wrote for the test set, and the same labels and confidences as a load here; and predictions
do not depend on the batch size. The extraction model (a tagger and a relation classifier as one model, whose
fixture is SpERT JSON and whose predictions are spans with relations) keeps the same contract in
tests/extraction/test_model.py.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import seqlab
from tests.conftest import FIXTURES, forget_new_log_handlers
from tests.helpers import relation_trainer, shared_tiny_bert, tagger_trainer

NER, CHUNK, SEMEVAL, POS = FIXTURES / "ner", FIXTURES / "chunk", FIXTURES / "semeval", FIXTURES / "pos"
WINDOW_FEATURES = ("model.features=[{type: embeddings, path: vectors.txt, format: glove, lowercase: true, scale: 0.1},"
                   " {type: label_freq}, {type: orthographic}]")  # no POS column, so it can tag raw text
KINDS = {  # kind: (config, data folder, overrides)
    "bilstm_crf": (NER / "tiny.yaml", NER, ["train.epochs=4", "train.threads=1"]),
    "softmax_tagger": (NER / "tiny.yaml", NER, ["model.decoder=softmax", "train.epochs=4", "train.threads=1"]),
    "windowed_tagger": (CHUNK / "window.yaml", CHUNK, [WINDOW_FEATURES, "train.epochs=3"]),
    "pos_tagger": (POS / "tiny.yaml", POS, []),  # token labels (data.tag_scheme: token), read from CoNLL-U
    "relation_classifier": (SEMEVAL / "tiny.yaml", SEMEVAL, []),
    "relation_jsonl": (FIXTURES / "relations" / "tiny.yaml", FIXTURES / "relations", []),  # own labels, JSON lines
    "bilstm_crf_transformer": (NER / "tiny.yaml", NER, ["model.transformer={path: TINY_BERT, layers: [-1, -2]}",
                                                       "train.epochs=2", "train.threads=1"]),
    "bilstm_crf_transformer_fine_tuned": (NER / "tiny.yaml", NER, [
        "model.transformer={path: TINY_BERT, layers: [-1], pooling: last, fine_tune: true, lr: 0.001, warmup: 3}",
        "train.epochs=2", "train.threads=1"]),
    "relation_transformer": (SEMEVAL / "tiny.yaml", SEMEVAL, ["model.transformer={path: TINY_BERT, layers: [-1, -2]}"]),
    "relation_transformer_fine_tuned": (SEMEVAL / "tiny.yaml", SEMEVAL, [
        "model.transformer={path: TINY_BERT, layers: [-1], pooling: first, fine_tune: true, lr: 0.001, warmup: 2}",
        "train.optimizer=adam", "train.lr=0.001"]),  # AdaDelta would leave the encoder all but frozen (refused)
}
RELATION_KINDS = ("relation_classifier", "relation_jsonl", "relation_transformer", "relation_transformer_fine_tuned")
TEXTS = ["EU rejects German call to boycott British lamb. Peter Blackburn said so.",
         "Confidence in the pound is widely expected to take another sharp dive.", ""]
SENTENCES = (SEMEVAL / "unlabelled.txt").read_text(encoding="utf-8").splitlines()

# What a user's program prints: every prediction through the public API, as JSON.
PREDICT = """
import json, sys
import seqlab
model = seqlab.load(sys.argv[1], "cpu")
if isinstance(model, seqlab.RelationModel):
    out = [[r.label, r.confidence] for r in model.classify_many(json.loads(sys.argv[2]))]
    model.evaluate(sys.argv[3], answers=sys.argv[4])
else:
    out = [[[s.text, s.label, s.start, s.end, s.confidence] for s in d.spans] + [d.sentences[0].labels if d.sentences else []]
           for d in model.tag_many(json.loads(sys.argv[2]))]
    model.evaluate(sys.argv[3], output=sys.argv[4])
print(json.dumps(out))
"""


def _config(kind: str):
    """The kind's config; a transformer kind reads a tiny BERT built here (skipped without the extra)."""
    path, _, overrides = KINDS[kind]
    if any("TINY_BERT" in o for o in overrides):
        pytest.importorskip("transformers")
        overrides = [o.replace("TINY_BERT", str(shared_tiny_bert())) for o in overrides]
    return seqlab.read_config(path, overrides)


@pytest.fixture(scope="module", params=sorted(KINDS))
def trained(request, tmp_path_factory) -> tuple[str, Path]:
    kind = request.param
    out = tmp_path_factory.mktemp(kind) / "run"
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(KINDS[kind][1]))
        seqlab.train(_config(kind), out, progress=False)
    return kind, out


def _inputs(kind: str) -> list[str]:
    return SENTENCES if kind in RELATION_KINDS else TEXTS


def _test_file(kind: str) -> Path:
    return {"bilstm_crf": NER / "dev.txt", "bilstm_crf_transformer": NER / "dev.txt",
            "bilstm_crf_transformer_fine_tuned": NER / "dev.txt", "softmax_tagger": NER / "dev.txt", "windowed_tagger": CHUNK / "test.txt",
            "pos_tagger": POS / "dev.conllu",
            "relation_classifier": SEMEVAL / "test.txt", "relation_jsonl": FIXTURES / "relations" / "test.jsonl",
            "relation_transformer": SEMEVAL / "test.txt",
            "relation_transformer_fine_tuned": SEMEVAL / "test.txt"}[kind]


def _predict_here(model, kind: str, batch_size: int | None = None) -> list:
    options = {} if batch_size is None else {"batch_size": batch_size}
    if kind in RELATION_KINDS:
        return [[r.label, r.confidence] for r in model.classify_many(_inputs(kind), **options)]
    return [[[s.text, s.label, s.start, s.end, s.confidence] for s in d.spans] + [d.sentences[0].labels if d.sentences else []]
            for d in model.tag_many(_inputs(kind), **options)]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_parameter_gets_a_gradient(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(KINDS[kind][1]))
    make = relation_trainer if kind in RELATION_KINDS else tagger_trainer
    trainer = make(_config(kind), tmp_path, progress=False)
    trainer.model.train()
    batch = next(iter(trainer.task.training_batches(torch.Generator().manual_seed(0))))
    trainer.task.loss(batch).loss.backward()
    for name, param in trainer.model.named_parameters():
        if param.requires_grad:
            assert param.grad is not None and torch.isfinite(param.grad).all(), name


def test_a_fresh_process_predicts_what_training_wrote_and_what_a_load_here_predicts(trained, tmp_path, monkeypatch):
    kind, run = trained
    # Only feature files a model reads at load time (the windowed tagger's word vectors) come from SEQLAB_DATA.
    monkeypatch.setenv("SEQLAB_DATA", str(KINDS[kind][1]))
    written = tmp_path / "fresh_predictions.txt"
    fresh = subprocess.run([sys.executable, "-c", PREDICT, str(run), json.dumps(_inputs(kind)), str(_test_file(kind)),
                            str(written)], capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert fresh.returncode == 0, fresh.stderr
    here = _predict_here(seqlab.load(run, "cpu"), kind)
    assert json.loads(fresh.stdout) == json.loads(json.dumps(here))  # labels and confidences, bit for bit
    training_wrote = run / ("test.answers.txt" if kind in RELATION_KINDS else "test.predictions.txt")
    assert written.read_text() == training_wrote.read_text()  # the config's test file, decoded at training time


def test_labels_and_confidences_do_not_depend_on_the_batch_size(trained, monkeypatch):
    kind, run = trained
    monkeypatch.setenv("SEQLAB_DATA", str(KINDS[kind][1]))
    model = seqlab.load(run, "cpu")
    one, many = _split(_predict_here(model, kind, batch_size=1)), _split(_predict_here(model, kind, batch_size=32))
    assert one[0] == many[0]  # every label, span and offset
    assert one[1] == pytest.approx(many[1], abs=1e-5)  # confidences: float sums in another order


def _split(value: object, floats: list[float] | None = None) -> tuple[object, list[float]]:
    """``value`` with every float replaced by None, and the floats in reading order."""
    floats = [] if floats is None else floats
    if isinstance(value, float):
        floats.append(value)
        return None, floats
    if isinstance(value, list):
        return [_split(item, floats)[0] for item in value], floats
    return value, floats


def test_a_token_label_model_tags_tokens_with_its_labels_and_no_spans(tmp_path, monkeypatch):
    """POS tagging as a config: tag_tokens returns UPOS tags, documents have no spans, evaluate gives accuracy."""
    from seqlab.core.errors import SeqlabError

    monkeypatch.setenv("SEQLAB_DATA", str(POS))
    with forget_new_log_handlers():
        seqlab.train(POS / "tiny.yaml", tmp_path / "run", overrides=("train.epochs=8",), progress=False)
    tagger = seqlab.load(tmp_path / "run", "cpu")
    labels = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT", "VERB"}
    assert set(tagger.types) == labels
    [sentence] = tagger.tag_tokens([["The", "cat", "sat", "on", "the", "mat", "."]])
    assert len(sentence.labels) == 7 and set(sentence.labels) <= labels and sentence.spans == []
    doc = tagger.tag("The dog sat on the mat.")
    assert doc.spans == [] and len(doc.sentences[0].labels) == len(doc.sentences[0].tokens)
    result = tagger.evaluate(POS / "dev.conllu")
    assert result.measure == "accuracy" and 0 <= result.accuracy == result.score <= 100
    assert "accuracy:" in str(result) and "NOUN: precision:" in str(result)
    with pytest.raises(SeqlabError, match="token labels"):
        tagger.tag_tokens([["The", "cat"]], scheme="iob2")
    with pytest.raises(SeqlabError, match="scored by accuracy"):
        result.f1


def test_the_loaded_object_is_the_public_type(trained, monkeypatch):
    kind, run = trained
    monkeypatch.setenv("SEQLAB_DATA", str(KINDS[kind][1]))
    model = seqlab.load(run, "cpu")
    expected = seqlab.RelationModel if kind in RELATION_KINDS else seqlab.SequenceTagger
    assert isinstance(model, expected) and not model.model.training


def test_a_model_reading_pos_tags_them_from_columns_and_says_so_for_raw_text(tmp_path, monkeypatch):
    """The windowed chunker configs read POS tags: tag_tokens takes them; raw text is a clear error."""
    from seqlab.core.errors import SeqlabError

    monkeypatch.setenv("SEQLAB_DATA", str(CHUNK))
    with forget_new_log_handlers():
        seqlab.train(CHUNK / "window.yaml", tmp_path / "run", overrides=("train.epochs=1",), progress=False)
    chunker = seqlab.load(tmp_path / "run", "cpu")
    sentences = [["He", "reckons", "the", "current", "account", "deficit"]]
    tagged = chunker.tag_tokens(sentences, columns={"pos": [["PRP", "VBZ", "DT", "JJ", "NN", "NN"]]}, scheme="iob2")
    assert len(tagged[0].labels) == 6 and all(label == "O" or label[:2] in ("B-", "I-") for label in tagged[0].labels)
    with pytest.raises(SeqlabError, match=r"reads the data column\(s\) \['pos'\]"):
        chunker.tag("He reckons the current account deficit will narrow.")


@pytest.mark.parametrize("kind", ["bilstm_crf_transformer", "relation_transformer"])
@pytest.mark.parametrize("progress", [True, False])
def test_a_frozen_transformers_cache_shows_progress_only_when_training_does(kind, progress, tmp_path, monkeypatch,
                                                                            capsys):
    monkeypatch.setenv("SEQLAB_DATA", str(KINDS[kind][1]))
    config = _config(kind)
    with forget_new_log_handlers():
        seqlab.train(config, tmp_path / "run", progress=progress)
    assert ("transformer vectors" in capsys.readouterr().err) is progress
