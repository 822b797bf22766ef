"""Using a trained tagger: evaluate it on a labelled file, or tag raw text as a stream.

Raw text is read line by line (one paragraph per line), split into sentences and
CoNLL-style tokens, and tagged in batches of sentences, so memory stays bounded
however long the input is. Output formats:

* ``conll``: ``token label`` lines, a blank line after each sentence;
* ``jsonl``: one JSON object per sentence with tokens and spans (character
  offsets into the input line, type, text, confidence);
* ``inline``: each input line with entities marked ``[TYPE words]``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator, TextIO

import torch

from seqlab import archive
from seqlab.atomic import atomic_open
from seqlab.build import use_post_viterbi
from seqlab.data.batching import encode
from seqlab.data.dataset import read_split
from seqlab.data.schemes import convert
from features.tokenize import Token, split_sentences
from seqlab.metrics import format_conlleval, score
from seqlab.token_features import encode_options
from seqlab.modules.window_fast import Workspace
from seqlab.predict import Prediction, predict
from seqlab.train import resolve_device


def evaluate_file(run_dir: str | Path, file: str | Path, *, output: str | Path | None = None,
                  batch_size: int = 100, post_viterbi: bool = False) -> str:
    """Score a trained model on a labelled file laid out like its training data; write token/gold/pred.

    ``post_viterbi`` decodes a softmax tagger by Viterbi over its per-token probabilities.
    """
    config, vocabs, model, features = archive.load_run(run_dir)
    if post_viterbi:
        use_post_viterbi(model, vocabs["tags"].itos, config.data.tag_scheme)
    split = read_split(config.data, "eval", path=file)
    data = encode(split.tokens, vocabs, **encode_options(features, split.columns))
    results = predict(model, data, vocabs["tags"], batch_size=batch_size)
    pred = [convert(r.labels, config.data.file_scheme) for r in results]
    report = score(split.file_tags, pred)
    out = Path(output) if output else Path(run_dir) / "eval" / f"{Path(file).name}.pred.txt"
    with atomic_open(out) as handle:
        for tokens, gold, guess in zip(split.tokens, split.file_tags, pred):
            handle.writelines(f"{w} {g} {p}\n" for w, g, p in zip(tokens, gold, guess))
            handle.write("\n")
    return format_conlleval(report) + f"predictions written to {out}\n"


def _paragraphs(lines: Iterable[str]) -> Iterator[tuple[int, str, list[list[Token]]]]:
    for number, line in enumerate(lines, start=1):
        text = line.rstrip("\r\n")
        yield number, text, split_sentences(text) if text.strip() else []


def tag_stream(run_dir: str | Path, lines: Iterable[str], out: TextIO, *, fmt: str = "conll",
               batch_size: int = 64, source: str = "<stdin>") -> None:
    """Tag raw text line by line, ``batch_size`` sentences at a time, writing as each batch is done."""
    config, vocabs, model, features = archive.load_run(run_dir, resolve_device("auto"))
    device = next(model.parameters()).device
    pending: list[tuple[int, str, list[list[Token]]]] = []
    count = 0
    workspace = Workspace()  # a windowed tagger's tables reuse this memory from one batch to the next
    for paragraph in _paragraphs(lines):
        pending.append(paragraph)
        count += len(paragraph[2])
        if count >= batch_size:
            _flush(pending, vocabs, model, features, device, out, fmt, config.data.file_scheme, workspace)
            pending, count = [], 0
    _flush(pending, vocabs, model, features, device, out, fmt, config.data.file_scheme, workspace)


def _flush(pending, vocabs, model, features, device: torch.device, out: TextIO, fmt: str, scheme: str,  # type: ignore[no-untyped-def]
           workspace: Workspace) -> None:
    sentences = [s for _, _, sents in pending for s in sents]
    if not sentences and fmt != "inline":
        return
    results: list[Prediction] = []
    if sentences:
        data = encode([[t.text for t in s] for s in sentences], vocabs, **encode_options(features))
        results = predict(model, data, vocabs["tags"], batch_size=len(sentences), device=device, confidences=True,
                          workspace=workspace)
    it = iter(results)
    for number, text, sents in pending:
        preds = [next(it) for _ in sents]
        if fmt == "conll":
            for sent, pred in zip(sents, preds):
                labels = convert(pred.labels, scheme)
                out.writelines(f"{t.text} {label}\n" for t, label in zip(sent, labels))
                out.write("\n")
        elif fmt == "jsonl":
            for sent, pred in zip(sents, preds):
                out.write(json.dumps({"line": number, "tokens": [t.text for t in sent], "spans": [
                    {"start": sent[s].start, "end": sent[e - 1].end, "type": kind,
                     "text": text[sent[s].start:sent[e - 1].end], "confidence": round(conf, 4)}
                    for kind, s, e, conf in pred.spans]}, ensure_ascii=False) + "\n")
        else:
            out.write(_inline(text, sents, preds) + "\n")
    out.flush()


def _inline(text: str, sents: list[list[Token]], preds: list[Prediction]) -> str:
    pieces, cursor = [], 0
    for sent, pred in zip(sents, preds):
        for kind, s, e, _ in pred.spans:
            start, end = sent[s].start, sent[e - 1].end
            pieces.append(f"{text[cursor:start]}[{kind} {text[start:end]}]")
            cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)
