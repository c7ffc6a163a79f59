"""The Textual console: wiring only. The main screen lives in `jarvis_tui.screens`, widgets in
`jarvis_tui.widgets`, dialogs in `jarvis_tui.modals`, palettes in `jarvis_tui.theme`, the
command palette in `jarvis_tui.commands`, styling in ``themes/base.tcss``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen, Screen

from jarvis_tui.commands import JarvisCommands
from jarvis_tui.palette import JarvisPalette
from jarvis_tui.screens.main_screen import MainScreen
from jarvis_tui.theme import DEFAULT_THEME, register_themes, role_defaults

if TYPE_CHECKING:
    from jarvis_tui.personal import Personal

Clock = Callable[[], datetime]

#: Seconds between the end of one store read and the start of the next.
POLL_INTERVAL = 0.5


def _utc_now() -> datetime:
    # Aware: the store's timestamps are UTC, and ages are differences with them.
    return datetime.now(UTC)


def _stylesheet() -> Path:
    # Installed: the wheel ships themes/ as jarvis_tui/themes/. Checkout: themes/ is beside us.
    here = Path(__file__).resolve().parent
    for candidate in (here / "themes" / "base.tcss", here.parent / "themes" / "base.tcss"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("themes/base.tcss is not installed beside the console")


@dataclass(frozen=True)
class HeldNotification:
    """A notification raised while a dialog was up, to raise when it closes."""

    message: str
    title: str
    severity: SeverityLevel
    timeout: float | None
    markup: bool


class JarvisApp(App[None]):
    """The operator console over one workspace's store.

    No toast is drawn over a dialog: toasts already up are hidden while one is open (theme CSS),
    and notifications raised meanwhile are held and raised, with their full time, once the
    console is back on the main screen.
    """

    CSS_PATH = _stylesheet()
    TITLE = "jarvis"
    COMMANDS = App.COMMANDS | {JarvisCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="quit", tooltip="Leave the console"),
    ]

    def __init__(
        self,
        workspace_db: Path,
        *,
        store_at: str | Path | None = None,
        theme: str | None = None,
        live: bool = True,
        clock: Clock | None = None,
        operator: str | None = None,
        poll_interval: float = POLL_INTERVAL,
        own_process: bool = False,
        personal: Personal | None = None,
    ) -> None:
        super().__init__()
        register_themes(self)
        self.personal = personal
        """The operator's own file (`jarvis_tui.personal`): its keymap applied, a theme chosen
        written back to it. None: no file (tests; the console then remembers nothing)."""
        remembered = personal.config.theme if personal is not None else None
        if theme is None and remembered in self.available_themes:
            theme = remembered
        self.theme = theme or DEFAULT_THEME
        self.workspace_db = workspace_db
        """The workspace's ``jarvis.db`` (the store the console reads unless ``store_at``)."""
        self.store_at = store_at
        """The store when it is not ``workspace_db`` (`core.store.location`)."""
        self.live = live
        """Keep polling the store (False in tests: read once, deterministically)."""
        self._clock: Clock = clock or _utc_now
        self._operator = operator
        self._poll_interval = poll_interval
        self.own_process = own_process
        """The console is this process's only job (the CLI), so it may tune the garbage
        collector for it; never in a process it shares, such as a test run."""
        self.held_notifications: list[HeldNotification] = []
        """Raised while a dialog is up: shown when it closes."""

    def on_mount(self) -> None:
        self.screen_change_signal.subscribe(self, self._screen_changed)
        personal = self.personal
        if personal is None:
            return
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        if personal.problem:
            self.notify(personal.problem, title="Personal config", severity="warning",
                        markup=False, timeout=20)  # fmt: skip
        if personal.config.keymap or personal.config.theme:
            self.set_keymap(dict(personal.config.keymap))
            # After the first paint: naming every binding imports every screen of the console.
            self.call_after_refresh(self._check_personal_names)

    def _check_personal_names(self) -> None:
        from jarvis_tui.keymap_ids import binding_ids
        from jarvis_tui.personal import unknown_names

        assert self.personal is not None
        said = unknown_names(self.personal, list(self.available_themes), binding_ids())
        if said:
            self.notify(said, title="Personal config", severity="warning", markup=False,
                        timeout=20)  # fmt: skip

    def _theme_changed(self, theme: object) -> None:
        # Remembered for the next start: chosen in the palette (ours or Textual's own list).
        personal = self.personal
        if personal is None or personal.config.theme == self.theme:
            return
        from jarvis_tui.personal import remember_theme

        problem = remember_theme(self.theme, personal.path)
        if problem:
            self.notify(problem, title="Personal config", severity="warning", markup=False)
            return
        self.personal = replace(personal, config=replace(personal.config, theme=self.theme))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Raise a notification, or hold it while a dialog is up (see the class docstring)."""
        if self._dialog_up():
            self.held_notifications.append(
                HeldNotification(message, title, severity, timeout, markup)
            )
            return
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def _dialog_up(self) -> bool:
        return len(self.screen_stack) > 1 and isinstance(self.screen_stack[-1], ModalScreen)

    def _screen_changed(self, screen: Screen[object]) -> None:
        if self._dialog_up() or not self.held_notifications:
            return
        held, self.held_notifications = self.held_notifications, []
        for note in held:
            super().notify(
                note.message,
                title=note.title,
                severity=note.severity,
                timeout=note.timeout,
                markup=note.markup,
            )

    def action_command_palette(self) -> None:
        """Open the command palette (`jarvis_tui.palette`: it keeps keys typed ahead)."""
        if self.use_command_palette and not CommandPalette.is_open(self):  # type: ignore[arg-type]
            self.push_screen(JarvisPalette(id="--command-palette"))

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        if sys.platform != "win32":
            # Only in place of Textual's own terminal driver: not a driver chosen through
            # TEXTUAL_DRIVER, nor Windows' (whose console reports keys, not bytes).
            from textual.drivers.linux_driver import LinuxDriver

            from jarvis_tui.key_input import ConsoleDriver

            if driver is LinuxDriver:
                return ConsoleDriver
        return driver

    def get_theme_variable_defaults(self) -> dict[str, str]:
        # Asked each time a theme is applied, after it is chosen: a theme's own variables win.
        return role_defaults(self.current_theme)

    def get_default_screen(self) -> Screen[None]:
        return MainScreen(
            self.workspace_db,
            store_at=self.store_at,
            live=self.live,
            clock=self._clock,
            operator=self._operator,
            poll_interval=self._poll_interval,
            tune_gc=self.own_process,
            notify=self.personal.config.notify if self.personal is not None else None,
        )

    @property
    def main(self) -> MainScreen:
        """The main screen (whatever dialog is on top of it)."""
        screen = self.screen_stack[0]
        assert isinstance(screen, MainScreen)
        return screen
