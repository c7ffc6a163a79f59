"""The progress stream: a run's journal (progress, steers, state changes) as it happens.

Follows new entries while the operator is at the bottom; scrolling up pauses it (new entries
still arrive, the view holds still); `end` resumes. A `TextPane`, not a `RichLog`: a log's every
write asks the whole screen for a layout, and a busy fleet writes many times a second. Memory is
bounded by ``max_lines``: older history is the store's (`jarvis journal RUN`), not the widget's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.reactive import reactive

from core.lifecycle import VerificationState
from core.service.stages import label, moved
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.state_look import STEER_LOOK, look
from jarvis_tui.widgets.searchable_pane import SearchablePane

#: Lines kept in memory per stream.
MAX_LINES = 1000


def clock_of(stamp: object) -> str:
    """The time of day of an ISO timestamp: what an operator scans for."""
    text = str(stamp or "")
    return text[11:19] if len(text) >= 19 else text


def entry_text(entry: dict[str, Any], *, with_run: bool = False) -> Text:
    """One journal entry as one line, every worker-supplied string made inert and masked."""
    raw = entry.get("payload")
    payload: dict[str, Any] = raw if isinstance(raw, dict) else {}
    line = Text(clock_of(entry.get("at")), style="dim")
    line.append(" ")
    if with_run:
        line.append(f"{shown(entry.get('run_id') or ''):<18.18}", style="bold")
        line.append(" ")
    kind = entry.get("kind")
    if kind == "progress":
        line.append(f"{one_line(payload.get('phase') or '-', 10):<10}", style="bold")
        line.append(" ")
        line.append(one_line(payload.get("summary") or ""))
        if payload.get("tool_used"):
            line.append(f"  [{one_line(payload['tool_used'], 30)}]", style="dim")
    elif kind == "steer":
        status = str(payload.get("status") or "")
        symbol, style = STEER_LOOK.get(status, ("?", ""))
        line.append(f"{symbol} steer {status:<9}", style=style)
        if payload.get("message"):
            line.append(f" “{one_line(payload['message'], 120)}”")
        if payload.get("reason"):
            line.append(f" — {one_line(payload['reason'])}", style="dim")
        line.append(f"  by {shown(entry.get('actor') or '')}", style="dim")
    elif kind == "transition":
        stages = moved(payload)
        if stages is None:  # not a move this lifecycle knows: said as it was written
            here, there, symbol, style = payload.get("from"), payload.get("to"), "?", ""
        else:
            here, there = label(stages[0]), label(stages[1])
            symbol, style = look(stages[1])
        line.append(
            f"{symbol} {shown(payload.get('action') or '?')}: {shown(here or '?')} → "
            f"{shown(there or '?')}",
            style=style,
        )
        line.append(f"  by {shown(entry.get('actor') or '')}", style="dim")
        if payload.get("reason"):
            line.append(f" — {one_line(payload['reason'])}")
    elif kind == "created":
        line.append(f"+ created ({payload.get('state')})", style="dim")
        found = payload.get("criteria")
        if isinstance(found, dict) and found.get("count"):  # none found: nothing to say
            line.append(f" · criteria: {_criteria_found(found)}", style="dim")
        line.append(f"  by {shown(entry.get('actor') or '')}", style="dim")
    elif kind == "criteria":
        line.append(f"☰ criteria: {_criteria_found(payload)}", style="dim")
        notes = payload.get("notes")
        if isinstance(notes, list) and notes:
            line.append(f" — {one_line(notes[-1], 120)}", style="dim")
    elif kind == "verification":
        line.append_text(_verification_text(payload))
    elif kind == "worker":
        line.append(
            f"⚙ worker started (pid {payload.get('pid')}, {shown(payload.get('lane') or '')})",
            style="dim",
        )
    elif kind == "worktree":
        line.append_text(_worktree_text(payload))
    elif kind == "merge_requested":
        line.append(f"⑂ merge into {shown(payload.get('base') or '?')} requested", style="cyan")
        host = f" of host {shown(payload['host'])}" if payload.get("host") else ""
        line.append(f"  by {shown(entry.get('actor') or '')}{host}", style="dim")
    elif kind == "merge":
        done = str(payload.get("done") or "")
        merged = done in ("fast_forward", "merge_commit", "already_merged")
        what = str(payload.get("refused") or done or "merge").replace("_", " ")
        style = "green" if merged and not payload.get("refused") else "yellow"
        line.append(f"⑂ {shown(what)}", style=style)
        line.append(f" — {one_line(payload.get('note') or '', 200)}")
        host = f" on host {shown(payload['host'])}" if payload.get("host") else ""
        line.append(f"  approved by {shown(entry.get('actor') or '')}{host}", style="dim")
    elif kind == "quarantined":
        line.append(f"⛔ refused file: {shown(payload.get('code') or '?')}", style="bold yellow")
        line.append(f" — {one_line(payload.get('message') or '', 160)}")
        line.append(f"  from {shown(payload.get('lane') or 'an unknown folder')}", style="dim")
    elif kind in ("lane_paused", "lane_resumed"):
        verb = "paused" if kind == "lane_paused" else "resumed"
        line.append(f"⏸ lane {shown(payload.get('lane') or '?')} {verb}", style="bold yellow")
        if payload.get("reason"):
            line.append(f" — {one_line(payload['reason'], 160)}")
        line.append(f"  by {shown(entry.get('actor') or '')}", style="dim")
    elif kind == "secrets":
        kinds = payload.get("new") or payload.get("kinds") or []
        names = ", ".join(shown(k) for k in kinds) if isinstance(kinds, list) else "?"
        line.append(f"⚠ secrets masked: {names}", style="bold yellow")
        line.append(f"  in its {shown(payload.get('source') or 'output')}", style="dim")
    else:
        line.append(f"{shown(kind or '?')} {one_line(payload)}", style="dim")
    return line


def _worktree_text(payload: dict[str, Any]) -> Text:
    """A worktree made for an attempt, or removed after the run."""
    if payload.get("removed"):
        text = Text("⑂ worktree removed (the branch stays)", style="dim")
        if payload.get("stash"):
            text.append(f"; uncommitted changes stashed as {shown(payload['stash'])[:12]}")
        return text
    start = shown(str(payload.get("start_commit") or ""))[:12]
    return Text(
        f"⑂ worktree on {shown(payload.get('branch') or '?')} from "
        f"{shown(payload.get('base') or '?')} at {start} (attempt {payload.get('attempt')})",
        style="dim",
    )


def _criteria_found(payload: dict[str, Any]) -> str:
    count = payload.get("count")
    return f"{count if isinstance(count, int) else '?'} from {shown(payload.get('source') or '?')}"


def _verification_text(payload: dict[str, Any]) -> Text:
    """A verification journal entry in words: what it found, or (a store from before verification
    moved through the lifecycle's transitions) where it stood."""
    status = str(payload.get("status") or "")
    if status == VerificationState.PENDING:
        return Text("… criteria to verify", style="dim")
    if status == VerificationState.VERIFYING:
        return Text("… verifying criteria", style="dim")
    if status == "resumed":
        return Text("… verifying criteria again (the host restarted)", style="dim")
    if status == "approved":
        return Text(f"✓ command allowed: {one_line(payload.get('command') or '', 120)}")
    raw = payload.get("failed")
    failed: list[Any] = raw if isinstance(raw, list) else []
    waiting = payload.get("pending_approval")
    if status == VerificationState.AWAITING_APPROVAL or (
        isinstance(waiting, list) and waiting and not failed
    ):
        symbol, style = look(VerificationState.AWAITING_APPROVAL)
        return Text(f"{symbol} a criterion's command waits for approval (A)", style=style)
    if payload.get("passed"):
        return Text("✓ criteria verified: all passed", style="green")
    names = "; ".join(one_line(name, 80) for name in failed[:3])
    return Text(f"✗ criteria failed: {names}" if names else "✗ criteria not met", style="red")


class ProgressStream(SearchablePane):
    """A bounded, follow-or-pause view of journal entries, searched with ``/``, ``n``, ``N``."""

    SEARCHED = "the progress stream"

    BINDINGS: ClassVar[list[BindingType]] = [
        *SearchablePane.search_bindings("stream"),
        # Over the pane's own end and G (bottom): at the bottom, the stream follows again.
        Binding(
            "end,G", "follow", "Follow", id="stream.follow", tooltip="Jump to the newest entry"
        ),
    ]

    following: reactive[bool] = reactive(True)
    """New entries scroll into view; False once the operator scrolls up."""

    def __init__(
        self,
        *,
        max_lines: int = MAX_LINES,
        id: str | None = None,  # noqa: A002 - Textual's name
        classes: str | None = None,
    ) -> None:
        # One entry, one row, cut at the edge: a stream is scanned down its left side.
        super().__init__(max_lines=max_lines, id=id, classes=classes)
        self.all_runs = False
        """Entries of every run (prefixed by run id), not just the selected one's."""
        self.run_id: str | None = None
        """The run whose entries are shown (per-run mode)."""
        self.last_seq = 0
        """The newest journal seq shown: an entry at or below it is never written twice."""

    @property
    def shown_lines(self) -> list[str]:
        """Plain text of the entries held, oldest first."""
        return [line.plain for line in self.lines]

    def on_mount(self) -> None:
        self._title()

    def _title(self) -> None:
        what = "all runs" if self.all_runs else (shown(self.run_id) if self.run_id else "no run")
        self.border_title = f"progress · {what}"
        follow = "following" if self.following else "paused — G or end follows"
        self.border_subtitle = f"{self.search_note} · {follow}" if self.search_note else follow

    def watch_following(self) -> None:
        self._title()

    def searched(self) -> None:
        self._title()

    def scrolled(self) -> None:
        # At the bottom (or nothing to scroll): follow. Anywhere above, or on a match gone to
        # (on the last screen too): the operator is reading, and new entries must not move it.
        self.following = self.at_bottom and self.current is None

    def on_resize(self, event: Resize) -> None:
        super().on_resize(event)
        if self.following:
            self.top = self.max_top

    def action_follow(self) -> None:
        if self.current is not None:
            self.current = None  # the match is let go: the bottom follows again
            self.redraw()
        self.following = True
        self.scroll_to_row(self.max_top)

    def reset(
        self, *, run_id: str | None, all_runs: bool, entries: Iterable[dict[str, Any]]
    ) -> None:
        """Show ``entries`` afresh for a new selection or mode, following the newest."""
        self.run_id = run_id
        self.all_runs = all_runs
        self.last_seq = 0
        self.current, self.search_note = None, ""  # another run's entries: the search is anew
        self.following = True
        self._title()
        # Drawn as one replacement: each line is rendered only if and when it is on screen.
        self.set_lines(self._new_lines(entries))
        self.top = self.max_top

    def add(self, entries: Iterable[dict[str, Any]]) -> None:
        """Append entries newer than what is shown (older or repeated ones are skipped)."""
        lines = self._new_lines(entries)
        if not lines:
            return
        self.append_lines(lines)
        if self.following:
            self.top = self.max_top

    def _new_lines(self, entries: Iterable[dict[str, Any]]) -> list[Text]:
        lines = []
        for entry in entries:
            seq = int(entry.get("seq") or 0)
            if seq <= self.last_seq:
                continue
            self.last_seq = seq
            lines.append(entry_text(entry, with_run=self.all_runs))
        return lines
