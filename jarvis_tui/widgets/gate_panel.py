"""The selected run's verdicts: state and actions, completion gates, scope and risk, failures
with how many other runs share their fingerprint, and acceptance-criteria results."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from jarvis_tui.feed import RunView
from jarvis_tui.run_actions import RUN_ACTIONS, availability
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.state_look import state_text
from jarvis_tui.widgets.text_pane import TextPane


def _heading(text: Text, title: str) -> None:
    # Headings are appended, not the base style, which would spread over every later line.
    text.append(f"\n\n{title}", style="bold underline")


def _run_header(detail: dict[str, Any]) -> Text:
    text = Text.assemble(
        (shown(detail["run_id"]), "bold"),
        "  ",
        state_text(str(detail["state"]), bool(detail.get("overridden"))),
        (f"  retries {detail.get('retry_count') or 0} · version {detail.get('version')}", "dim"),
    )
    text.append(
        f"\n{shown(detail.get('lane') or '')} · {shown(detail.get('task_type') or '-')}"
        f" · from {shown(detail.get('source_lane') or '')}",
        style="dim",
    )
    if detail.get("overridden"):
        text.append("\noverridden: ", style="bold magenta")
        text.append(one_line(detail.get("override_reason") or "", 300))
        if detail.get("overridden_by"):
            text.append(f"  by {shown(detail['overridden_by'])}", style="dim")
    if detail.get("state_reason"):
        text.append("\nreason: ", style="dim")
        text.append(one_line(detail["state_reason"], 300))
    text.append("\n")
    for action, (key, label) in RUN_ACTIONS.items():
        can = availability(action, detail)
        text.append(f"{key} {label.lower()}  ", style="bold" if can.enabled else "dim strike")
    return text


def _gates(text: Text, detail: dict[str, Any]) -> None:
    gates = detail.get("gates") or []
    latest = max((int(g["attempt"]) for g in gates), default=0)
    _heading(text, f"completion gates (attempt {latest})" if latest else "completion gates")
    shown_gates = [g for g in gates if int(g["attempt"]) == latest]
    if not shown_gates:
        text.append("\n  none yet", style="dim")
    for gate in shown_gates:
        passed = bool(gate["passed"])
        text.append("\n  ")
        text.append("✓" if passed else "✗", style="green" if passed else "bold red")
        text.append(f" {shown(gate['name'])}")
        if gate.get("detail"):
            text.append(f"  {one_line(gate['detail'], 160)}", style="dim")
    earlier = {int(g["attempt"]) for g in gates} - {latest}
    if earlier:
        failed = sum(1 for g in gates if int(g["attempt"]) != latest and not g["passed"])
        text.append(f"\n  earlier attempts: {len(earlier)} ({failed} gate failures)", style="dim")


def _risk(text: Text, detail: dict[str, Any]) -> None:
    _heading(text, "scope and risk")
    risk = detail.get("risk_summary")
    if not risk:
        text.append("\n  not assessed yet", style="dim")
        return
    level = str(risk).split()[0] if str(risk).split() else ""
    style = {"L0": "green", "L1": "yellow", "L2": "yellow", "L3": "bold red"}.get(level, "")
    text.append("\n  ")
    text.append(one_line(risk, 300), style=style)
    findings = [
        g for g in detail.get("gates") or [] if str(g["name"]).startswith(("risk", "scope"))
    ]
    for finding in findings:
        text.append(f"\n  · {one_line(finding.get('detail') or finding['name'], 200)}", style="dim")


def _failures(text: Text, detail: dict[str, Any], peers: list[dict[str, Any]]) -> None:
    failures = detail.get("failures") or []
    if not failures:
        return
    _heading(text, "failures")
    last = failures[-1]
    text.append(f"\n  {shown(last['error_class'])}/{shown(last['error_code'])}", style="bold red")
    text.append(f"  {one_line(last['message'], 200)}")
    for peer in peers:
        others = int(peer["other_runs"])
        text.append(f"\n  fingerprint {shown(peer['fingerprint'])[:16]}", style="dim")
        if others:
            text.append(
                f"  shared by {others} other run{'s' if others != 1 else ''}", style="bold yellow"
            )
        else:
            text.append("  seen on no other run", style="dim")


def _criteria(text: Text, detail: dict[str, Any]) -> None:
    results = detail.get("verification") or []
    if not results:
        return
    _heading(text, "acceptance criteria")
    for result in results:
        passed = result.get("passed")
        mark, style = ("✓", "green") if passed else ("✗", "bold red")
        if passed is None:
            mark, style = ("…", "dim")
        text.append(f"\n  {mark} ", style=style)
        text.append(one_line(result.get("criterion") or result.get("description") or "", 120))
        if result.get("output"):
            text.append(f"\n      {one_line(result['output'], 200)}", style="dim")


def render_gates(view: RunView | None) -> Text:
    """The panel's content for one run, or a hint when nothing is selected."""
    if view is None:
        return Text("No run selected.", style="dim")
    if view.detail is None:
        return Text(f"Run {shown(view.run_id)} is no longer in the store.", style="dim")
    detail = view.detail
    text = _run_header(detail)
    _gates(text, detail)
    _risk(text, detail)
    _failures(text, detail, view.peers)
    _criteria(text, detail)
    return text


class GatePanel(TextPane):
    """Shows one run's verdicts; `show` replaces them. Worker text is inert, never markup."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(wrap=True, id=id, classes=classes)
        self.shown: Text = render_gates(None)
        """What the panel shows, as Rich text (its ``plain`` is what an operator reads)."""
        self.view_run_id: str | None = None
        """The run shown."""
        self.set_text(self.shown)

    def show(self, view: RunView | None) -> None:
        text = render_gates(view)
        run_id = view.run_id if view else None
        if run_id != self.view_run_id and self.top:
            self.scroll_to_row(0)  # another run: start at its header
        self.view_run_id = run_id
        self.shown = text
        self.set_text(text)  # repaints only when something changed: an idle console is still
