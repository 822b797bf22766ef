"""Tokenization (and, with a model, UPOS) of a UD treebank's test set from raw text, scored by the CoNLL 2018
shared task's official script, ``conll18_ud_eval.py``, as JSON. The script is not part of seqlab: take it from
``UniversalDependencies/tools`` (or ``ufal/conll2018``) and name it with ``--scorer`` or ``$CONLL18_UD_EVAL``.

    python -m benchmarks.ud_raw_text --treebank ud_french_sequoia --scorer conll18_ud_eval.py [--language fr]
        [--model RUN] [--out DIR] [--per-sentence]

The raw text is the test file's ``# text`` lines joined by spaces within a document (``# newdoc``; a file without
them is one document), as the shared task gave it. Without ``--model`` the text is tokenized by
:class:`seqlab.text.pipeline.TextPipeline` with what the treebank's training file teaches
(:func:`seqlab.text.learned.learn`); with ``--model`` by the model's own pipeline (its ``text.json``), and the
model's tags are written as UPOS. The system CoNLL-U is written to ``--out`` (default: a scratch folder). Printed:
Tokens, Sentences, Words (and UPOS) F1, and the multiword decision's accuracy on the test file's surface forms,
beside always reading each form the way training most often does.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from seqlab.core.paths import data_root
from seqlab.data.conllu import read_conllu
from seqlab.data.formats.conllu_writer import conllu_sentence
from seqlab.text.learned import learn
from seqlab.text.mwt import Entry, MultiwordTable, accuracy
from seqlab.text.pipeline import TextPipeline

METRICS = ("Tokens", "Sentences", "Words", "UPOS")


def documents(path: Path, per_sentence: bool = False) -> list[str]:
    """The raw text of each document of a CoNLL-U file: its ``# text`` lines joined by spaces (``per_sentence``:
    each ``# text`` line alone)."""
    docs: list[list[str]] = [[]]
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.startswith("# text =") or line.startswith("# text=")
        if (line.startswith("# newdoc") or per_sentence and text) and docs[-1]:
            docs.append([])
        if text:
            docs[-1].append(line.split("=", 1)[1].strip())
    return [" ".join(doc) for doc in docs if doc]


def with_heads(block: str) -> str:
    """A system sentence with HEAD filled in (word 1 the root, the others on it), which the script requires."""
    out = []
    for line in block.splitlines():
        fields = line.split("\t")
        if len(fields) == 10 and fields[0].isdigit():
            fields[6], fields[7] = ("0", "root") if fields[0] == "1" else ("1", "dep")
        out.append("\t".join(fields))
    return "\n".join(out) + "\n"


def system_conllu(texts: list[str], pipeline: TextPipeline, model: Any | None) -> str:
    """The system CoNLL-U of ``texts``: the pipeline's words, with the model's tags as UPOS when there is one."""
    parts = []
    for d, text in enumerate(texts, start=1):
        if model is not None:
            sentences = [(s.tokens, s.labels, s.offsets) for s in next(model.tag_many([text])).sentences]
        else:
            sentences = [(s.words, ["_"] * len(s.words), list(zip(s.starts, s.ends))) for s in pipeline.sentences(text)]
        parts.extend(with_heads(conllu_sentence(words, labels, offsets, text, f"{d}-{k}", token_labels=True))
                     for k, (words, labels, offsets) in enumerate(sentences, start=1))
    return "".join(parts)


def majority(table: MultiwordTable) -> MultiwordTable:
    """The baseline of the context rule: each surface form always read the way training reads it most often."""
    return MultiwordTable({form: Entry(e.words, int(e.mwt >= e.plain), int(e.mwt < e.plain))
                           for form, e in table.entries.items()})


SCORER_ENV = "CONLL18_UD_EVAL"


def load_scorer(path: str | None) -> Any:
    """The official ``conll18_ud_eval`` module from ``path`` (or ``$CONLL18_UD_EVAL``); SystemExit naming where to
    get it when neither names a file."""
    where = path or os.environ.get(SCORER_ENV)
    if not where or not Path(where).is_file():
        given = where or f"no --scorer and no ${SCORER_ENV}"
        raise SystemExit(f"the CoNLL 2018 scorer conll18_ud_eval.py was not found ({given}); take it from "
                         "github.com/UniversalDependencies/tools and name it with --scorer PATH")
    spec = importlib.util.spec_from_file_location("conll18_ud_eval", where)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def score_conllu(gold: Path, system: Path, scorer: Any | None = None) -> dict[str, float]:
    """Tokens, Sentences, Words and UPOS F1 (percent) of ``system`` against ``gold``, by the official script."""
    ud_eval = scorer or load_scorer(None)
    scores = ud_eval.evaluate(ud_eval.load_conllu_file(str(gold)), ud_eval.load_conllu_file(str(system)))
    return {m: round(100 * scores[m].f1, 2) for m in METRICS}


def raw_text_lines(gold: Path) -> list[str]:
    """The test file's ``# text`` lines, one sentence a line (the raw text a peer is given, sentence by sentence)."""
    return documents(gold, per_sentence=True)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--treebank", required=True, help="folder under $SEQLAB_DATA (ud_french_sequoia)")
    parser.add_argument("--language", help="ISO 639 code (default: the file names' prefix, fr_sequoia -> fr)")
    parser.add_argument("--model", help="a trained UPOS run directory or .seqlab file")
    parser.add_argument("--out", help="folder for the system CoNLL-U")
    parser.add_argument("--scorer", help=f"the official conll18_ud_eval.py (default: ${SCORER_ENV})")
    parser.add_argument("--per-sentence", action="store_true", help="tag each # text line alone (sentence ends "
                                                                     "given; Sentences F1 then counts over-splitting)")
    args = parser.parse_args(argv)
    ud_eval = load_scorer(args.scorer)
    folder = data_root() / args.treebank
    gold, train = next(folder.glob("*-ud-test.conllu")), next(folder.glob("*-ud-train.conllu"))
    language = args.language or gold.name.split("_")[0]
    started = time.perf_counter()
    model = None
    if args.model:
        import seqlab
        model = seqlab.load(args.model, "cpu")
        pipeline = model.text
    else:
        pipeline = TextPipeline(language, learn(train, language))
    out = Path(args.out or tempfile.mkdtemp(prefix="ud_raw_text_"))
    out.mkdir(parents=True, exist_ok=True)
    system = out / f"{gold.stem}.system.conllu"
    system.write_text(system_conllu(documents(gold, args.per_sentence), pipeline, model), encoding="utf-8")
    scores = score_conllu(gold, system, ud_eval)
    result = {"treebank": args.treebank, "gold": str(gold), "system": str(system), "language": language,
              "model": args.model, "per_sentence": args.per_sentence, "seconds": round(time.perf_counter() - started, 1),
              "f1": {m: scores[m] for m in METRICS if model is not None or m != "UPOS"},
              "multiword_decision": accuracy(pipeline.adaptations.multiwords, read_conllu(gold))
              if pipeline.adaptations else None,
              "multiword_majority_baseline": accuracy(majority(pipeline.adaptations.multiwords), read_conllu(gold))
              if pipeline.adaptations else None}
    return result


if __name__ == "__main__":
    json.dump(main(), sys.stdout, indent=2)
    sys.stdout.write("\n")
