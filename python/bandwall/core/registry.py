"""Registries of named things the front end finds at start: subcommands (`commands` below, filled by
the modules of bandwall.commands) and report sections (bandwall.report.registry, filled by the
modules of bandwall.report.sections). Adding one is a module and one decorator.

Kernels and placement and binding policies are not registered here: their tables live in the native
executables, which print them (bandwall-stream --list-kernels), so both sides read one table.
A name registered twice is refused, as reframe refuses duplicate backends.
"""

from __future__ import annotations

from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(item: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = item
            return item

        return deco

    def add(self, name: str, item: T) -> T:
        return self.register(name)(item)

    def get(self, name: str) -> T:
        return self._items[name]

    def names(self) -> list[str]:
        return list(self._items)

    def items(self) -> list[tuple[str, T]]:
        return list(self._items.items())

    def __contains__(self, name: str) -> bool:
        return name in self._items


# Subcommands of `bandwall` (click commands), filled by the modules of bandwall.commands.
commands: Registry = Registry("command")
