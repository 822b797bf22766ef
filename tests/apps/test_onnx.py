"""ONNX export and the onnxruntime backend: the same labels as torch, confidences within float rounding.

Tiny models are trained here (a BiLSTM-CRF with characters, capitalization, Brown prefix embeddings and
orthographic features; a windowed chunker reading POS tags, with a CRF and with a softmax decoded by
post-Viterbi), exported, and run by both backends on their test files and on hand-made inputs: batch 1 and
100, one-token and long sentences, unknown words and words longer than the character limit.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import torch

import seqlab
from seqlab.core.errors import SeqlabError
from tests.conftest import FIXTURES, forget_new_log_handlers

pytest.importorskip("onnxruntime", reason="the onnx extra (pip install 'seqlab[onnx]') is not installed")

from seqlab.cli import main  # noqa: E402
from seqlab.apps.onnx_export import export_onnx  # noqa: E402

NER, CHUNK = FIXTURES / "ner", FIXTURES / "chunk"
KINDS = {  # kind: (config, data folder, overrides, test file)
    "bilstm_crf": (NER / "tiny.yaml", NER, ["train.epochs=2", "train.threads=1",
                   "model.features=[{type: brown, path: brown_paths.txt, prefixes: [2, 4], dim: 3},"
                   " {type: orthographic}]"], NER / "dev.txt"),
    "window_crf": (CHUNK / "window.yaml", CHUNK, ["train.epochs=1", "model.decoder=crf"], CHUNK / "test.txt"),
    "window_softmax": (CHUNK / "window.yaml", CHUNK, ["train.epochs=1"], CHUNK / "test.txt"),
}
UNKNOWN = ["Xqzzyv", "Blorptown", "Qwxz-" + "k" * 50, "ÆØÅ", "1,234.5"]  # unseen words; one past 40 characters


@pytest.fixture(scope="module", params=sorted(KINDS))
def exported(request, tmp_path_factory):
    kind = request.param
    path, data, overrides, _ = KINDS[kind]
    root = tmp_path_factory.mktemp(kind)
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(data))
        seqlab.train(path, root / "run", overrides=tuple(overrides), progress=False)
        manifest = export_onnx(root / "run", root / "onnx")  # packages the run: its feature files come along
    return kind, root / "run", root / "onnx", manifest


def _sentences(kind: str) -> tuple[list[list[str]], dict[str, list[list[str]]] | None]:
    """Hand-made sentences of lengths 1 to 60 with unknown words (and POS tags for the chunkers)."""
    words = ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."] + UNKNOWN
    sentences = [[words[(i * 7 + j) % len(words)] for j in range(n)] for i, n in enumerate([1, 2, 5, 14, 60, 3, 1])]
    if not kind.startswith("window"):
        return sentences, None
    tags = ["NNP", "VBZ", "JJ", "NN", "TO", "VB", "JJ", "NN", "."]
    return sentences, {"pos": [[tags[j % len(tags)] for j in range(len(s))] for s in sentences]}


def _both(run: Path, out: Path, kind: str):
    torch_tagger, onnx_tagger = seqlab.load(run, "cpu"), seqlab.load(out, backend="onnx")
    if kind == "window_softmax":
        torch_tagger, onnx_tagger = torch_tagger.with_post_viterbi(), onnx_tagger.with_post_viterbi()
    return torch_tagger, onnx_tagger


def test_the_export_folder_holds_the_graphs_the_model_file_and_their_checksums(exported):
    kind, _, out, manifest = exported
    spells = kind == "bilstm_crf"  # the windowed chunkers read no characters
    assert sorted(p.name for p in out.iterdir()) == ["model.onnx", "model.seqlab", "onnx.json"] + (
        ["spelling.onnx"] if spells else [])
    assert json.loads((out / "onnx.json").read_text()) == manifest
    expected = {"bilstm_crf": ["words", "caps", "char_vectors", "features", "feature_ids", "lengths"],
                "window_crf": ["features", "lengths"], "window_softmax": ["features", "lengths"]}[kind]
    assert manifest["inputs"] == expected
    assert manifest["format_version"] == 2 and manifest["quantize"] is None
    assert sorted(manifest["sha256"]) == sorted(p.name for p in out.iterdir() if p.suffix != ".json")
    assert (manifest["spelling"] is not None) == spells


@pytest.mark.parametrize("batch_size", [1, 100])
def test_onnx_gives_torchs_labels_and_confidences(exported, batch_size, monkeypatch):
    kind, run, out, _ = exported
    monkeypatch.setenv("SEQLAB_DATA", str(KINDS[kind][1]))  # only the torch load of the run dir reads it
    torch_tagger, onnx_tagger = _both(run, out, kind)
    sentences, columns = _sentences(kind)
    mine = torch_tagger.tag_tokens(sentences, batch_size=batch_size, columns=columns)
    theirs = onnx_tagger.tag_tokens(sentences, batch_size=batch_size, columns=columns)
    assert [s.labels for s in theirs] == [s.labels for s in mine]
    for a, b in zip(mine, theirs):
        assert [(x.label, x.start, x.end) for x in b.spans] == [(x.label, x.start, x.end) for x in a.spans]
        assert [x.confidence for x in b.spans] == pytest.approx([x.confidence for x in a.spans], abs=1e-4)


def test_onnx_evaluates_a_file_exactly_as_torch(exported, tmp_path, monkeypatch):
    kind, run, out, _ = exported
    monkeypatch.setenv("SEQLAB_DATA", str(KINDS[kind][1]))
    torch_tagger, onnx_tagger = _both(run, out, kind)
    test_file = KINDS[kind][3]
    a = torch_tagger.evaluate(test_file, output=tmp_path / "torch.txt")
    b = onnx_tagger.evaluate(test_file, output=tmp_path / "onnx.txt")
    assert (tmp_path / "onnx.txt").read_text() == (tmp_path / "torch.txt").read_text()
    assert b.f1 == a.f1


def test_the_graph_has_dynamic_batch_and_length(exported):
    """Emissions of one sentence of one token, and of 7 sentences up to 60 tokens, match torch's plain forward."""
    from seqlab.tagging.predict import TorchEmissions

    kind, _, out, _ = exported
    onnx_tagger = seqlab.load(out, backend="onnx")
    torch_tagger = seqlab.load(out / "model.seqlab", "cpu")  # the same model file, torch backend
    sentences, columns = _sentences(kind)
    for part in (sentences[:1], sentences):
        data = torch_tagger._encode(part, None if columns is None else {c: v[:len(part)] for c, v in columns.items()})
        indices = torch.arange(len(part))
        mask = torch.arange(int(data.lengths.max())).unsqueeze(0) < data.lengths.unsqueeze(1)
        with torch.inference_mode():
            expected = TorchEmissions(torch_tagger.model, tables=False).scorer(data)(indices, mask)
            got = onnx_tagger.predictor.backend.scorer(data)(indices, mask)
        assert got.shape == expected.shape
        assert torch.allclose(got[mask], expected[mask], atol=1e-4)
        decoder = onnx_tagger.predictor.backend.decoder  # the confidences: every token's label marginals
        assert torch.allclose(decoder.marginals(got, mask), torch_tagger.model.decoder.marginals(expected, mask),
                              atol=1e-4)


def test_the_export_folder_loads_with_torch_too(exported):
    kind, _, out, _ = exported
    tagger = seqlab.load(out, "cpu")
    assert tagger.backend == "torch" and tagger.model is not None
    assert seqlab.load(out, backend="onnx").backend == "onnx"


@pytest.mark.parametrize("exported", ["bilstm_crf"], indirect=True)  # raw text: a model reading no POS column
def test_cli_export_and_tag_with_the_onnx_backend(exported, tmp_path, capsys, monkeypatch):
    kind, run, _, _ = exported
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    out = tmp_path / "exported"
    assert main(["export", str(run), "--format", "onnx", "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["inputs"][0] == "words"
    text = tmp_path / "in.txt"
    text.write_text("EU rejects German call to boycott British lamb.\nPeter Blackburn went to Xqzzyv.\n")
    outputs = []
    for backend in ("torch", "onnx"):
        assert main(["tag", str(out), str(text), "--format", "jsonl", "--backend", backend]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and outputs[0].count("\n") >= 2


@pytest.mark.parametrize("exported", ["bilstm_crf"], indirect=True)
@pytest.mark.parametrize("case, message", [
    ("run_dir", r"no ONNX graph here; write one with `seqlab export"),
    ("altered", r"model.onnx: fails its sha256 check"),
    ("backend", r"backend: expected one of \['torch', 'onnx'\], got 'tensorrt'"),
    ("device", r"the onnx backend runs on the CPU"),
    ("missing", r"pip install 'seqlab\[onnx\]'"),
    ("deep", r"onnx\.json: JSON nested deeper than 64 levels; refused"),
    ("swapped", r"model.onnx: graph inputs \[chars \(rank 2\), char_lengths \(rank 1\)\], but onnx.json and seqlab "
                r"expect \[words \(rank 2\), .*\] \(files swapped or replaced"),
    ("random", r"model.onnx: not an ONNX model \(\w+\); export the model again"),
])
def test_bad_onnx_loads_fail_with_one_clear_line(exported, tmp_path, monkeypatch, case, message):
    import shutil

    kind, run, out, _ = exported
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    if case == "altered":
        data = bytearray((copy / "model.onnx").read_bytes())
        data[len(data) // 2] ^= 0xFF
        (copy / "model.onnx").write_bytes(bytes(data))
    if case == "missing":
        monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` raises ImportError
    if case == "deep":
        (copy / "onnx.json").write_text("[" * 100_000 + "]" * 100_000)  # json.loads alone: RecursionError
    if case in ("swapped", "random"):  # checksums recomputed: only the graphs' own shapes tell
        from probes.tamper import tamper_export

        tamper_export(copy, case)
    target = run if case == "run_dir" else copy
    with pytest.raises(SeqlabError, match=message):
        seqlab.load(target, "cuda" if case == "device" else "auto",
                    backend="tensorrt" if case == "backend" else "onnx")


@pytest.mark.parametrize("exported", ["bilstm_crf"], indirect=True)  # raw text: a model reading no POS column
def test_serve_with_the_onnx_backend_answers_as_with_torch(exported, monkeypatch):
    import threading
    import urllib.request

    from seqlab.cli import parser
    from seqlab.serve import make_server

    kind, _, out, _ = exported
    args = parser().parse_args(["serve", str(out), "--backend", "onnx", "--port", "0"])
    assert args.backend == "onnx"
    answers = []
    for model in (seqlab.load(out, "cpu"), seqlab.load(out, backend=args.backend)):
        server = make_server(model, "test", port=0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        body = json.dumps({"texts": ["EU rejects German call.", "Peter Blackburn met Xqzzyv in Blorptown."]})
        request = urllib.request.Request(f"http://127.0.0.1:{server.server_address[1]}/tag", data=body.encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                answers.append(json.loads(answer.read()))
        finally:
            server.shutdown()
    assert answers[0] == answers[1]


@pytest.mark.parametrize("case, message", [
    ("out_is_file", r"--out .*: a file, not a folder"),
    ("no_model", r"no such run directory or model file"),
    ("relation", r"ONNX export covers taggers .*; this is a relation model"),
])
def test_bad_exports_fail_with_one_clear_line(tmp_path, capsys, case, message):
    (tmp_path / "file.txt").write_text("x")
    relation = tmp_path / "relation"
    relation.mkdir()
    (relation / "config.yaml").write_text("task: relation\n")
    model = {"out_is_file": "en-ner-conll03", "no_model": str(tmp_path / "missing"), "relation": str(relation)}[case]
    out = tmp_path / ("file.txt" if case == "out_is_file" else "out")
    assert main(["export", model, "--format", "onnx", "--out", str(out)]) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("exported", ["bilstm_crf"], indirect=True)
def test_an_export_of_the_older_format_is_refused_with_the_command_that_exports_it_again(exported, tmp_path, capsys):
    """Format 1 (the character BiLSTM inside the emissions graph): one line naming the command, which works."""
    import shutil

    kind, run, out, _ = exported
    old = tmp_path / "old"
    shutil.copytree(out, old)
    manifest = json.loads((old / "onnx.json").read_text())
    (old / "onnx.json").write_text(json.dumps({**manifest, "format_version": 1, "spelling": None}))
    (old / "spelling.onnx").unlink()
    with pytest.raises(SeqlabError) as caught:
        seqlab.load(old, backend="onnx")
    message = str(caught.value)
    assert "\n" not in message and "export format version 1, written by an older seqlab" in message
    command = message.split(": seqlab ", 1)[1].split()
    assert command == ["export", str(old), "--format", "onnx", "--out", str(old)]
    assert main(command) == 0
    capsys.readouterr()
    sentences, _ = _sentences(kind)
    again = seqlab.load(old, backend="onnx").tag_tokens(sentences)
    assert [s.labels for s in again] == [s.labels for s in seqlab.load(out, "cpu").tag_tokens(sentences)]


@pytest.mark.parametrize("exported", ["bilstm_crf"], indirect=True)
def test_spelling_runs_once_per_word_type_on_rows_of_one_length(exported):
    """The spelling graph sees every word type once over two calls, each run on words of one length (no padding)."""
    kind, _, out, _ = exported
    tagger = seqlab.load(out, backend="onnx")
    speller = tagger.predictor.backend.speller
    seen: list[tuple[int, list[int]]] = []

    class Spy:
        def __init__(self, runtime) -> None:
            self.runtime = runtime

        def run(self, names, feed):
            seen.append((feed["chars"].shape[1], feed["char_lengths"].tolist()))
            return self.runtime.run(names, feed)

    speller.runtime = Spy(speller.runtime)
    sentences, _ = _sentences(kind)
    first = tagger.tag_tokens(sentences, batch_size=2)
    types = {word for sentence in sentences for word in sentence}
    assert sum(len(lengths) for _, lengths in seen) == len(types) + 1  # and the padding type
    assert all(set(lengths) == {width} for width, lengths in seen)
    assert len(seen) == len({min(len(w), 40) for w in types} | {1})  # one run per word length
    seen.clear()
    assert [s.labels for s in tagger.tag_tokens(sentences[::-1], batch_size=3)] == [s.labels for s in first[::-1]]
    assert seen == []  # every word's vector was kept from the first call


@pytest.mark.parametrize("exported", ["bilstm_crf"], indirect=True)
def test_an_int8_export_is_smaller_and_labels_nearly_as_torch(exported, tmp_path, monkeypatch):
    kind, run, out, _ = exported
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    manifest = export_onnx(run, tmp_path / "int8", quantize="int8")
    assert manifest["quantize"] == "int8"
    for name in ("model.onnx", "spelling.onnx"):
        assert (tmp_path / "int8" / name).stat().st_size < (out / name).stat().st_size
    a = seqlab.load(run, "cpu").evaluate(KINDS[kind][3], output=tmp_path / "torch.txt")
    b = seqlab.load(tmp_path / "int8", backend="onnx").evaluate(KINDS[kind][3], output=tmp_path / "int8.txt")
    mine, theirs = ((tmp_path / f"{n}.txt").read_text().split("\n") for n in ("torch", "int8"))
    agree = sum(x == y for x, y in zip(mine, theirs)) / len(mine)
    assert agree >= 0.95 and abs(b.f1 - a.f1) <= 5.0


def test_a_bad_quantization_is_refused_in_one_line(tmp_path):
    with pytest.raises(SeqlabError, match=r"--quantize: expected one of \['int8'\], got 'int4'"):
        export_onnx("en-ner-conll03", tmp_path / "out", quantize="int4")
    assert not (tmp_path / "out").exists()


def test_sessions_run_on_the_threads_asked_for_without_spinning():
    from seqlab.apps.onnx_runtime import open_runtime

    data = _stacked_bilstm_graph(layers=1)[0]
    options = open_runtime(data, threads=1).get_session_options()
    assert options.intra_op_num_threads == 1 and options.inter_op_num_threads == 1
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def _stacked_bilstm_graph(layers: int):
    """A BiLSTM of ``layers`` layers (inputs 7, hidden 5) traced as the export traces one, and the BiLSTM."""
    import io
    import warnings

    from seqlab.apps.onnx_export import for_export
    from seqlab.modules.rnn import BiLSTM

    class Both(torch.nn.Module):
        def __init__(self, lstm: torch.nn.Module) -> None:
            super().__init__()
            self.lstm = lstm

        def forward(self, x: torch.Tensor, lengths: torch.Tensor):
            return self.lstm(x, lengths)

    torch.manual_seed(0)
    module = Both(BiLSTM(7, 5, layers=layers)).eval()
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(for_export(module), (torch.randn(3, 4, 7), torch.tensor([4, 2, 3])), buffer,
                          dynamo=False, opset_version=17, input_names=["x", "lengths"], output_names=["out", "final"],
                          dynamic_axes={"x": {0: "b", 1: "t"}, "lengths": {0: "b"}, "out": {0: "b", 1: "t"},
                                        "final": {0: "b"}})
    return buffer.getvalue(), module


@pytest.mark.parametrize("layers", [1, 2])
def test_a_bilstm_exports_as_one_lstm_op_a_layer_with_sequence_lengths(layers):
    """Outputs at real positions and final states match torch's for ragged lengths (reverse read within length)."""
    import onnx

    from seqlab.apps.onnx_runtime import open_runtime

    data, module = _stacked_bilstm_graph(layers)
    assert [n.op_type for n in onnx.load_from_string(data).graph.node].count("LSTM") == layers
    assert "GatherElements" not in {n.op_type for n in onnx.load_from_string(data).graph.node}
    x, lengths = torch.randn(5, 9, 7), torch.tensor([9, 1, 4, 7, 2])
    out, final = open_runtime(data, threads=1).run(None, {"x": x.numpy(), "lengths": lengths.numpy()})
    with torch.inference_mode():
        expected_out, expected_final = module(x, lengths)
    mask = (torch.arange(9).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(-1)
    assert torch.allclose(torch.from_numpy(out) * mask, expected_out * mask, atol=1e-5)
    assert torch.allclose(torch.from_numpy(final), expected_final, atol=1e-5)
