"""Helpers for side-by-side speed comparisons with peer tools (no seqlab imports at import time).

On a shared two-core machine the speed of a core drifts with the other jobs' load, so the
comparisons run side A, side B, side A, side B ... in one process or one driver script, and
ratios are only computed from figures of the same run: per round (A's figure over B's of
the same round) and from the medians over rounds.
"""
from __future__ import annotations

import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parents[1]


def one_thread_env(threads: int = 1) -> dict[str, str]:
    """The environment for child processes, pinned to ``threads`` OpenMP/MKL threads."""
    env = dict(os.environ)
    for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[key] = str(threads)
    return env


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    """CPU model, core count and Python version of this machine."""
    model = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "arch": platform.machine(), "cpus": os.cpu_count(), "python": sys.version.split()[0]}


def package_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def portable_path(value: str | os.PathLike[str]) -> str:
    """``value`` as a committed result may hold it: ``$SEQLAB_DATA/...`` under the data folder, relative
    (``benchmarks/...``) under the checkout, else the basename (a scratch file or a peer tool's install).
    A relative path is returned as given."""
    text = os.fspath(value)
    if not os.path.isabs(text):
        return text
    path = Path(text).resolve()
    try:
        from seqlab.core.paths import data_root  # lazily: this module imports no seqlab at import time

        root = data_root()
    except ImportError:
        root = Path(os.environ["SEQLAB_DATA"]) if os.environ.get("SEQLAB_DATA") else None
    if root is not None and path.is_relative_to(root.resolve()):
        return "$SEQLAB_DATA/" + path.relative_to(root.resolve()).as_posix()
    if path.is_relative_to(CHECKOUT):
        return path.relative_to(CHECKOUT).as_posix()
    return path.name


def portable_command(args: Sequence[str]) -> str:
    """A command line with every absolute path argument written by :func:`portable_path`."""
    return " ".join(_quote(portable_path(a)) if os.path.isabs(a) else shlex.quote(a) for a in args)


def _quote(path: str) -> str:
    """Shell-quote ``path``, leaving a leading ``$SEQLAB_DATA/`` outside the quotes so that it still expands."""
    prefix = "$SEQLAB_DATA/"
    return prefix + shlex.quote(path[len(prefix):]) if path.startswith(prefix) else shlex.quote(path)


def command_line() -> str:
    """How this process was started, as one portable line: ``python -m benchmarks.NAME ARGS`` for a module."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    head = ["python", "-m", spec.name] if spec is not None else [os.path.relpath(sys.argv[0])]
    return portable_command(head + sys.argv[1:])


def summarise(rounds: Sequence[dict[str, float]], a: str, b: str, lower_is_better: bool = True) -> dict[str, Any]:
    """Medians over rounds of each side's figure, and A/B ratios per round and of the medians.

    ``rounds``: one ``{a: figure, b: figure}`` per round, in the order they ran.
    """
    med_a = statistics.median(r[a] for r in rounds)
    med_b = statistics.median(r[b] for r in rounds)
    per_round = [round(r[a] / r[b], 3) for r in rounds]
    return {
        "rounds": [dict(r) for r in rounds],
        "median": {a: round(med_a, 4), b: round(med_b, 4)},
        f"ratio_{a}_over_{b}": round(med_a / med_b, 3),
        f"ratio_{a}_over_{b}_per_round": per_round,
        "lower_is_better": lower_is_better,
    }


def run_process(cmd: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None,
                stdout_path: str | None = None) -> dict[str, Any]:
    """Wall time and children's CPU time of one whole process; raises if it fails."""
    before = os.times()
    start = time.perf_counter()
    with open(stdout_path or os.devnull, "w", encoding="utf-8") as out:
        proc = subprocess.run(list(cmd), cwd=cwd, env=env, stdout=out, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall_seconds": round(wall, 3), "cpu_seconds": round(cpu, 3)}

