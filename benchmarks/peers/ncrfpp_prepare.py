"""Write CoNLL-2003 in NCRF++'s input format, and GloVe uncompressed, for benchmarks/tagger_vs_ncrfpp.py.

    python benchmarks/peers/ncrfpp_prepare.py --out /tmp/ncrfpp_data   # --data: default $SEQLAB_DATA or ../shared/data

NCRF++ reads one token a line, ``word [Cap]class label``, blank lines between sentences;
each middle column ``[Name]value`` is a feature with its own embedding. The CoNLL-2003 files
(IOB1) become BIOES (NCRF++'s "BMES" scheme; the same 17 tags as seqlab's BILOU), with
``-DOCSTART-`` lines dropped, as seqlab's reader drops them. ``[Cap]`` is the 6-way
capitalization class of seqlab's tagger (Collobert et al. 2011), from the one classifier in
``features.orthographic``, so NCRF++ sees exactly the classes seqlab's tagger sees. GloVe is
written uncompressed (NCRF++ reads a plain text file).
"""
from __future__ import annotations

import argparse
import gzip
from pathlib import Path

from features.orthographic import capitalization

def read_conll(path: Path, tag_column: int = -1) -> list[list[tuple[str, str]]]:
    sentences, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if not parts:
            if current:
                sentences.append(current)
            current = []
            continue
        if parts[0] == "-DOCSTART-":
            continue
        current.append((parts[0], parts[tag_column]))
    if current:
        sentences.append(current)
    return sentences


def iob1_to_bioes(tags: list[str]) -> list[str]:
    spans, start, kind = [], None, None
    for i, tag in enumerate(tags + ["O"]):
        prefix, _, label = tag.partition("-")
        begins = prefix == "B" or (prefix == "I" and label != kind)
        if start is not None and (tag == "O" or begins):
            spans.append((start, i, kind))
            start, kind = None, None
        if tag != "O" and begins:
            start, kind = i, label
    out = ["O"] * len(tags)
    for s, e, k in spans:
        if e - s == 1:
            out[s] = f"S-{k}"
        else:
            out[s], out[e - 1] = f"B-{k}", f"E-{k}"
            for j in range(s + 1, e - 1):
                out[j] = f"I-{k}"
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=None, help="the data folder (default: $SEQLAB_DATA or ../shared/data)")
    p.add_argument("--out", type=Path, default=Path("/tmp/ncrfpp_data"))
    args = p.parse_args()
    if args.data is None:
        from seqlab.core.paths import data_root

        args.data = data_root()
        if args.data is None:
            raise SystemExit("ncrfpp_prepare: no data folder: set SEQLAB_DATA or give --data")
    args.out.mkdir(parents=True, exist_ok=True)
    for split in ("train", "dev", "test"):
        sentences = read_conll(args.data / "conll2003" / f"{split}.txt")
        with open(args.out / f"{split}.bioes", "w", encoding="utf-8") as f:
            for sentence in sentences:
                words = [w for w, _ in sentence]
                for word, tag in zip(words, iob1_to_bioes([t for _, t in sentence])):
                    f.write(f"{word} [Cap]{capitalization(word)} {tag}\n")
                f.write("\n")
        print(split, len(sentences), "sentences")
    glove = args.out / "glove.6B.50d.txt"
    if not glove.exists():
        with gzip.open(args.data / "wordreprs" / "glove6b50d" / "glove.6B.50d.txt.gz", "rt", encoding="utf-8") as src, \
                open(glove, "w", encoding="utf-8") as dst:
            for line in src:
                dst.write(line)


if __name__ == "__main__":
    main()
