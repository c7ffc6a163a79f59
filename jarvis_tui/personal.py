"""The operator's own configuration: ``$XDG_CONFIG_HOME/jarvis/config.toml`` (where
`platformdirs` puts a user's configuration on this system), beside the workspace's
``jarvis.toml`` and never in it: what one person prefers, on any workspace they watch.

    theme = "nord"                      # remembered when changed in the palette
    [keymap]                            # a binding id = its keys (Textual's keymap)
    "run.retry" = "ctrl+r"
    "view.fleet" = "f2,F"
    [notify]                            # the console's notification channels
    bell = true
    desktop = "osc777"                  # off | osc777 | osc9
    mute_minutes = 30

Read with every problem said in one sentence, never a traceback (checked by hand, not by
pydantic: the console reads the file before its first paint, which pydantic would delay): a
file that cannot be used leaves the console on its defaults, saying why (`Personal.problem`);
``jarvis config check`` prints the same. Loads no Textual: the command line checks the file
with it, and the console checks the theme and the binding ids it names against its own
(`unknown_names`).
"""

from __future__ import annotations

import os
import re
import secrets
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

CONFIG_FILE = "config.toml"
APP_NAME = "jarvis"
#: The biggest personal file read: a few lines are expected, a megabyte is a mistake.
MAX_BYTES = 256 * 1024
_BINDING_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: A key as Textual names it (``f2``, ``ctrl+r``, ``R``, ``question_mark``), comma-separated.
_KEYS = re.compile(r"[A-Za-z0-9_+-]{1,32}(,[A-Za-z0-9_+-]{1,32})*")
_TOP_KEYS = ("theme", "keymap", "notify")
_NOTIFY_KEYS = ("bell", "desktop", "mute_minutes")


def config_path() -> Path:
    """Where this operator's file is: ``$XDG_CONFIG_HOME/jarvis/config.toml`` (by default
    ``~/.config/jarvis/config.toml`` on Linux), as `platformdirs` finds it."""
    from platformdirs import user_config_path

    return user_config_path(APP_NAME, appauthor=False) / CONFIG_FILE


@dataclass(frozen=True)
class NotifySettings:
    """``[notify]``: how the console tells the operator a run needs them (each optional)."""

    bell: bool | None = None
    """The terminal's bell; None: as the workspace's ``[notify]`` says (on by default)."""
    desktop: Literal["off", "osc777", "osc9"] | None = None
    """A desktop notification by terminal escape (passed through over SSH by most terminals);
    None: as the workspace's ``[notify]`` says (``osc777`` by default)."""
    mute_minutes: int = 60
    """How long the mute key silences them (1 to 1440)."""


@dataclass(frozen=True)
class PersonalConfig:
    theme: str | None = None
    keymap: dict[str, str] = field(default_factory=dict)
    """Binding id → its keys (Textual's keymap)."""
    notify: NotifySettings = field(default_factory=NotifySettings)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Personal:
    """The file as read: its settings (the defaults when it cannot be used) and why not."""

    path: Path
    config: PersonalConfig = field(default_factory=PersonalConfig)
    problem: str | None = None
    """One sentence: what is wrong with the file, and that the defaults are used."""
    found: bool = False
    """The file exists."""


def _shown_path(path: Path) -> str:
    home = Path.home()
    try:
        return f"~/{path.relative_to(home)}"
    except ValueError:
        return str(path)


def _keymap(raw: object, problems: list[str]) -> dict[str, str]:
    if not isinstance(raw, dict):
        problems.append("keymap must be a table of binding ids and keys")
        return {}
    for binding_id, keys in raw.items():
        if not _BINDING_ID.fullmatch(binding_id):
            problems.append(f"keymap: {binding_id[:40]!r} is not a binding id")
        elif not isinstance(keys, str) or not _KEYS.fullmatch(keys.replace(" ", "")):
            problems.append(f"keymap: {binding_id} = {str(keys)[:40]!r} is not a list of keys "
                            "(such as \"f2\" or \"ctrl+r,R\")")  # fmt: skip
    return dict(raw)


def _notify(raw: object, problems: list[str]) -> NotifySettings:
    if not isinstance(raw, dict):
        problems.append("notify must be a table")
        return NotifySettings()
    said = len(problems)
    problems.extend(f"notify.{key} is not a setting" for key in raw if key not in _NOTIFY_KEYS)
    bell, desktop, minutes = (raw.get(key, getattr(NotifySettings, key)) for key in _NOTIFY_KEYS)
    if bell is not None and not isinstance(bell, bool):
        problems.append("notify.bell must be true or false")
    if desktop is not None and desktop not in ("off", "osc777", "osc9"):
        problems.append(f"notify.desktop must be 'off', 'osc777' or 'osc9', not {desktop!r:.40}")
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not 1 <= minutes <= 1440:
        problems.append(f"notify.mute_minutes must be a whole number of minutes from 1 to 1440, "
                        f"not {minutes!r:.40}")  # fmt: skip
    if len(problems) > said:
        return NotifySettings()
    return NotifySettings(bell, desktop, minutes)


def _config(raw: dict[str, Any]) -> tuple[PersonalConfig, list[str]]:
    problems = [f"{key} is not a setting" for key in raw if key not in _TOP_KEYS]
    theme = raw.get("theme")
    if theme is not None and (not isinstance(theme, str) or not 0 < len(theme) <= 64):
        problems.append(f"theme must be a theme's name, not {theme!r:.40}")
    keymap = _keymap(raw.get("keymap", {}), problems)
    notify = _notify(raw.get("notify", {}), problems)
    return PersonalConfig(theme, keymap, notify), problems


def load_personal(path: Path | None = None) -> Personal:
    """Read the operator's file (`config_path` by default): absent is all defaults; unusable
    is all defaults too, with `Personal.problem` saying why in one sentence."""
    path = config_path() if path is None else path
    try:
        data = path.read_bytes()[: MAX_BYTES + 1]
    except FileNotFoundError:
        return Personal(path)
    except OSError as exc:
        return Personal(path, problem=_unusable(path, f"it cannot be read ({exc.strerror})"),
                        found=True)  # fmt: skip
    if len(data) > MAX_BYTES:
        return Personal(path, problem=_unusable(path, "it is over 256 KiB"), found=True)
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        return Personal(path, problem=_unusable(path, "it is not UTF-8 text"), found=True)
    except tomllib.TOMLDecodeError as exc:
        return Personal(path, problem=_unusable(path, f"it is not valid TOML ({exc})"),
                        found=True)  # fmt: skip
    config, problems = _config(raw)
    if problems:
        return Personal(path, problem=_unusable(path, "; ".join(problems)), found=True)
    return Personal(path, config, found=True)


def _unusable(path: Path, why: str) -> str:
    return f"{_shown_path(path)} is not used, {why}; the console starts with its defaults."


def unknown_names(
    personal: Personal, themes: list[str] | tuple[str, ...], binding_ids: set[str]
) -> str | None:
    """One sentence naming the theme and the binding ids the file names that the console does
    not have (None: all are known)."""
    said = []
    theme = personal.config.theme
    if theme is not None and theme not in themes:
        said.append(f"theme {theme!r} is not one of the console's themes ({', '.join(themes)})")
    unknown = sorted(set(personal.config.keymap) - binding_ids)
    if unknown:
        said.append(f"keymap names {', '.join(unknown)}, which no binding has (the ids are in "
                    "docs/operator-guide.md)")  # fmt: skip
    if not said:
        return None
    return f"{_shown_path(personal.path)}: {'; '.join(said)}; those settings are not used."


def remember_theme(theme: str, path: Path | None = None) -> str | None:
    """Write ``theme`` into the operator's file, keeping every other line of it (its comments
    too), atomically: a rename over the old file. None when written; else the sentence why not
    (a file that does not parse is never written over)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    path = config_path() if path is None else path
    try:
        text = path.read_text("utf-8") if path.exists() else ""
        document = tomlkit.parse(text)
    except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
        return (f"The theme was not remembered: {_shown_path(path)} cannot be read as TOML "
                f"({exc}); it is left as it is.")  # fmt: skip
    document["theme"] = theme
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            temp.write_text(tomlkit.dumps(document), "utf-8")
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)
    except OSError as exc:
        return f"The theme was not remembered: {_shown_path(path)} ({exc.strerror})."
    return None
