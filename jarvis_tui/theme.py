"""The console's palettes: Textual `Theme` objects, registered by the app at start-up.

Stylesheets in ``themes/`` use only variables; these objects give the variables their values.
Our role variables (``needs-human``, ``muted-text``) are set by our themes and, for any other
theme (the palette lists Textual's own too), derived from its colours by `role_defaults`.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.theme import Theme

JARVIS_DARK = Theme(
    name="jarvis-dark",
    primary="#4EA8DE",
    secondary="#7E6BC4",
    accent="#F2A65A",
    warning="#E9C46A",
    error="#E5575B",
    success="#5BBF7A",
    foreground="#E0E4EA",
    background="#11151C",
    surface="#1A2029",
    panel="#232B36",
    dark=True,
    variables={"needs-human": "#E9C46A", "muted-text": "#8A94A3"},
)

JARVIS_LIGHT = Theme(
    name="jarvis-light",
    primary="#1F6FB2",
    secondary="#5B4BA0",
    accent="#B85C00",
    warning="#8A6100",
    error="#B3261E",
    success="#1E7B3A",
    foreground="#1B1F24",
    background="#F6F7F9",
    surface="#FFFFFF",
    panel="#E6E9EE",
    dark=False,
    variables={"needs-human": "#8A6100", "muted-text": "#5A6472"},
)

JARVIS_HIGH_CONTRAST = Theme(
    name="jarvis-high-contrast",
    primary="#FFFF00",
    secondary="#00FFFF",
    accent="#FF00FF",
    warning="#FFFF00",
    error="#FF4040",
    success="#00FF00",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#1A1A1A",
    dark=True,
    variables={"needs-human": "#FFFF00", "muted-text": "#FFFFFF"},
)

THEMES: dict[str, Theme] = {
    theme.name: theme for theme in (JARVIS_DARK, JARVIS_LIGHT, JARVIS_HIGH_CONTRAST)
}
"""Every theme the console offers, by name."""

DEFAULT_THEME = JARVIS_DARK.name


def theme_names() -> list[str]:
    """Every theme the console offers (its palette lists them): Jarvis's, then Textual's."""
    from textual.theme import BUILTIN_THEMES

    return [*THEMES, *sorted(name for name in BUILTIN_THEMES if name not in THEMES)]


def role_defaults(theme: Theme) -> dict[str, str]:
    """Our role variables for ``theme``, from its own colours: its muted foreground and its
    warning. Without them a theme that does not set them (every Textual theme) cannot resolve
    ``themes/base.tcss``, and switching to it would stop the console."""
    colors = theme.to_color_system().generate()
    return {"muted-text": colors["foreground-muted"], "needs-human": colors["warning"]}


def register_themes(app: App[Any]) -> None:
    """Register every Jarvis theme with ``app`` (selecting one is the caller's business)."""
    for theme in THEMES.values():
        app.register_theme(theme)
