"""``--theme`` takes every theme the console's palette offers (Jarvis's three and Textual's),
not only Jarvis's three; an unknown one is still a usage error that lists them."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App

from jarvis_cli.inputs import UsageError
from jarvis_cli.tui import check_theme
from jarvis_tui.theme import register_themes


def palette_themes() -> list[str]:
    """What the palette's theme command offers: the app's available themes."""
    app: App[Any] = App()
    register_themes(app)
    return sorted(app.available_themes)


def test_every_theme_the_palette_offers_is_accepted() -> None:
    offered = palette_themes()
    assert len(offered) > 3 and "nord" in offered and "jarvis-dark" in offered
    for name in offered:
        check_theme(name)


def test_an_unknown_theme_lists_every_one_offered() -> None:
    with pytest.raises(UsageError) as caught:
        check_theme("neon")
    assert caught.value.code == "unknown_theme"
    message = str(caught.value)
    assert all(name in message for name in palette_themes())
