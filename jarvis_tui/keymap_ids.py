"""Every binding id of the console and every theme it offers: what a personal keymap and theme
may name (`jarvis_tui.personal.unknown_names`), found by walking the console's own classes.

Imports every module of the console, so it is asked only when a personal file names a keymap
(after the first paint) or by ``jarvis config check``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

from textual.binding import Binding
from textual.dom import DOMNode
from textual.theme import BUILTIN_THEMES

import jarvis_tui
from jarvis_tui.theme import THEMES


def console_classes() -> Iterator[type[DOMNode]]:
    """Every class of the console (the app, its screens and widgets) that declares bindings."""
    for module in pkgutil.walk_packages(jarvis_tui.__path__, "jarvis_tui."):
        importlib.import_module(module.name)
    seen: set[type[DOMNode]] = set()
    todo: list[type[DOMNode]] = [DOMNode]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    for cls in sorted(seen, key=lambda c: (c.__module__, c.__qualname__)):
        if cls.__module__.startswith("jarvis_tui.") and "BINDINGS" in vars(cls):
            yield cls


def console_bindings() -> Iterator[tuple[type[DOMNode], Binding]]:
    """Each binding the console declares, with the class declaring it."""
    for cls in console_classes():
        for binding in cls.BINDINGS:
            assert isinstance(binding, Binding), f"{cls.__qualname__}: {binding!r}"
            yield cls, binding


def binding_ids() -> set[str]:
    return {binding.id for _, binding in console_bindings() if binding.id}


def theme_names() -> list[str]:
    """Every theme the console offers: its own, then Textual's."""
    return [*THEMES, *(name for name in BUILTIN_THEMES if name not in THEMES)]
