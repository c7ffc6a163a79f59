"""The fleet (``F``): every lane with the worker profile and sandbox that work it, its
concurrency, its runs by state and the hosts serving it, and every host with its health; a lane
paused (``p``, with a reason) or resumed (``u``) through the lane actions' one entry point
(`core.service.lanes`).

The read is a thread worker (`StoreFeed.lanes`), again every `READ_EVERY_S` while the console is
live and after each action; an action's outcome (done, or the engine's refusal) is said on the
screen's status line, since notifications wait while a dialog is up.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from core.service.lanes import LANE_ACTIONS, FleetLanes, LaneLine, LaneOutcome, LaneRequest
from jarvis_tui.ages import in_largest_unit, seconds_since
from jarvis_tui.feed import StoreFeed
from jarvis_tui.modals.reason_dialog import ReasonDialog
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.widgets.list_table import ListTable

#: Seconds between reads while the console is live.
READ_EVERY_S = 2.0
#: How each lease state is shown.
_HEALTH = {"live": "green", "stopped": "dim", "lost": "bold red", "recovered": "yellow"}
COLUMNS = ("lane", "worker", "sandbox", "at a time", "running", "queued", "hosts", "paused")


def cell(text: str, style: str = "") -> Text:
    """A table cell: ``text`` (already made inert by the caller) in ``style``."""
    return Text.assemble((text, style))


def lane_cells(line: LaneLine) -> tuple[Text, ...]:
    """One lane's row, every stored string inert."""
    pause = line.pause
    paused = (
        cell(f"{one_line(pause['reason'], 60)} ({shown(pause['paused_by'])})", "bold yellow")
        if pause else cell("")
    )  # fmt: skip
    return (
        cell(shown(line.lane), "bold"),
        cell(shown(line.worker)),
        cell(line.sandbox),
        cell(str(line.concurrency), "yellow" if line.concurrency == 0 else ""),
        cell(str(line.running), "bold cyan" if line.running else "dim"),
        cell(str(line.queued), "" if line.queued else "dim"),
        cell(", ".join(shown(h) for h in line.hosts) or "none", "" if line.hosts else "red"),
        paused,
    )


def hosts_table(fleet: FleetLanes, now: datetime) -> Table | Text:
    """Every host that served the store, its health first."""
    if not fleet.hosts:
        return Text("No host has served this store yet.", style="dim")
    table = Table(box=None, pad_edge=False, expand=True)
    for column in ("host", "health", "heartbeat", "lanes", "running", "machine / pid"):
        table.add_column(column, overflow="ellipsis", no_wrap=True)
    for host in fleet.hosts:
        state = str(host["state"])
        said = f"{state} by {shown(host['recovered_by'])}" if state == "recovered" else state
        quiet = seconds_since(host.get("heartbeat_at"), now)
        lanes = host["lanes"]
        table.add_row(
            Text(shown(host["name"]), style="bold"),
            Text(said, style=_HEALTH.get(state, "")),
            f"{in_largest_unit(quiet)} ago" if quiet is not None else "?",
            Text(", ".join(shown(lane) for lane in lanes) if lanes is not None else "every lane"),
            str(host.get("running", 0)),
            Text(f"{shown(host['machine'])} / {host['pid']}"),
        )
    return table


class FleetScreen(ModalScreen[None]):
    """The lanes and the hosts; escape closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close", id="fleet.close"),
        Binding("q,F", "dismiss(None)", "Close", show=False, id="fleet.quit"),
        *[
            Binding(entry.key, f"lane_action({name!r})", entry.label, id=f"fleet.{name}")
            for name, entry in LANE_ACTIONS.items()
        ],
        Binding("f5", "read", "Refresh", id="fleet.refresh"),
    ]

    def __init__(
        self, feed: StoreFeed, *, operator: str, clock: Callable[[], datetime], live: bool
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.feed = feed
        self.operator = operator
        self.clock = clock
        self.live = live
        self.fleet: FleetLanes | None = None
        """The last read."""
        self.outcome: LaneOutcome | None = None
        """The last action's outcome, said on the status line until the next."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog fleet", id="fleet-dialog"):
            yield Static("Fleet: lanes and hosts", classes="dialog-title", markup=False)
            table: DataTable[Text] = ListTable(
                id="fleet-lanes", cursor_type="row", zebra_stripes=True
            )
            yield table
            yield Static("", id="fleet-hosts")
            yield Static("reading…", classes="dialog-hint", id="fleet-status", markup=False)

    @property
    def lanes_table(self) -> DataTable[Text]:
        return self.query_one("#fleet-lanes", DataTable)

    def on_mount(self) -> None:
        self.lanes_table.add_columns(*COLUMNS)
        self.lanes_table.focus()
        self.action_read()
        if self.live:
            self.set_interval(READ_EVERY_S, self.action_read)

    def selected_lane(self) -> str | None:
        table = self.lanes_table
        if self.fleet is None or not self.fleet.lanes or table.row_count == 0:
            return None
        row = min(max(table.cursor_row, 0), len(self.fleet.lanes) - 1)
        return self.fleet.lanes[row].lane

    @work(thread=True, exclusive=True, group="fleet-read", description="reading the fleet")
    def action_read(self) -> None:
        fleet = self.feed.lanes()
        self.app.call_from_thread(self._show, fleet)

    def _show(self, fleet: FleetLanes) -> None:
        keep = self.selected_lane()
        self.fleet = fleet
        table = self.lanes_table
        table.clear()
        for line in fleet.lanes:
            table.add_row(*lane_cells(line), key=line.lane)
        names = [line.lane for line in fleet.lanes]
        if keep in names:
            table.move_cursor(row=names.index(keep))
        self.query_one("#fleet-hosts", Static).update(hosts_table(fleet, self.clock()))
        self._say()

    def _say(self) -> None:
        fleet = self.fleet
        parts: list[str] = []
        outcome = self.outcome
        if outcome is not None and outcome.refusal is not None:
            parts.append(f"Refused: {outcome.refusal.message}")
        elif outcome is not None:
            done = LANE_ACTIONS[outcome.request.action].done
            parts.append(f"{done} lane {outcome.request.lane}.")
        if fleet is not None and fleet.config_problem:
            parts.append(f"jarvis.toml cannot be used, so the lanes show the defaults: "
                         f"{fleet.config_problem}")  # fmt: skip
        if fleet is not None and not fleet.lanes:
            parts.append("No lane is configured and no run names one yet.")
        status = self.query_one("#fleet-status", Static)
        status.update(
            Text(shown(" ".join(parts)) or "p pauses the selected lane, u resumes it; esc closes.")
        )

    def action_lane_action(self, name: str) -> None:
        lane = self.selected_lane()
        if lane is None:
            return
        entry = LANE_ACTIONS[name]
        if entry.asks == "reason":
            body = Text(f"Pause lane {shown(lane)}: its queued runs wait, its running runs "
                        "finish. Every host sees the pause.")  # fmt: skip
            dialog = ReasonDialog(f"{entry.label} {shown(lane)}", body, confirm=entry.label)
            self.app.push_screen(dialog, lambda reason: self._act(name, lane, reason))
        else:
            self._act(name, lane, None, asked=False)

    def _act(self, name: str, lane: str, reason: str | None, *, asked: bool = True) -> None:
        if asked and reason is None:
            return  # backed out
        self._carry_out(LaneRequest(name, lane, self.operator, reason))

    @work(thread=True, group="fleet-act", description="acting on a lane")
    def _carry_out(self, request: LaneRequest) -> None:
        outcome = self.feed.lane_act(request)
        fleet = self.feed.lanes()
        self.app.call_from_thread(self._acted, outcome, fleet)

    def _acted(self, outcome: LaneOutcome, fleet: FleetLanes) -> None:
        self.outcome = outcome
        self._show(fleet)

    def data(self) -> dict[str, Any]:
        """What the view shows, for tests: each lane's row as text."""
        table = self.lanes_table
        return {str(key.value): [str(cell) for cell in table.get_row(key)] for key in table.rows}
