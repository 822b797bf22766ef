"""The input files of :mod:`probes.sweep`: labelled CoNLL files, raw text and SemEval files of every odd kind.

Each kind is bytes (or a folder, a missing path, an unreadable file) and what the verbs that read it must do:
``"ok"`` (and the sweep checks the result) or ``"error"`` (one clear line, no traceback).
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NER = ROOT / "tests" / "fixtures" / "ner"
SEMEVAL = ROOT / "tests" / "fixtures" / "semeval"
SPECIAL = ("folder", "missing", "unreadable")  # kinds that are not bytes


@dataclass(frozen=True)
class Kind:
    """A labelled file kind: its bytes, whether a tagger reads it (eval, train), its gold token count."""

    data: bytes | None
    ok: bool
    tokens: int = 0
    columns: int = 4  # fields per token line (the tiny model's files have 4)


def _sentences() -> list[list[list[str]]]:
    """The tiny dev file's sentences as rows of (word, pos, chunk, ner), IOB1."""
    out, rows = [], []
    for line in (NER / "dev.txt").read_text().splitlines():
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if rows:
                out.append(rows)
            rows = []
            continue
        rows.append(fields)
    return out + ([rows] if rows else [])


def _iob1_to(tags: list[str], scheme: str) -> list[str]:
    """Re-write IOB1 tags in ``scheme`` (iob2, bilou, iobes) with conlleval's reading of IOB1."""
    spans, start = [], None
    for i, tag in enumerate(tags + ["O"]):
        kind = tag[2:] if tag != "O" else ""
        opens = tag.startswith("B-") or (tag.startswith("I-") and (i == 0 or tags[i - 1] == "O"
                                                                    or tags[i - 1][2:] != kind))
        if start is not None and (tag == "O" or opens):
            spans.append((start, i, tags[start][2:]))
            start = None
        if tag != "O" and start is None:
            start = i
    out = ["O"] * len(tags)
    single, last = {"bilou": ("U", "L"), "iobes": ("S", "E"), "iob2": ("B", "I")}[scheme]
    for s, e, t in spans:
        for i in range(s, e):
            out[i] = f"{'B' if i == s else 'I'}-{t}"
        if e - s == 1:
            out[s] = f"{single}-{t}"
        else:
            out[e - 1] = f"{last}-{t}"
    return out


def _render(sentences: list[list[list[str]]], sep: str = " ", eol: str = "\n", docstart: str = "top",
            cols: tuple[int, ...] = (0, 1, 2, 3)) -> str:
    blocks = [eol.join(sep.join(row[c] for c in cols) for row in rows) + eol for rows in sentences]
    head = f"-DOCSTART-{sep}-X-{sep}O{sep}O{eol}{eol}" if docstart == "top" and len(cols) == 4 else ""
    return head + eol.join(blocks)


def labelled_kinds() -> dict[str, Kind]:
    """Labelled CoNLL files (token ... tag), keyed by kind."""
    sents = _sentences()
    n = sum(len(s) for s in sents)
    base = _render(sents)

    def scheme(name: str) -> str:
        return _render([[r[:3] + [t] for r, t in zip(s, _iob1_to([r[3] for r in s], name))] for s in sents])

    mid_doc = _render(sents[:1]) + "-DOCSTART- -X- O O\n" + _render(sents[1:], docstart="none")
    unseen = base.replace("I-LOC", "I-FOO", 1)
    last = base.rstrip("\n").rsplit("\n", 1)
    nbsp = "\u00a0"
    tab_ws = _render(sents, sep="\t").replace("\n\n", f"\n{nbsp}\tNN\tI-NP\tO\n\n", 1)
    return {
        "zero_byte": Kind(b"", False), "blank_lines": Kind(b"\n\n \n\t\n", False),
        "binary": Kind(bytes(range(256)) * 8, False),
        "latin1": Kind(base.replace("EU", "Montr\xe9al", 1).encode("latin-1"), False),
        "utf16_bom": Kind(base.encode("utf-16"), False),
        "utf8_bom": Kind(b"\xef\xbb\xbf" + base.encode(), True, n),
        "crlf": Kind(base.replace("\n", "\r\n").encode(), True, n),
        "space": Kind(base.encode(), True, n), "tab": Kind(_render(sents, sep="\t").encode(), True, n),
        "no_final_newline": Kind(base.rstrip("\n").encode(), True, n),
        "truncated_last_line": Kind((last[0] + "\n" + last[1].rsplit(" ", 2)[0]).encode(), False),
        "nfd": Kind(unicodedata.normalize("NFD", base.replace("EU", "Zürich", 1)).encode(), True, n),
        "zero_width": Kind(base.replace("EU", "E\u200bU", 1).replace("call", "\u200b", 1).encode(), True, n),
        "emoji_flags": Kind(base.replace("EU", "\U0001F1EA\U0001F1FA", 1).replace("call", "👍🏽", 1).encode(),
                            True, n),
        "nbsp_token_tab": Kind(tab_ws.encode(), True, n + 1),
        "nbsp_token_space": Kind(base.replace("call", nbsp, 1).encode(), False),
        "docstart_only": Kind(b"-DOCSTART- -X- O O\n\n", False),
        "docstart_mid_sentence": Kind(mid_doc.encode(), True, n),
        "docstart_last": Kind((base + "-DOCSTART- -X- O O\n").encode(), True, n),
        "docstart_no_blank": Kind(base.replace("-DOCSTART- -X- O O\n\n", "-DOCSTART- -X- O O\n").encode(), True, n),
        "cols1": Kind(_render(sents, cols=(0,)).encode(), False, n, 1),
        "cols2": Kind(_render(sents, cols=(0, 3)).encode(), True, n, 2),
        "cols3": Kind(_render(sents, cols=(0, 1, 3)).encode(), True, n, 3),
        "cols5": Kind(_render(sents, cols=(0, 1, 2, 2, 3)).encode(), True, n, 5),
        "ragged_columns": Kind(base.replace("rejects VBZ I-VP O", "rejects VBZ O").encode(), False),
        "iob2": Kind(scheme("iob2").encode(), True, n), "bilou": Kind(scheme("bilou").encode(), True, n),
        "iobes": Kind(scheme("iobes").encode(), True, n),
        "unseen_label": Kind(unseen.encode(), True, n),
        "bad_tag": Kind(base.replace("I-ORG", "X-ORG", 1).encode(), False),
        "nul_byte": Kind(base.replace("EU", "E\0U", 1).encode(), True, n),
        "huge_token": Kind(base.replace("EU", "x" * 300_000, 1).encode(), True, n),
        "folder": Kind(None, False), "missing": Kind(None, False), "unreadable": Kind(None, False),
    }


TEXT = "Angela Merkel visited Montréal and Paris. The EU met in Brussels.\n"


def raw_kinds() -> dict[str, tuple[bytes | None, bool]]:
    """Raw text (one paragraph a line) for ``tag`` and ``features``: bytes and whether it is readable."""
    text = TEXT * 3
    return {
        "zero_byte": (b"", True), "blank_lines": (b"\n\n\n", True), "whitespace_lines": ("  \n\t\n\u00a0\n".encode(), True),
        "binary": (bytes(range(256)) * 8, False), "latin1": ("Montr\xe9al est belle.\n".encode("latin-1"), False),
        "utf16_bom": (text.encode("utf-16"), False), "utf8_bom": (b"\xef\xbb\xbf" + text.encode(), True),
        "crlf": (text.replace("\n", "\r\n").encode(), True), "cr_only": (text.replace("\n", "\r").encode(), True),
        "no_final_newline": (text.rstrip("\n").encode(), True),
        "nfd": (unicodedata.normalize("NFD", text).encode(), True),
        "zero_width": ("Paris\u200bLondon met \u200b in Berlin.\n".encode() * 3, True),
        "emoji_flags": ("\U0001F1EB\U0001F1F7 Paris 👍🏽 and the EU 🇪🇺 met.\n".encode() * 3, True),
        "huge_line": ((TEXT.strip() + " ").encode() * 3000 + b"\n", True),
        "huge_word": (b"x" * 200_000 + b" Paris\n", True),
        "nul_byte": ("Paris\0 met Berlin.\n".encode() * 3, True),
        "control_chars": ("Paris\x1b[31m met\x07 Berlin\x0c.\n".encode() * 3, True),
        "many_lines": (TEXT.encode() * 400, True),
        "folder": (None, False), "missing": (None, False), "unreadable": (None, False),
    }


def semeval_kinds() -> dict[str, tuple[bytes | None, bool]]:
    """SemEval-2010 Task 8 files (id, quoted sentence, label, comment): bytes and whether they are readable."""
    base = (SEMEVAL / "train.txt").read_text()
    first = base.split("\n\n")[0]
    return {
        "valid": (base.encode(), True), "crlf": (base.replace("\n", "\r\n").encode(), True),
        "utf8_bom": (b"\xef\xbb\xbf" + base.encode(), True),
        "nfd": (unicodedata.normalize("NFD", base.replace("stove", "crème brûlée")).encode(), True),
        "zero_byte": (b"", False), "binary": (bytes(range(256)) * 8, False),
        "utf16_bom": (base.encode("utf-16"), False),
        "bad_label": (base.replace("Cause-Effect(e2,e1)", "Cause-Effekt(e2,e1)", 1).encode(), False),
        "no_e1_marker": (base.replace("<e1>fire</e1>", "fire", 1).encode(), False),
        "unclosed_quote": (base.replace('stove."', "stove.", 1).encode(), False),
        "truncated_record": ((base.rstrip("\n") + "\n\n999\t\"The <e1>cat</e1> sat").encode(), False),
        "missing_comment": (base.replace(first, first.rsplit("\n", 1)[0], 1).encode(), True),  # read leniently
        "folder": (None, False), "missing": (None, False),
    }


def materialise(folder: Path, name: str, data: bytes | None) -> Path:
    """Write kind ``name`` into ``folder`` (a folder, nothing, or a chmod 000 file for the special kinds)."""
    path = folder / name
    if name == "folder":
        path.mkdir(exist_ok=True)
    elif name == "unreadable":
        path.write_text("EU NNP I-NP I-ORG\n")
        path.chmod(0)
    elif data is not None:
        path.write_bytes(data)
    return path
