"""Where data lives: paths in configs are relative to ``SEQLAB_DATA``.

``SEQLAB_DATA`` defaults to ``../shared/data`` (beside the project checkout, or
beside the current directory) when that folder exists. A path written with a leading
``./`` or ``../`` is relative to the working directory instead, for files a user built
into ``runs/`` (induced embeddings, Brown paths, LS artefacts).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from seqlab.core.errors import SeqlabError

ENV = "SEQLAB_DATA"
_PROJECT_ROOT = Path(__file__).resolve().parents[2]


def data_root() -> Path | None:
    """The data folder: ``$SEQLAB_DATA``, else ``../shared/data`` if it exists, else None."""
    env = os.environ.get(ENV)
    if env:
        return Path(env).expanduser()
    for base in (_PROJECT_ROOT, Path.cwd()):
        candidate = base.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate.resolve()
    return None


def resolve_data_path(value: str, *, key: str, must_exist: bool = True) -> Path:
    """Resolve a config path: absolute and ``./``/``../`` paths as given, others under :func:`data_root`."""
    path = Path(value).expanduser()
    root = data_root()
    if value.startswith(("./", "../")):
        if must_exist and not path.exists():
            raise SeqlabError(f"{key}: file {value!r} does not exist (a path starting with ./ or ../ is relative to "
                              f"the working directory, {Path.cwd()})")
        return path
    if not path.is_absolute():
        if root is None:
            raise SeqlabError(
                f"{key}: {value!r} is relative to the data folder, but SEQLAB_DATA is not set and "
                f"../shared/data does not exist; set SEQLAB_DATA=/path/to/data"
            )
        path = root / path
    if must_exist and not path.exists():
        where = f"SEQLAB_DATA={os.environ[ENV]}" if os.environ.get(ENV) else f"default data folder {root}"
        here = Path(value).expanduser()
        hint = (f"; {value!r} exists in the working directory: write ./{value} to read it from there"
                if not here.is_absolute() and here.exists() else
                f"; a path starting with ./ is read from the working directory ({Path.cwd()}) instead")
        raise SeqlabError(
            f"{key}: file {str(path)!r} does not exist (relative paths are resolved against the {where}; "
            f"set SEQLAB_DATA=/path/to/data to change it{hint})"
        )
    return path


def data_relative(path: str | Path) -> str:
    """``path`` as a config names it: relative to the data folder when it lies inside it (what a record such as
    a model file's calibration.json keeps, so that it names no machine's folders), else as given."""
    root = data_root()
    try:
        return str(Path(path).resolve().relative_to(root.resolve())) if root is not None else str(path)
    except ValueError:
        return str(path)


def require_file(path: str | Path, expected: str = "", *, stream: bool = False) -> Path:
    """``path`` if it is a file (with ``stream``, also a FIFO or character device, such as the ``/dev/fd/63`` of a
    shell's ``<(cmd)``, for a reader that reads once from start to end); else a :class:`SeqlabError` that says
    whether it is missing, a folder or another kind of file (``expected`` says what the file should hold, e.g.
    "a SemEval-2010 Task 8 file")."""
    path = Path(path)
    if path.is_file():
        return path
    hint = f" (expected {expected})" if expected else ""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise SeqlabError(f"{path}: no such file{hint}") from None
    except OSError as err:
        raise SeqlabError(f"{path}: cannot be read: {err.strerror or err}{hint}") from None
    if stat.S_ISDIR(mode):
        raise SeqlabError(f"{path}: a folder, not a file{hint}")
    if stream and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        return path
    kind = "a pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
        else "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
    raise SeqlabError(f"{path}: {kind}, not a file that can be read more than once{hint}")
