"""seqlab.cli.VERBS, the one verb table: in step with ``seqlab --help`` and with the modules of seqlab/cli."""
from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab.cli import VERBS, parser

CLI = Path(__file__).parents[2] / "seqlab" / "cli"


def _verbs(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_help_lists_the_table_in_order():
    out = subprocess.run([sys.executable, "-m", "seqlab", "--help"], capture_output=True, text=True, check=True)
    listed = re.search(r"\{([a-z,]+)\}", out.stdout)
    assert listed and listed.group(1).split(",") == list(VERBS)
    assert list(_verbs(parser())) == list(VERBS)


def test_every_verb_module_is_in_the_table_and_every_table_module_exists():
    with_parsers = {p.stem for p in CLI.glob("*.py")
                    if re.search(r"^def add_parsers\(", p.read_text(encoding="utf-8"), re.M)}
    assert with_parsers == {v.module for v in VERBS.values()}


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_verb_alone_builds_its_module_and_runs_its_handler(verb):
    entry = VERBS[verb]
    built = _verbs(parser(verb))
    assert set(built) == {name for name, v in VERBS.items() if v.module == entry.module}
    func = built[verb].get_default("func")
    if entry.handler is None:
        assert func is None and _verbs(built[verb])  # its sub-commands have their own
    else:
        assert func is getattr(importlib.import_module(f"seqlab.cli.{entry.module}"), entry.handler)


def test_help_imports_no_torch():
    code = "import sys; from seqlab.cli import parser; parser(); sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
