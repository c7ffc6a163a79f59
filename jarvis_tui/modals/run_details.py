"""Everything about one run on one scrollable page: what was asked, what happened, who acted."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from jarvis_tui.feed import RunView, StoreFeed
from jarvis_tui.safe_text import shown
from jarvis_tui.screens.store_sync import RUN_JOURNAL
from jarvis_tui.widgets.gate_panel import render_gates
from jarvis_tui.widgets.progress_stream import clock_of
from jarvis_tui.widgets.steer_composer import render_receipts

_FIELDS = (
    "created_at", "started_at", "finished_at", "updated_at", "dispatch_repo", "dispatch_branch",
    "branch_name", "commit_sha", "pr_url", "pr_skipped_reason", "test_summary",
    "context_intent", "parent_run_id", "effective_session_id", "sandbox",
)  # fmt: skip


def render_details(view: RunView) -> Text:
    if view.detail is None:
        return Text(f"Run {shown(view.run_id)} is no longer in the store.", style="dim")
    detail = view.detail
    text = render_gates(view)
    text.append_text(render_trouble(detail))
    text.append("\n\nfields", style="bold underline")
    for name in _FIELDS:
        if detail.get(name) not in (None, ""):
            text.append(f"\n  {name:<22}", style="dim")
            text.append(shown(detail[name]))
    files = detail.get("files_changed")
    if isinstance(files, list) and files:
        text.append("\n  files_changed         ", style="dim")
        text.append(shown(", ".join(str(f) for f in files)))
    text.append("\n\n")
    text.append_text(render_receipts(view))
    text.append("\n\naudit trail", style="bold underline")
    for row in detail.get("audit") or []:
        text.append(f"\n  {clock_of(row['at'])} ", style="dim")
        text.append(f"{shown(row['actor'])} {shown(row['action'])}: ")
        # A dispatch has no state before it: "—", not the word None.
        text.append(f"{shown(row['from_state'] or '—')} → {shown(row['to_state'] or '—')}")
        if row.get("reason"):
            text.append(f" — {shown(row['reason'])}", style="dim")
    text.append_text(render_removed(detail))
    text.append("\n\ndispatch", style="bold underline")
    dispatch: Any = detail.get("dispatch")
    text.append("\n" + shown(json.dumps(dispatch, indent=2, ensure_ascii=False)))
    return text


def render_removed(detail: dict[str, Any]) -> Text:
    """What retention removed of the run's history (``[store]`` keep days), a line per kind:
    its progress stream and journal no longer go back to the run's start, and say why."""
    text = Text()
    for kind, removed in (detail.get("retention") or {}).items():
        days = int(removed["keep_days"])
        text.append(
            f"\n  {int(removed['removed']):,} {kind.replace('_', ' ')} up to "
            f"{str(removed['until'])[:10]} removed by retention "
            f"(keep {days} day{'' if days == 1 else 's'})",
            style="dim",
        )
    return text


def render_trouble(detail: dict[str, Any]) -> Text:
    """Secrets its workers sent (their kinds), its refused IPC files and the end of each
    attempt's stderr; empty when there is none of that."""
    text = Text()
    if detail.get("secrets_found"):
        text.append("\n\n⚠ secrets masked: ", style="bold yellow")
        text.append(shown(", ".join(detail["secrets_found"])))
        text.append("\n  the values are masked wherever they are kept; rotate them", style="dim")
    refused = detail.get("quarantined") or []
    if refused:
        total = int(detail.get("quarantined_count") or len(refused))
        text.append(f"\n\nrefused files ({total})", style="bold underline")
        for row in refused:
            text.append(f"\n  {clock_of(row['quarantined_at'])} ", style="dim")
            text.append(shown(row["code"]), style="yellow")
            text.append(f" from {shown(row['lane'] or '?')}: ", style="dim")
            text.append(shown(row["message"]))
            where = row["stored_as"] or row["original_path"]
            text.append(f"\n    {shown(where)}", style="dim")
    for stderr in detail.get("stderr") or []:
        text.append(
            f"\n\nworker stderr (attempt {stderr['attempt']}, exit {stderr['exit_code']}, "
            f"the end of {int(stderr['total_bytes']):,} bytes)",
            style="bold underline",
        )
        # Behind a gutter: a worker's lines cannot pass for this screen's own headings.
        for line in str(stderr["tail"]).split("\n"):
            text.append("\n  │ ", style="dim")
            text.append(shown(line), style="dim")
    return text


#: How often an open details page reads its run again, in seconds.
REREAD_S = 1.0


class RunDetailsScreen(ModalScreen[None]):
    """One run's page. Given the feed, it keeps up with the run while open: the view it opens
    with may be a read behind the table (a merge the row already shows), and an operator may
    keep the page up to watch a run move."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,enter", "dismiss(None)", "Close", id="details.close"),
    ]

    def __init__(self, view: RunView, feed: StoreFeed | None = None) -> None:
        super().__init__(classes="dialog-screen")
        self.view = view
        self.feed = feed

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog details", id="details-scroll"):
            yield Static(f"Run {shown(self.view.run_id)}", classes="dialog-title", markup=False)
            yield Static(render_details(self.view), classes="dialog-body")
            yield Static(
                "escape closes · jarvis show RUN_ID --json has it all", classes="dialog-hint"
            )

    def on_mount(self) -> None:
        self.query_one("#details-scroll").focus()
        if self.feed is not None:
            self._reread()
            self.set_interval(REREAD_S, self._reread)

    # A failed read (the store down) leaves the page as it was; the main screen says why.
    @work(thread=True, exclusive=True, exit_on_error=False, group="details",
          description="Read the run on show")  # fmt: skip
    def _reread(self) -> None:
        assert self.feed is not None
        view = self.feed.run_view(self.view.run_id, journal_limit=RUN_JOURNAL)
        self.app.call_from_thread(self._show, view)

    def _show(self, view: RunView) -> None:
        if (view.detail, view.journal, view.peers) == (
            self.view.detail,
            self.view.journal,
            self.view.peers,
        ):
            return  # nothing new: the page is not repainted under the reader's eyes
        self.view = view
        self.query_one(".dialog-body", Static).update(render_details(view))
