"""seqlab.core.runfiles: the run-file names, spelled once, importable without torch."""
from __future__ import annotations

import subprocess
import sys

from seqlab.core import rundir, runfiles


def test_runfiles_imports_no_torch() -> None:
    code = "import sys, seqlab.core.runfiles; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_rundir_uses_the_same_names() -> None:
    for name in ("CONFIG", "VOCABS", "WEIGHTS", "CHECKPOINT", "METRICS", "LOG", "FEATURES", "ENCODER",
                 "CALIBRATION", "CARD", "LOCK"):
        assert getattr(rundir, name) is getattr(runfiles, name)


def test_names_are_distinct() -> None:
    names = [v for k, v in vars(runfiles).items() if k.isupper()]
    assert len(names) == len(set(names))
