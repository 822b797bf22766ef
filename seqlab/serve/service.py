"""What ``seqlab serve``'s HTTP layer calls: the loaded model behind its micro-batcher, with the request limits;
it parses and checks a request's fields and answers with the JSON of :mod:`seqlab.core.schema`."""
from __future__ import annotations

import asyncio
from typing import Any

from features.tokenize import count_tokens
from seqlab.core.errors import SeqlabError
from seqlab.core.loaded import LoadedModel
from seqlab.serve.batcher import MicroBatcher
from seqlab.tagging.inputs import check_text

MAX_BYTES = 1_000_000
MAX_TOKENS = 20_000

#: A model's POST endpoint, by its task (:attr:`LoadedModel.task`).
PATHS = {"tagging": "/tag", "relation": "/classify", "extraction": "/tag"}
#: The request fields, each with the input kind it carries (:attr:`LoadedModel.inputs`): ``text`` one raw text,
#: ``texts`` several, ``tokens`` pre-tokenised sentences, ``sentences`` sentences with marked nominals.
FIELDS = {"text": "texts", "texts": "texts", "tokens": "tokens", "sentences": "sentences"}
#: The answer's key for each input kind's results.
ANSWERS = {"texts": "documents", "tokens": "sentences", "sentences": "relations"}
#: Options of ``predict`` for an input kind: a bad marked sentence's error names the request's field.
OPTIONS: dict[str, dict[str, Any]] = {"sentences": {"source": "sentences"}}


class BadRequest(Exception):
    """A request the service refuses, with the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _text(value: Any, field: str) -> str:
    """A request's string, checked alone before it is batched with others': valid Unicode (no lone surrogate)."""
    if not isinstance(value, str):
        raise BadRequest(422, f"{field}: expected a string, got {type(value).__name__}")
    try:
        return check_text(value, field)
    except SeqlabError as err:
        raise BadRequest(422, str(err)) from None


def _strings(value: Any, field: str) -> list[str]:
    if not isinstance(value, list):
        raise BadRequest(422, f"{field}: expected a list of strings, got {type(value).__name__}")
    return [_text(item, f"{field}[{i}]") for i, item in enumerate(value)]


def cheap_tokens(texts: list[str], limit: int) -> int | None:
    """A number of tokens for ``texts`` that shows whether the tokenizer's count exceeds ``limit`` without
    tokenizing: their whitespace-separated words when those exceed it already (each is a token or more), or
    when their characters do not (no token is shorter than a character); None when only counting can tell."""
    words = sum(len(text.split()) for text in texts)
    return words if words > limit or sum(map(len, texts)) <= limit else None


def raw_tokens(texts: list[str]) -> int:
    """How many tokens the tokenizer makes of ``texts`` (:func:`features.tokenize.count_tokens`, linear)."""
    return sum(count_tokens(text) for text in texts)


class ModelService:
    """What the HTTP layer calls: a loaded model of any task (:class:`~seqlab.core.loaded.LoadedModel`), its name
    and manifest, the request limits and the micro-batcher that runs the model."""

    def __init__(self, model: LoadedModel, name: str, *, manifest: dict[str, Any] | None = None,
                 max_bytes: int = MAX_BYTES, max_tokens: int = MAX_TOKENS, batch_wait: float = 0.005,
                 max_batch: int = 256) -> None:
        self.model, self.name, self.manifest = model, name, manifest
        self.max_bytes, self.max_tokens = max_bytes, max_tokens
        self.task, self.path = model.task, PATHS[model.task]
        self.fields = [field for field, kind in FIELDS.items() if kind in model.inputs]
        self.batcher = MicroBatcher(self._run, wait=batch_wait, max_items=max_batch)

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "model": self.name, "task": self.task}

    def describe(self) -> dict[str, Any]:
        """``GET /model``: the task, its labels, the model's resolved config and its manifest (a ``.seqlab`` file)."""
        metadata = self.model.metadata()
        return {"model": self.name, "task": metadata["task"], "labels": metadata["labels"],
                "config": metadata["config"], "manifest": self.manifest}

    def _run(self, kind: str, items: list[Any]) -> list[Any]:
        """In the batcher's thread: the model on a batch of one input kind, as JSON-ready data."""
        results = self.model.predict(items, kind=kind, batch_size=max(64, len(items)), **OPTIONS.get(kind, {}))
        return [self.model.encode(result) for result in results]

    async def answer(self, path: str, body: Any) -> dict[str, Any]:
        """Answer a POST to ``path`` with the parsed JSON ``body``."""
        if path != self.path:
            raise BadRequest(404, f"this service answers POST {self.path} (a {self.task} model)")
        if not isinstance(body, dict):
            raise BadRequest(422, f"the body: expected a JSON object, got {type(body).__name__}")
        field, kind, items, tokens = self._parse(body)
        if tokens is None:  # over max_tokens characters: count the tokens in a thread, not on the event loop
            tokens = await asyncio.get_running_loop().run_in_executor(None, raw_tokens, items)
        if tokens > self.max_tokens:
            raise BadRequest(422, f"{field}: {tokens} tokens in this request; at most {self.max_tokens}")
        try:
            results = await self.batcher.submit(kind, items) if items else []
        except SeqlabError as err:
            raise BadRequest(422, str(err)) from None
        return {ANSWERS[kind]: results}

    def _parse(self, body: dict[str, Any]) -> tuple[str, str, list[Any], int | None]:
        """The request's field, kind, items (each string checked alone) and token count (raw text: the tokens
        the tokenizer makes, or a cheaper bound, :func:`cheap_tokens`; None: count them)."""
        expected = [f'"{field}"' for field in self.fields]
        given = [key for key in body if f'"{key}"' in expected]
        unknown = [key for key in body if f'"{key}"' not in expected]
        if unknown or len(given) != 1:
            what = f"unknown field {unknown[0]!r}" if unknown else f"{len(given)} of them"
            raise BadRequest(422, f"expected one of the fields {', '.join(expected)}; got {what}")
        key = given[0]
        if key == "text":
            items = [_text(body[key], key)]
            return key, FIELDS[key], items, cheap_tokens(items, self.max_tokens)
        if key == "tokens":
            value = body[key]
            if isinstance(value, list) and value and all(isinstance(token, str) for token in value):
                value = [value]  # one sentence given as its tokens
            if not isinstance(value, list):
                raise BadRequest(422, f"tokens: expected a list of sentences (lists of strings), got "
                                      f"{type(value).__name__}")
            for i, sentence in enumerate(value):
                _strings(sentence, f"tokens[{i}]")
                if not sentence:
                    raise BadRequest(422, f"tokens[{i}]: an empty sentence")
            return key, FIELDS[key], value, sum(len(s) for s in value)
        items = _strings(body[key], key)
        return key, FIELDS[key], items, cheap_tokens(items, self.max_tokens)
