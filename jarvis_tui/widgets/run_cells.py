"""The run table's columns and a run's cells: what each column shows of a run, and how the
columns fit the width there is. No widget: `jarvis_tui.widgets.run_table` draws them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from rich.text import Text

from core.service.text import found_kinds, usage_brief
from jarvis_tui.ages import in_largest_unit, seconds_since
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.state_look import STEER_LOOK, state_text, sub_stage

Row = dict[str, Any]

Column = tuple[str, str, int]
"""(key, label, width)."""

#: Every column, in order, with its width (the last progress: its least). Fixed widths: a live
#: update never makes the columns jump (the spend column comes once, with the workspace's first
#: report of spending). The columns an operator decides by come first, so an 80-column terminal
#: still shows them.
COLUMNS: tuple[Column, ...] = (
    ("run", "run", 18),
    ("state", "state", 18),
    ("retries", "↻", 2),
    ("overridden", "ovr", 3),
    ("age", "age", 4),
    ("gates", "gates", 5),
    ("steers", "steers", 7),
    ("spend", "spent", 15),
    ("lane", "lane", 16),
    ("task", "task", 10),
    ("progress", "last progress", 24),
)
#: Drawn only once some agent of the workspace has reported what it spent (as the header's
#: "spent"): a fleet whose agents report nothing keeps the room for lane and task.
SPEND = "spend"
#: Left out, in this order, while the last progress would be narrower than its least width: at
#: 160 columns the table's share left it 3 characters. What the run's agent spent goes last: it
#: is what an operator stops a run for, where lane and task only describe it (the gates panel
#: has them). At 80 columns all three are out.
GIVE_WAY = ("task", "lane", SPEND)
#: Columns whose label sits flush right, over figures aligned on their last character.
LABEL_RIGHT = frozenset({SPEND})


def fit_columns(width: int, *, spend: bool = False) -> tuple[Column, ...]:
    """The columns drawn in ``width`` cells: the last progress (the last column) takes what the
    others leave, after `GIVE_WAY` columns made room for its least width. Without ``spend``
    the `SPEND` column is left out whatever the width."""
    least = COLUMNS[-1][2]
    columns = [column for column in COLUMNS if spend or column[0] != SPEND]
    fixed = 0
    for dropped in (None, *GIVE_WAY):
        columns = [column for column in columns if column[0] != dropped]
        fixed = sum(w for _key, _label, w in columns[:-1]) + len(columns) - 1  # and the spaces
        if width - fixed >= least:
            break
    *rest, (key, label, _least) = columns
    return (*rest, (key, label, max(0, width - fixed)))


SORTS: dict[str, tuple[str, Callable[[Row], Any]]] = {
    "age": ("age", lambda r: r.get("created_at") or ""),
    "updated": ("updated", lambda r: r.get("updated_at") or ""),
    "run": ("run id", lambda r: r["run_id"]),
    "state": ("state", lambda r: r.get("state") or ""),
    "lane": ("lane", lambda r: r.get("lane") or ""),
    "task": ("task type", lambda r: r.get("task_type") or ""),
    "retries": ("retries", lambda r: r.get("retry_count") or 0),
}
"""Sort key name → (label, key function over a table row)."""

SORT_CYCLE = ("age", "updated", "state", "run", "lane", "task", "retries")


def age_text(stamp: str | None, now: datetime) -> str:
    """A coarse age (``<1m``, ``7m``, ``3h``, ``12d``): coarse enough to change rarely."""
    seconds = seconds_since(stamp, now)
    if seconds is None:
        return ""
    return "<1m" if seconds < 60 else in_largest_unit(seconds)


def gates_text(gates: dict[str, int] | None) -> Text:
    if not gates:
        return Text("")
    passed, total = gates["passed"], gates["total"]
    if passed == total:
        return Text(f"✓{passed}/{total}", style="green")
    if passed + gates.get("not_checked", 0) == total:
        # Nothing failed, but git could not check the claims: unverified, not passed.
        return Text(f"?{passed}/{total}", style="yellow")
    return Text(f"✗{passed}/{total}", style="bold red")


def steers_text(steers: dict[str, int]) -> Text:
    """The run's steer receipts by status, e.g. ``✓2 ⌛1``."""
    text = Text()
    for status, (symbol, style) in STEER_LOOK.items():
        count = steers.get(status)
        if count:
            if text:
                text.append(" ")
            text.append(f"{symbol}{count}", style=style)
    return text


#: The run cell's width (see `COLUMNS`): a flagged run's id gives way to its mark.
_RUN_WIDTH = COLUMNS[0][2]


def run_text(row: Row) -> Text:
    """The run's id, and ⚠ when secrets were found (and masked) in what its workers sent."""
    run_id = shown(row["run_id"])
    if not found_kinds(row.get("secrets_found")):
        return Text(run_id, no_wrap=True)
    if len(run_id) > _RUN_WIDTH - 2:
        run_id = run_id[: _RUN_WIDTH - 3] + "…"
    return Text.assemble(run_id, " ", ("⚠", "bold yellow"), no_wrap=True)


def cells(row: Row, now: datetime) -> tuple[Text, ...]:
    """The cells for one run, every worker-supplied string made inert and masked."""
    return (
        run_text(row),
        # The state, and the stage of its sub-machine (verification, a merge) it is at.
        state_text(str(row["state"]), sub=sub_stage(row), compact=True),
        Text(str(row.get("retry_count") or 0) if row.get("retry_count") else "", justify="right"),
        Text("!" if row.get("overridden") else "", style="bold magenta"),
        Text(age_text(row.get("created_at"), now), justify="right"),
        gates_text(row.get("gates")),
        steers_text(row.get("steers") or {}),
        Text(usage_brief(row.get("usage")), justify="right", no_wrap=True),
        Text(shown(row.get("lane") or ""), no_wrap=True),
        Text(shown(row.get("task_type") or ""), no_wrap=True),
        Text(one_line(row.get("last_progress_summary") or ""), no_wrap=True),
    )


def line_of(values: tuple[Text, ...], columns: tuple[Column, ...]) -> Text:
    """The cells of ``columns`` (``values`` holds every column's) side by side, each cut or
    padded to its column's width."""
    line = Text(no_wrap=True, end="")
    index = {key: i for i, (key, _label, _width) in enumerate(COLUMNS)}
    for n, (key, _label, width) in enumerate(columns):
        value = values[index[key]]
        cell = value.copy()
        cell.truncate(width, overflow="ellipsis")
        cell.align("right" if value.justify == "right" else "left", width)
        if n:
            line.append(" ")
        line.append_text(cell)
    return line


def header_text(columns: tuple[Column, ...] = COLUMNS) -> Text:
    labels = tuple(
        Text(label, style="bold", justify="right" if key in LABEL_RIGHT else "left")
        for key, label, _width in COLUMNS
    )
    return line_of(labels, columns)
