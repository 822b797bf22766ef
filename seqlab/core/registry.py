"""Named parts: one plain table per kind (encoders, decoders, optimizers, token features, tasks).

A name is written once, where its builder is registered; config validation and model building both
read the same table, so a config can never accept a name that the builder does not know. Unlike
AllenNLP's ``Registrable`` or catalogue's entry points, nothing registers itself as a side effect of
an import somewhere else: each table is filled in the module that defines it, next to its builders.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Generic, Iterator, TypeVar

from seqlab.core.strict import choice

T = TypeVar("T")


class Registry(Generic[T]):
    """A table of ``name -> part`` for one kind of part (``kind`` names it in error messages)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._table: dict[str, T] = {}

    def add(self, name: str, part: T) -> T:
        """Register ``part`` under ``name``; a name is registered once."""
        if name in self._table:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._table[name] = part
        return part

    def register(self, name: str):  # type: ignore[no-untyped-def]
        """Decorator form of :meth:`add`."""
        def wrap(part: T) -> T:
            return self.add(name, part)
        return wrap

    @contextmanager
    def added(self, name: str, part: T) -> Iterator[T]:
        """``part`` registered as ``name`` while inside, and gone again after (a test's own part)."""
        self.add(name, part)
        try:
            yield part
        finally:
            del self._table[name]

    def check(self, key: str, name: str) -> None:
        """Refuse a name that is not registered, naming the config ``key`` and the nearest valid name."""
        choice(key, name, self.names())

    def get(self, name: str, key: str | None = None) -> T:
        """The part registered as ``name`` (a config error naming ``key`` when there is none)."""
        self.check(key or self.kind, name)
        return self._table[name]

    def names(self) -> tuple[str, ...]:
        return tuple(self._table)

    def __contains__(self, name: object) -> bool:
        return name in self._table

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)
