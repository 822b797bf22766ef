"""``seqlab features {brown,cw,hlbl,show}`` through ``main([...])`` on a tiny corpus; bad input is exit 2, one line."""
from __future__ import annotations

import inspect
import random
import re
from pathlib import Path

import pytest

from features.brown import BrownClusters, induce_brown
from features.vocab import Embeddings
from seqlab.cli import main, parser

TINY = ["--dim", "8", "--epochs", "1", "--batch-size", "16", "--min-count", "1", "--max-updates", "5",
        "--device", "cpu", "--quiet"]


def write_corpus(path: Path, sentences: int = 80, seed: int = 0) -> Path:
    """About 500 tokens, one sentence a line: cat/dog share contexts, as do apple/pear."""
    rng = random.Random(seed)
    templates = ["the {} sat on the mat .", "a {} chased the ball .", "she ate an {} today .",
                 "one ripe {} fell down ."]
    pairs = [("cat", "dog"), ("cat", "dog"), ("apple", "pear"), ("apple", "pear")]
    lines = []
    for _ in range(sentences):
        k = rng.randrange(len(templates))
        lines.append(templates[k].format(rng.choice(pairs[k])))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus") / "corpus.txt")


@pytest.fixture(scope="module")
def paths_file(tmp_path_factory, corpus) -> Path:
    """A Brown paths file made by the features code directly (not through the CLI under test)."""
    path = tmp_path_factory.mktemp("brown") / "paths.txt"
    induce_brown((line.split() for line in corpus.read_text(encoding="utf-8").splitlines()), 3).save(path)
    return path


@pytest.fixture
def one_thread():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_brown_writes_a_paths_file_and_a_summary(capsys, tmp_path, corpus):
    out = tmp_path / "sub" / "paths.txt"
    code, stdout, _ = run(capsys, "features", "brown", "--corpus", corpus, "--clusters", 3, "--out", out,
                          "--no-tokenize", "--quiet")
    assert code == 0
    clusters = BrownClusters.load(out)
    assert clusters.num_clusters == 3 and clusters.paths["cat"]
    tokens = len(corpus.read_text(encoding="utf-8").split())
    assert f"{tokens:,} tokens" in stdout and "3 clusters" in stdout and "AMI" in stdout and str(out) in stdout


def test_brown_checkpoint_is_removed_once_the_paths_are_written(capsys, tmp_path, corpus):
    ckpt, out = tmp_path / "brown.ckpt", tmp_path / "paths.txt"
    argv = ["features", "brown", "--corpus", corpus, "--clusters", 3, "--out", out, "--no-tokenize", "--quiet",
            "--checkpoint", ckpt]
    assert run(capsys, *argv)[0] == 0
    assert out.is_file() and not ckpt.exists()
    plain = tmp_path / "plain.txt"
    assert run(capsys, "features", "brown", "--corpus", corpus, "--clusters", 3, "--out", plain, "--no-tokenize",
               "--quiet")[0] == 0
    assert BrownClusters.load(out).paths == BrownClusters.load(plain).paths


@pytest.mark.parametrize("verb, loss", [("cw", "ranking_loss"), ("hlbl", "perplexity")])
def test_embeddings_are_trained_saved_and_summarised(capsys, tmp_path, corpus, paths_file, one_thread, verb, loss):
    out = tmp_path / "vectors.txt"
    extra = ["--tree", paths_file, "--format", "turian"] if verb == "hlbl" else []
    code, stdout, _ = run(capsys, "features", verb, "--corpus", corpus, "--out", out, "--heldout", corpus,
                          *TINY, *extra)
    assert code == 0
    vectors = Embeddings.load(out)
    assert vectors.dim == 8 and "cat" in vectors
    assert stdout.splitlines()[1].startswith("held-out: ")
    assert "windows/s" in stdout and f"{loss} " in stdout.splitlines()[1] and str(out) in stdout


def test_skipgram_writes_vectors_a_model_and_a_summary(capsys, tmp_path, corpus):
    pytest.importorskip("fasttext")
    out, model = tmp_path / "vectors.txt", tmp_path / "model.bin"
    code, stdout, _ = run(capsys, "features", "skipgram", "--corpus", corpus, "--out", out, "--model", model,
                          "--dim", 10, "--epochs", 2, "--min-count", 1, "--bucket", 1000, "--quiet")
    assert code == 0
    vectors = Embeddings.load(out)
    assert vectors.dim == 10 and "cat" in vectors and "</s>" not in vectors
    assert model.is_file() and str(out) in stdout and "tokens passed over" in stdout
    assert f"{model} (fastText model, {model.stat().st_size / 1e6:,.1f} MB)" in stdout


def test_skipgram_defaults_fit_the_corpus_and_its_progress_stays_off_a_redirected_stderr(capfd, tmp_path, corpus):
    fasttext = pytest.importorskip("fasttext")
    from features.fasttext_train import BUCKETS_PER_WORD

    out, model = tmp_path / "vectors.txt", tmp_path / "model.bin"
    assert main(["features", "skipgram", "--corpus", str(corpus), "--out", str(out), "--model", str(model),
                 "--dim", "10", "--epochs", "1", "--min-count", "1"]) == 0  # no --quiet, no --bucket, no --threads
    _, stderr = capfd.readouterr()
    assert "Progress" not in stderr and "\r" not in stderr  # fastText's progress line is for terminals only
    args = fasttext.load_model(str(model)).f.getArgs()
    words = len(Embeddings.load(out)) + 1  # and </s>
    assert args.bucket == BUCKETS_PER_WORD * words  # not fastText's 2,000,000 (a .bin does not keep the threads)


def test_show_a_paths_file(capsys, paths_file):
    code, stdout, _ = run(capsys, "features", "show", paths_file, "cat", "--k", 3)
    bits = BrownClusters.load(paths_file).paths["cat"]
    lines = stdout.splitlines()
    assert code == 0 and lines[0].startswith(f"cat: bit-string {bits}") and len(lines) == 4


def test_show_a_vector_file(capsys, tmp_path):
    path = tmp_path / "vectors.txt"
    Embeddings(["cat", "dog", "pear"], [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]).save(path, format="turian")
    code, stdout, _ = run(capsys, "features", "show", path, "cat", "--k", 2)
    assert code == 0
    assert [line.split()[1] for line in stdout.splitlines()[1:]] == ["dog", "pear"]
    assert stdout.splitlines()[2].split()[2] == "0.0000"


def bad_paths(tmp: Path) -> Path:
    (tmp / "bad_paths.txt").write_text("0\tthe\t3\n1\tcat\n", encoding="utf-8")
    return tmp / "bad_paths.txt"


def empty(tmp: Path) -> Path:
    (tmp / "empty.txt").write_bytes(b"")
    return tmp / "empty.txt"


@pytest.mark.parametrize("argv, message", [
    (lambda t, c: ["brown", "--corpus", empty(t), "--clusters", 3, "--out", t / "p"],
     r"empty corpus: no sentences in .*empty\.txt"),
    (lambda t, c: ["brown", "--corpus", c, "--clusters", 500, "--out", t / "p"],
     r"has \d+ distinct words .* fewer than num_clusters=500"),
    (lambda t, c: ["brown", "--corpus", t / "nope.txt", "--clusters", 3, "--out", t / "p"],
     r"corpus file not found: .*nope\.txt"),
    (lambda t, c: ["brown", "--corpus", c, "--clusters", 3, "--out", t], r"is a folder; give a file name"),
    (lambda t, c: ["brown", "--corpus", c, "--clusters", 3, "--out", t / "p", "--checkpoint", empty(t)],
     r"empty\.txt: not a Brown clustering checkpoint"),
    (lambda t, c: ["show", bad_paths(t), "the"], r"bad_paths\.txt:2: expected 3 tab-separated fields"),
    (lambda t, c: ["show", t / "nope.txt", "the"], r"nope\.txt: no such file"),
    (lambda t, c: ["show", empty(t), "the"], r"empty\.txt: the file is empty"),
    (lambda t, c: ["show", t / "missing" / "vectors.txt", "the"], r"vectors\.txt: no such file"),
    (lambda t, c: ["cw", "--corpus", c, "--out", t / "v", "--dim", 0], r"dim must be positive, but got 0"),
    (lambda t, c: ["hlbl", "--corpus", c, "--out", t / "v", "--dim", 8, "--tree", bad_paths(t)], r"bad_paths\.txt:2: "),
    (lambda t, c: ["hlbl", "--corpus", c, "--out", t / "v", "--dim", 8, "--max-updates", 0],
     r"max_updates must be positive"),
    (lambda t, c: ["skipgram", "--corpus", c, "--out", t / "v", "--window", 0], r"window must be a positive integer"),
    (lambda t, c: ["skipgram", "--corpus", c, "--out", t / "v", "--minn", 5, "--maxn", 3], r"1 <= minn <= maxn"),
    (lambda t, c: ["skipgram", "--corpus", c, "--out", t / "v", "--model", t], r"is a folder; give a file name"),
    (lambda t, c: ["skipgram", "--corpus", empty(t), "--out", t / "v"], r"empty corpus: no sentences in .*empty\.txt"),
])
def test_bad_input_is_one_error_line_and_exit_2(capsys, tmp_path, corpus, argv, message):
    code, stdout, stderr = run(capsys, "features", *argv(tmp_path, corpus))
    errors = [line for line in stderr.splitlines() if line.startswith("seqlab: error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in stderr
    assert re.search(message, errors[0]), errors[0]


def test_show_names_a_word_that_is_missing(capsys, paths_file):
    code, _, stderr = run(capsys, "features", "show", paths_file, "zebra")
    assert code == 2 and "seqlab: error: 'zebra' is not in the clusters" in stderr


def test_cli_defaults_are_the_functions_defaults():
    """The CLI restates the learners' defaults for --help; this keeps the two from drifting apart."""
    from features.cw import train_cw
    from features.hlbl import train_hlbl
    from features.skipgram import train_skipgram

    required = ["--corpus", "c.txt", "--out", "o.txt"]
    for argv, function in [(["brown", "--clusters", "3"], induce_brown), (["cw", "--dim", "8"], train_cw),
                           (["hlbl", "--dim", "8"], train_hlbl), (["skipgram"], train_skipgram)]:
        args = vars(parser().parse_args(["features", *argv, *required]))
        shared = [(name, p.default) for name, p in inspect.signature(function).parameters.items()
                  if p.kind is p.KEYWORD_ONLY and name in args and (name != "dim" or argv == ["skipgram"])]
        assert shared and all(args[name] == default for name, default in shared), (argv[0], shared)
