from pathlib import Path

import pytest

from seqlab.core.strict import dump_config
from seqlab.tagging.config import Config, load_config
from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.core.paths import resolve_data_path

CONFIGS = sorted(p for p in (Path(__file__).parents[2] / "configs").glob("*.yaml")
                 if "\ntask: relation" not in "\n" + p.read_text()  # relation configs: tests/relation/test_config.py
                 and "\ntask: extraction" not in "\n" + p.read_text())  # tests/extraction/test_config.py

MINIMAL = """
data:
  train: a.txt
  dev: b.txt
model:
  hidden: 64
"""


def write(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_configs_load(path):
    assert isinstance(load_config(path), Config)


def test_defaults_and_frozen(tmp_path):
    cfg = load_config(write(tmp_path, MINIMAL))
    assert cfg.model.hidden == 64 and cfg.train.lr == 0.009 and cfg.data.tag_scheme == "bilou"
    with pytest.raises(Exception):
        cfg.model.hidden = 3  # type: ignore[misc]


def test_overrides(tmp_path):
    cfg = load_config(write(tmp_path, MINIMAL), ["model.hidden=256", "train.seed=3", "model.chars=null",
                                                  "model.embeddings.dim=100", "train.lr=1e-3"])
    assert (cfg.model.hidden, cfg.train.seed, cfg.model.chars, cfg.model.embeddings.dim) == (256, 3, None, 100)
    assert cfg.train.lr == pytest.approx(0.001)


def test_resolved_config_round_trips(tmp_path):
    cfg = load_config(write(tmp_path, MINIMAL), ["train.seed=5"])
    again = load_config(write(tmp_path, dump_config(cfg)))
    assert again == cfg


@pytest.mark.parametrize(
    "text,overrides,message",
    [
        (MINIMAL + "  hiden: 3\n", [], r"model.hiden: unknown key; did you mean 'hidden'\?"),
        (MINIMAL, ["model.hiden=3"], r"--set model.hiden: unknown key; did you mean 'hidden'\?"),
        (MINIMAL, ["train.batch_size=ten"], r"train.batch_size: expected int, got str 'ten'"),
        (MINIMAL, ["model.hidden=2147483648"], r"model.hidden: expected a size from 1 to 65536"),
        (MINIMAL, ["model.capitalization.dim=-3"], r"model.capitalization.dim: expected a size from 1 to"),
        (MINIMAL, ["model.chars.hidden=0"], r"model.chars.hidden: expected a size from 1 to"),
        (MINIMAL, ["model.layers=1000"], r"model.layers: expected a number of layers from 1 to 64"),
        (MINIMAL, ["data.dev_seed=-1"], r"data.dev_seed: expected a seed from 0 to"),
        (MINIMAL, ["train.batch_size=true"], r"train.batch_size: expected int, got bool"),
        (MINIMAL, ["model.decoder=crff"], r"model.decoder: expected one of \['crf', 'softmax', 'softmax_viterbi'\], got 'crff'; did you mean 'crf'\?"),
        (MINIMAL, ["data.tag_scheme=bioes2"], r"data.tag_scheme: expected one of"),
        (MINIMAL, ["model.hidden"], r"expected KEY=VALUE"),
        (MINIMAL, ["train.lr.x=1"], r"'lr' is not a section"),
        ("data:\n  train: a.txt\n", [], r"data: give a dev file \(data.dev\) or a number of training sentences to hold out"),
        ("data: [1]\n", [], r"data: expected a mapping"),
        (MINIMAL + "trian: {}\n", [], r"trian: unknown key; did you mean 'train'\?"),
        (MINIMAL, ["data.columns=word"], r"data.columns: expected a list"),
        (MINIMAL, ["data.tag_column=label"], r"data.tag_column: 'label' is not one of data.columns"),
        (MINIMAL, ["model.output_dropout=-0.1"], r"model.output_dropout: expected a value in \[0, 1\) or null, got -0.1"),
        (MINIMAL, ["model.layer_dropout=1.0"], r"model.layer_dropout: expected a value in \[0, 1\), got 1.0"),
        (MINIMAL, ["train.clip=-1"], r"train.clip: expected a maximum gradient norm >= 0 \(0 turns clipping off\)"),
        (MINIMAL, ["data.limit=-5"], r"data.limit: expected a number of sentences >= 0"),
    ],
)
def test_errors_name_the_key(tmp_path, text, overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text), overrides)


def test_missing_data_file_says_how_to_set_seqlab_data(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path))
    with pytest.raises(SeqlabError, match=r"data.train: file .*nope.txt' does not exist .*SEQLAB_DATA"):
        resolve_data_path("nope.txt", key="data.train")
    (tmp_path / "yes.txt").write_text("x")
    assert resolve_data_path("yes.txt", key="data.train") == tmp_path / "yes.txt"


def test_dot_paths_are_relative_to_the_working_directory(tmp_path, monkeypatch):
    data, work = tmp_path / "data", tmp_path / "work"
    (data / "runs").mkdir(parents=True)
    (work / "runs").mkdir(parents=True)
    (data / "runs" / "cw.txt").write_text("data")
    (work / "runs" / "cw.txt").write_text("work")
    monkeypatch.setenv("SEQLAB_DATA", str(data))
    monkeypatch.chdir(work)
    assert resolve_data_path("./runs/cw.txt", key="model.features[0].path").read_text() == "work"
    assert resolve_data_path("runs/cw.txt", key="model.features[0].path").read_text() == "data"
    with pytest.raises(SeqlabError, match=r"model.features\[0\].path: file './runs/no.txt' does not exist .*working"):
        resolve_data_path("./runs/no.txt", key="model.features[0].path")


WINDOW = Path(__file__).parents[2] / "configs" / "conll00_itwwo_q4.yaml"


def test_set_reaches_an_item_of_a_list_by_index():
    config = load_config(WINDOW, ["model.features.0.scale=0.5", "model.features.-1.min_count=3"])
    assert config.model.features[0].scale == 0.5 and config.model.features[3].min_count == 3
    assert config.model.features[1:3] == load_config(WINDOW).model.features[1:3]  # the others untouched
    assert [f.type for f in load_config(WINDOW, ["model.features=[{type: pos}]"]).model.features] == ["pos"]


@pytest.mark.parametrize("override, message", [
    ("model.features.4.scale=1", r"--set model.features.4: the config's model.features has 4 item\(s\)"),
    ("model.features.scale=1", r"--set model.features: a list; name an item by its index \(0 to 3\), "
                               r"e.g. model.features.0.scale=\.\.\."),
    ("model.features.0=1", r"name a key of item 0, e.g. model.features.0.path=\.\.\.; to replace the whole list"),
    ("model.features.0.scal=1", r"--set model.features.0.scal: unknown key; did you mean 'scale'\?"),
])
def test_set_on_a_list_explains_what_it_expected(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(WINDOW, [override])


#: The configs rewritten as a base plus what differs, and the commit whose flat files they must resolve like.
EXTENDED = ("ncbi_disease.yaml", "ud_el_gdt_upos.yaml", "conll02_es.yaml")
FLAT_AT = "a906f6c"


@pytest.mark.parametrize("name", EXTENDED)
def test_extended_configs_resolve_as_their_flat_files_did(name, tmp_path):
    import subprocess

    root = Path(__file__).parents[2]
    flat = subprocess.run(["git", "-C", str(root), "show", f"{FLAT_AT}:configs/{name}"], capture_output=True,
                          text=True, check=False)
    if flat.returncode != 0:
        pytest.skip(f"the flat {name} of commit {FLAT_AT} is not in this checkout's git history")
    (tmp_path / name).write_text(flat.stdout, encoding="utf-8")
    assert "base:" in (root / "configs" / name).read_text(encoding="utf-8")
    assert load_config(root / "configs" / name) == load_config(tmp_path / name)
    assert "base" not in dump_config(load_config(root / "configs" / name))
