"""``seqlab serve``'s options as the help and the README describe them."""
from __future__ import annotations

import re
from pathlib import Path

from features.tokenize import count_tokens
from seqlab.cli import parser

README = Path(__file__).resolve().parents[2] / "README.md"


def serve_help(capsys) -> str:
    try:
        parser().parse_args(["serve", "--help"])
    except SystemExit:
        pass
    return " ".join(capsys.readouterr().out.split())


def test_max_tokens_is_described_as_the_tokenizer_s_count_not_whitespace_words(capsys):
    text = serve_help(capsys)
    assert "the tokens seqlab's tokenizer makes of it" in text and "whitespace" not in text
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert "whitespace-separated words" not in readme
    example = re.search(r"raw text counts the tokens the tokenizer makes of it: `([^`]+)` is (\d+)\)", readme)
    assert example and count_tokens(example.group(1)) == int(example.group(2)) > len(example.group(1).split())
