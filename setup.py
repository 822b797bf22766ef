"""seqlab: sequence labelling (NER, chunking, relations) and reusable word representations."""
from setuptools import find_packages, setup

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
    ],
    extras_require={
        # ray[data]: tests/tagging/test_ray.py tags on a local Ray instance (about 45 s; installing Ray adds about
        # a minute), so the optional Ray integration is tested by the default suite.
        "test": ["pytest>=7.4", "hypothesis>=6.90", "ray[data]>=2.40"],
        # ray[data]: seqlab.tagging.ray maps a tagger over a Ray Dataset with an actor pool (bulk tagging on a
        # cluster); the engine users already run, not a home-made one.
        "ray": ["ray[data]>=2.40"],
        "bench": ["pytorch-crf>=0.7.2", "psutil>=5.9"],
        # python-crfsuite: the linear-chain CRF of examples/crfsuite_chunker.py (Turian et al. 2010 Table 2),
        # a maintained binding of CRFsuite; seqlab itself does not need it.
        "examples": ["python-crfsuite>=0.9.9"],
        # matplotlib: the PNG plot that `seqlab sweep` writes next to its table (e.g. Turian et al. 2009
        # Figure 2); only plotting needs it, so it is optional and the sweep says how to install it.
        "plots": ["matplotlib>=3.7"],
    },
    entry_points={"console_scripts": ["seqlab=seqlab.cli:main"]},
)
