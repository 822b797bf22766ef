"""What the ``seqlab`` verbs share: argument types, input lines in ``--encoding`` (UTF-8 unless told), UTF-8 output,
loading a model of the right kind."""
from __future__ import annotations

import argparse
import codecs
import io
import sys
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator

from seqlab.apps.backends import BACKENDS
from seqlab.apps.installed import DEFAULT_MODEL
from seqlab.core.loaded import DEFAULT_BACKEND, LoadedModel
from seqlab.core.paths import require_file
from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.data.conll import UTF8_BOM
from seqlab.data.encoding import DEFAULT_ENCODING, decode_line, decode_text, is_utf8, reads_line_by_line


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {value}")
    return value


def utf8_lines(handle: BinaryIO, source: str) -> Iterator[str]:
    """:func:`decoded_lines` in UTF-8."""
    return decoded_lines(handle, source, DEFAULT_ENCODING)


def decoded_lines(handle: BinaryIO, source: str, encoding: str) -> Iterator[str]:
    """Decode a byte stream line by line in ``encoding`` (:mod:`seqlab.data.encoding`: bytes that do not decode
    are an error naming the line and the encoding they most likely are), each line with its line end. A
    byte-order mark opening the stream is not text: offsets into the first line count from after it. An encoding
    whose line end is not the byte 0x0a (UTF-16, UTF-32) is decoded whole."""
    if not reads_line_by_line(encoding):
        yield from _split_lines(decode_text(handle.read(), encoding, source).removeprefix("\ufeff"))
        return
    utf8 = is_utf8(encoding)
    for number, raw in enumerate(handle, start=1):
        if number == 1 and utf8:
            raw = raw.removeprefix(UTF8_BOM)
        yield decode_line(raw, encoding, source, number)


def _split_lines(text: str) -> Iterator[str]:
    """The lines of ``text``, each with its ``\\n`` (as a byte stream is read: at ``\\n`` only)."""
    *lines, last = text.split("\n")
    yield from (line + "\n" for line in lines)
    if last:
        yield last


def input_lines(file: str | None, encoding: str = DEFAULT_ENCODING) -> tuple[Iterable[str], str]:
    """The lines of ``file`` (``-`` or None: standard input) in ``encoding``, and the name errors use for it."""
    if file in (None, "-"):
        raw = getattr(sys.stdin, "buffer", None)  # None when stdin was replaced by a text-only stream
        return (sys.stdin if raw is None else decoded_lines(raw, "<stdin>", encoding)), "<stdin>"
    path = Path(file)
    require_file(path, stream=True)  # read once, start to end: a FIFO or <(cmd) serves as well as a file
    return _file_lines(path, encoding), str(path)


def _file_lines(path: Path, encoding: str) -> Iterator[str]:
    with open(path, "rb") as handle:
        yield from decoded_lines(handle, str(path), encoding)


def add_encoding_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--encoding NAME``: the text encoding of ``what``, UTF-8 unless given (whatever ``data.encoding`` the
    model was trained with: that names its training files, not new ones)."""
    parser.add_argument("--encoding", default=DEFAULT_ENCODING, metavar="NAME",
                        help=f"the text encoding of {what}: latin-1, cp1252, utf-16, ... (default utf-8, whatever "
                             "data.encoding the model was trained with); output is always UTF-8")


def utf8_output() -> None:
    """Standard output in UTF-8 whatever the locale says (``LANG=...ISO-8859-1``, ``PYTHONIOENCODING``): seqlab
    writes UTF-8, as it writes its files; ``--encoding`` is the input's."""
    stream = sys.stdout
    if isinstance(stream, io.TextIOWrapper) and codecs.lookup(stream.encoding).name != "utf-8":
        stream.reconfigure(encoding="utf-8")


def use_threads(threads: int) -> None:
    """Run torch on ``threads`` CPU threads (``seqlab eval`` and ``tag`` default to 1: torch's own default,
    one per core, oversubscribes a machine that is busy with anything else and makes timings erratic)."""
    import torch

    torch.set_num_threads(threads)


def add_offsets_option(parser: argparse.ArgumentParser, default: str | None = "auto") -> None:
    """``--offsets``: what a span JSONL or Label Studio input's offsets count (data.offsets)."""
    from seqlab.data.formats.offsets import UNITS

    parser.add_argument("--offsets", choices=UNITS, default=default,
                        help="what span JSONL / Label Studio offsets count: chars, utf8 (bytes), utf16 (code units, "
                             "as JavaScript tools write them) or auto (decided by the spans' texts; default: "
                             + ("auto)" if default else "the model's data.offsets)"))


def add_threads_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--threads", type=positive_int, default=1,
                        help="CPU threads for the model (default 1: steady on a shared machine; raise it on an "
                             "idle one)")


def add_device_option(parser: argparse.ArgumentParser, workers: bool = False) -> None:
    when = " and --workers is 1, else the CPU" if workers else ""
    parser.add_argument("--device", default="auto",
                        help=f"where the model runs: auto (the GPU when there is one{when}), cpu, cuda or cuda:N")


def model_device(name: str, workers: int = 1) -> str:
    """The device a verb loads its model on. Worker processes (``--workers`` > 1) run the model on the CPU:
    ``serve`` forks them after the model loads, and a forked process cannot use a CUDA context made before the
    fork; ``tag`` starts one interpreter each, which on one GPU would hold N copies. So with workers, ``auto``
    means the CPU and a GPU is a clear error; one process (the default) runs on the GPU when there is one."""
    if name == "auto":  # torch not imported: tag --workers starts its workers without it
        return name if workers == 1 else "cpu"
    from seqlab.core.device import resolve_device

    device = resolve_device(name, key="--device")  # a name torch does not know, or cuda without a GPU: said here
    if workers > 1 and device.type == "cuda":
        raise SeqlabError(f"--device {name} with --workers {workers}: worker processes run the model on the CPU; "
                          "run it on the GPU with --workers 1 (requests and batches share the GPU), or pass "
                          "--device cpu")
    return name


def load_model(model_dir: str | None, task: str | tuple[str, ...] | None = None, verb: str = "",
               backend: str = DEFAULT_BACKEND,
               device: str = "auto") -> LoadedModel:
    """``seqlab.load(model_dir, device, backend=backend)`` (None: the installed default model), refusing a model
    of another ``task`` than the verb's with a clear message. The cyclic garbage collector is paused meanwhile:
    importing torch and its ~1,000 modules would otherwise run full collections over every object made so far
    (a bare ``import torch``: median 1.07 s wall paused, against 1.26 s; 4 alternating rounds)."""
    import gc

    import seqlab

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        model = seqlab.load(model_dir, device, backend=backend)
    finally:
        if was_enabled:
            gc.enable()
    tasks = (task,) if isinstance(task, str) else task
    if tasks is not None and model.task not in tasks:
        raise SeqlabError(f"{model_dir or DEFAULT_MODEL}: seqlab {verb} needs a {' or '.join(tasks)} model, and this "
                          f"one is a {model.task} model")
    return model


def add_backend_option(parser: argparse.ArgumentParser) -> None:
    """``--backend NAME``, one of :data:`seqlab.apps.backends.BACKENDS`."""
    parser.add_argument("--backend", choices=BACKENDS.names(), default=DEFAULT_BACKEND,
                        help="what computes the model's scores: "
                             + "; ".join(f"{name}: {BACKENDS.get(name).help}" for name in BACKENDS))
