"""The extraction model: trained by one config into one run directory, loaded by seqlab.load, raw text in and
spans with their relations out, through the API, seqlab tag and seqlab eval; the model contract (reload in a
fresh process predicts the same, batch size changes nothing, every parameter gets a gradient)."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import seqlab
from seqlab.core.errors import SeqlabError
from seqlab.extraction.model import ExtractionModel
from seqlab.relation.api import Relation
from seqlab.tagging.document import Document, SpanRelation, render
from tests.helpers import relation_trainer, tagger_trainer
from tests.relation.spert_fixture import extraction_run, write_pipeline

TEXTS = ["John lives in Paris . IBM is based in Rome .", "Ann works for Acme in Oslo .", ""]
PREDICT = """
import json, sys
import seqlab
model = seqlab.load(sys.argv[1], "cpu")
print(json.dumps([d.to_dict() for d in model.tag_many(json.loads(sys.argv[2]))]))
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extraction_run(tmp_path_factory.mktemp("extraction"))


def test_one_run_holds_both_halves_and_loads_as_one_model(run: Path) -> None:
    assert (run / "ner" / "model.pt").is_file() and (run / "relation" / "model.pt").is_file()
    assert set(json.loads((run / "metrics.json").read_text())) == {"ner", "relation", "decision"}
    model = seqlab.load(run, "cpu")
    assert isinstance(model, ExtractionModel) and model.task == "extraction"
    assert "Peop" in model.labels and "Live_In" in model.labels and "no_relation" not in model.labels
    doc = model.tag(TEXTS[0])
    assert isinstance(doc, Document) and doc.relations  # the toy relations are learnt
    for relation in doc.relations:
        assert 0 <= relation.head < len(doc.spans) and 0 <= relation.tail < len(doc.spans)
        assert relation.head != relation.tail and relation.label != "no_relation" and 0 < relation.confidence <= 1


def _with_relation(doc: Document) -> Document:
    return dataclasses.replace(doc, relations=[SpanRelation(1, 0, "Live_In", 0.912345)])


def test_relations_are_written_only_when_there_are_some(run: Path) -> None:
    model = seqlab.load(run, "cpu")
    doc = model.tagger.tag("John lives in Paris .")
    plain = doc.to_dict()
    assert "relations" not in plain and "relations" not in render([(1, doc)], "jsonl")  # a tagger's, unchanged
    if len(doc.spans) >= 2:
        linked = _with_relation(doc)
        assert linked.to_dict()["relations"] == [{"head": 1, "tail": 0, "label": "Live_In", "confidence": 0.9123}]
        assert json.loads(render([(1, linked)], "jsonl"))["relations"][0]["label"] == "Live_In"


def test_link_keeps_the_pairs_the_classifier_labels_and_indexes_document_spans(run: Path) -> None:
    model = seqlab.load(run, "cpu")
    doc = model.tagger.tag_tokens([["John", "lives", "in", "Paris", "."]])[0]
    doc = Document("John lives in Paris .", [doc, doc])  # two sentences: the second's spans come after the first's

    class Fixed:
        def classify_examples(self, examples, *, batch_size=200):  # the head's e1 start decides
            return [Relation(e.id, "Live_In" if e.e1[0] == 0 else "no_relation", 0.75, "", "", {}) for e in examples]

    linked = ExtractionModel(model.config, model.tagger, Fixed()).link(doc)  # type: ignore[arg-type]
    per = len(doc.sentences[0].spans)
    heads = [k for k, s in enumerate(doc.sentences[0].spans) if s.token_start == 0]
    expected = [(h + off, t + off) for off in (0, per) for h in heads for t in range(per) if t != h]
    assert [(r.head, r.tail) for r in linked.relations] == expected
    assert all(r.label == "Live_In" and r.confidence == 0.75 for r in linked.relations)


def test_a_fresh_process_predicts_exactly_what_a_load_here_predicts(run: Path) -> None:
    fresh = subprocess.run([sys.executable, "-c", PREDICT, str(run), json.dumps(TEXTS)], capture_output=True,
                           text=True, cwd=Path(__file__).parents[2])
    assert fresh.returncode == 0, fresh.stderr
    here = [d.to_dict() for d in seqlab.load(run, "cpu").tag_many(TEXTS)]
    assert json.loads(fresh.stdout) == json.loads(json.dumps(here))


def test_predictions_do_not_depend_on_the_batch_size(run: Path) -> None:
    model = seqlab.load(run, "cpu")
    one = [d.to_dict() for d in model.tag_many(TEXTS, batch_size=1)]
    many = [d.to_dict() for d in model.tag_many(TEXTS, batch_size=32)]
    assert json.dumps(one) == json.dumps(many)


def test_every_parameter_of_both_halves_gets_a_gradient(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path))
    config = seqlab.read_config(write_pipeline(tmp_path))
    for make, half in ((tagger_trainer, config.ner), (relation_trainer, config.relation)):
        trainer = make(half, tmp_path / half.task, progress=False)
        trainer.model.train()
        batch = next(iter(trainer.task.training_batches(torch.Generator().manual_seed(0))))
        trainer.task.loss(batch).loss.backward()
        for name, param in trainer.model.named_parameters():
            if param.requires_grad:
                assert param.grad is not None and torch.isfinite(param.grad).all(), f"{half.task}: {name}"


def test_eval_scores_entities_and_strict_relations_end_to_end_and_with_gold_entities(run: Path) -> None:
    result = seqlab.load(run, "cpu").evaluate(run.parent / "toy_test.json")
    data = result.to_dict()
    assert set(data) == {"entities", "relations", "relations_given_gold_entities", "score", "measure"}
    assert data["entities"]["micro"]["f1"] > 0 and data["relations"]["micro"]["f1"] > 0
    assert data["relations_given_gold_entities"]["micro"]["f1"] >= data["relations"]["micro"]["f1"] - 1e-9
    assert "relations between the gold entities" in result.report


def test_seqlab_tag_and_eval_run_an_extraction_model(run: Path, tmp_path: Path) -> None:
    text = tmp_path / "in.txt"
    text.write_text("\n".join(TEXTS[:2]) + "\n", encoding="utf-8")
    cli = [sys.executable, "-m", "seqlab"]
    tagged = subprocess.run(cli + ["tag", str(run), str(text), "--format", "jsonl"], capture_output=True, text=True,
                            cwd=Path(__file__).parents[2])
    assert tagged.returncode == 0, tagged.stderr
    lines = [json.loads(line) for line in tagged.stdout.splitlines()]
    assert [line["line"] for line in lines][:1] == [1] and all("spans" in line for line in lines)
    scored = subprocess.run(cli + ["eval", str(run), str(run.parent / "toy_test.json"), "--output",
                                   str(tmp_path / "s.json")], capture_output=True, text=True,
                            cwd=Path(__file__).parents[2])
    assert scored.returncode == 0, scored.stderr
    assert "relations, strict" in scored.stdout and json.loads((tmp_path / "s.json").read_text())["measure"]


def test_a_missing_half_is_a_one_line_error(run: Path, tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text((run / "config.yaml").read_text())
    with pytest.raises(SeqlabError, match=r"an extraction run holds the sub-runs ner/ and relation/; ner/ is missing"):
        seqlab.load(tmp_path, "cpu")


def test_brat_output_writes_relations_as_r_lines(run: Path, tmp_path: Path) -> None:
    from seqlab.cli.tag import write_whole
    from seqlab.data.formats.registry import OUTPUTS

    lines = ["Ann lives in Rome .\n", "John lives in Paris .\n"]
    tagger = seqlab.load(run, "cpu").tagger
    docs = [Document(line.rstrip("\n"), tagger.tag_tokens([line.split()])[0:1]) for line in lines]
    docs = [dataclasses.replace(d, relations=[SpanRelation(0, 1, "Live_In", 0.9)]) if len(d.spans) >= 2 else d
            for d in docs]
    spans = write_whole(docs, lines, tmp_path, "doc", OUTPUTS["brat"])
    ann = (tmp_path / "doc.ann").read_text(encoding="utf-8").splitlines()
    firsts = [sum(len(d.spans) for d in docs[:k]) for k in range(len(docs))]
    expected = [f"Live_In Arg1:T{first + 1} Arg2:T{first + 2}" for d, first in zip(docs, firsts) if d.relations]
    assert [line.split("\t")[1] for line in ann if line.startswith("R")] == expected
    assert len([line for line in ann if line.startswith("T")]) == spans


def test_seqlab_serve_answers_tag_with_the_documents_the_api_gives(run: Path) -> None:
    pytest.importorskip("starlette", reason="seqlab serve needs the serve extra: pip install 'seqlab[serve]'")
    pytest.importorskip("uvicorn", reason="seqlab serve needs the serve extra: pip install 'seqlab[serve]'")
    from tests.serve.conftest import post, serve

    model = seqlab.load(run, "cpu")
    server, url = serve(model)
    try:
        status, body = post(url + "/tag", json.dumps({"texts": TEXTS[:2]}).encode())
    finally:
        server.shutdown()
    assert status == 200 and body["documents"] == [d.to_dict() for d in model.tag_many(TEXTS[:2])]


def test_pairs_carry_the_types_the_tagger_predicts(run: Path) -> None:
    from seqlab.extraction.model import pair_examples

    sentence = seqlab.load(run, "cpu").tagger.tag("John lives in Paris .").sentences[0]
    pairs = pair_examples(sentence)
    assert pairs and all(example.types == (sentence.spans[h].label, sentence.spans[t].label)
                         for h, t, example in pairs)


def test_training_fits_a_relation_threshold_on_dev_that_loading_applies(run: Path, tmp_path: Path) -> None:
    from seqlab.extraction.threshold import DECISION, GRID, Decision, load_decision

    record = json.loads((run / DECISION).read_text())
    assert record["threshold"] in (*GRID, None) and record["dev_macro_f1"] >= record["dev_macro_f1_argmax"]
    assert record["dev_macro_f1"] == max(record["grid"].values()) or record["threshold"] is None
    model = seqlab.load(run, "cpu")
    assert model.decision == Decision("no_relation", record["threshold"])
    none = Relation("x", "no_relation", 0.5, "a", "b", {"no_relation": 0.5, "Live_In": 0.3, "Work_For": 0.2})
    assert Decision("no_relation").relation(none) is None
    assert Decision("no_relation", 0.25).relation(none) == ("Live_In", 0.3)
    assert Decision("no_relation", 0.35).relation(none) is None
    (tmp_path / DECISION).write_text('{"threshold": 1.5}')
    with pytest.raises(SeqlabError, match=r"decision.json: threshold must be a number in \(0, 1\), got 1.5"):
        load_decision(tmp_path, "no_relation")
    assert load_decision(tmp_path / "none", "no_relation") == Decision("no_relation")


def test_packaging_an_extraction_run_says_what_to_do_instead(run: Path, tmp_path: Path) -> None:
    from seqlab.apps.package import check_run

    with pytest.raises(SeqlabError, match=r"an extraction run .* is not packaged as one file yet; load, tag, eval or "
                                          r"serve the run directory itself, or package either half"):
        check_run(run)
