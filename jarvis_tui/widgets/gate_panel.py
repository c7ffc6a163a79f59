"""The selected run's verdicts: state and actions, completion gates, scope and risk, failures
with how many other runs share their fingerprint, and acceptance-criteria results."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.text import Text

from core.lifecycle import VerificationState
from core.service.actions import ACTIONS, availability
from core.service.criteria import criterion_command, pending_commands
from core.service.reads import RunView
from core.service.stages import verification_of
from core.service.text import usage_line
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.state_look import look, merge_text, run_state_text, shown_stage
from jarvis_tui.widgets.text_pane import TextPane


def _heading(text: Text, title: str) -> None:
    # Headings are appended, not the base style, which would spread over every later line.
    text.append(f"\n\n{title}", style="bold underline")


def _offered(action: str, detail: dict[str, Any], enabled: bool) -> bool:
    """Whether the header lists ``action``: the criteria actions only on a run with criteria
    (most runs have none, and the line stays short), allowing a command only while one waits."""
    if not ACTIONS[action].needs_detail:
        return True
    if not detail.get("criteria"):
        return False
    return action == "verify" or enabled


def _run_header(detail: dict[str, Any]) -> Text:
    text = Text.assemble(
        (shown(detail["run_id"]), "bold"),
        "  ",
        run_state_text(detail),
        (f"  retries {detail.get('retry_count') or 0} · version {detail.get('version')}", "dim"),
    )
    text.append(
        f"\n{shown(detail.get('lane') or '')} · {shown(detail.get('task_type') or '-')}"
        f" · from {shown(detail.get('source_lane') or '')}",
        style="dim",
    )
    if used := usage_line(detail.get("usage")):
        text.append(f"\nused: {used}", style="dim")  # the agent's own report, every attempt
    if unread := (detail.get("usage") or {}).get("unreadable"):
        text.append("\nusage could not be read: ", style="bold yellow")
        text.append(one_line(unread, 300))
    if detail.get("overridden"):
        text.append("\noverridden: ", style="bold magenta")
        text.append(one_line(detail.get("override_reason") or "", 300))
        if detail.get("overridden_by"):
            text.append(f"  by {shown(detail['overridden_by'])}", style="dim")
    if detail.get("state_reason"):
        text.append("\nreason: ", style="dim")
        text.append(one_line(detail["state_reason"], 300))
    if merge := detail.get("merge"):
        text.append("\n")
        text.append_text(merge_text(merge))
    text.append("\n")
    for action, entry in ACTIONS.items():
        key, label = entry.key, entry.label
        can = availability(action, detail)
        if not _offered(action, detail, can.enabled):
            continue
        text.append(f"{key} {label.lower()}  ", style="bold" if can.enabled else "dim strike")
    stat = detail.get("diff_stat")
    if stat:
        # Only a run with a checked diff: `d` on any other run says why there is none.
        files = int(stat["files"])
        text.append("d diff ", style="bold")
        text.append(
            f"{files} file{'s' if files != 1 else ''} +{stat['additions']} -{stat['deletions']}",
            style="dim",
        )
    return text


def _gates(text: Text, detail: dict[str, Any]) -> None:
    gates = detail.get("gates") or []
    latest = max((int(g["attempt"]) for g in gates), default=0)
    _heading(text, f"completion gates (attempt {latest})" if latest else "completion gates")
    shown_gates = [g for g in gates if int(g["attempt"]) == latest]
    if detail.get("unverified"):
        text.append("\n  ? unverified: ", style="bold yellow")
        text.append(one_line(str(detail["unverified"]), 160))
    if detail.get("sandbox") == "none":
        # Its worker could write anywhere its user may: what it says it did is all there is.
        text.append("\n  ! unconfined: ", style="bold yellow")
        text.append("its worker ran without a sandbox", style="dim")
    if not shown_gates:
        text.append("\n  none yet", style="dim")
    elif detail.get("criteria") and all(g["passed"] for g in shown_gates):
        # Passing gates only let the criteria be verified, and the criteria below decide the
        # run: one line keeps them in sight in a small panel (`enter` lists every gate).
        text.append("\n  ✓", style="green")
        text.append(f" {len(shown_gates)} of {len(shown_gates)} passed")
        shown_gates = []
    for gate in shown_gates:
        passed = bool(gate["passed"])
        text.append("\n  ")
        if gate.get("status") == "not_checked":
            text.append("?", style="yellow")  # not checked is never shown as passed
        else:
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


#: How verification stands while it has not decided, as the heading says it: every stage of
#: the lifecycle's verification sub-machine has its words.
_VERIFICATION_STATES: dict[str, str] = {
    VerificationState.PENDING: "pending verification",
    VerificationState.VERIFYING: "verifying now…",
    VerificationState.AWAITING_APPROVAL: "awaiting approval",
}
if set(_VERIFICATION_STATES) != set(VerificationState):
    raise AssertionError("every stage of verification needs its words")
#: Lines of a criterion's output shown under it (the end: where a failing tool says why).
EXCERPT_LINES = 2


def _clock_time(stamp: object) -> str:
    """``stamp`` (ISO 8601, UTC) as local HH:MM:SS, like the header's read time."""
    try:
        moment = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return one_line(stamp, 24)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone().strftime("%H:%M:%S")


def _duration(ms: object) -> str:
    if not isinstance(ms, int) or isinstance(ms, bool) or ms < 0:
        return ""
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60_000} min {ms % 60_000 // 1000} s"


def _excerpt(output: object, lines: int = EXCERPT_LINES, limit: int = 160) -> list[str]:
    """The last ``lines`` non-blank lines of a criterion's output, inert and cut to ``limit``."""
    text = shown(str(output or "").replace("\r\n", "\n").replace("\r", "\n"))
    kept = [line.replace("\t", " ").strip() for line in text.split("\n")]
    return [
        line if len(line) <= limit else line[: limit - 1] + "…"
        for line in [line for line in kept if line][-lines:]
    ]


def _pairs(
    criteria: list[dict[str, Any]], results: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Each criterion with its latest result (None: not verified since it was set), then any
    result whose criterion is no longer listed. Results carry their criterion as verified, so
    they are matched by it, not by position."""
    unused = list(results)
    pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for criterion in criteria:
        index = next((i for i, r in enumerate(unused) if r.get("criterion") == criterion), None)
        pairs.append((criterion, unused.pop(index) if index is not None else None))
    for result in unused:
        verified = result.get("criterion")
        pairs.append((verified if isinstance(verified, dict) else {}, result))
    return pairs


def _criteria_heading(text: Text, detail: dict[str, Any], verification: dict[str, Any]) -> None:
    """The heading with where verification stands (the verdict, or what it waits for), then
    when the results shown were taken: the heading line stays short enough not to wrap."""
    _heading(text, "acceptance criteria")
    stage = shown_stage(detail)
    state = verification_of(stage) if stage is not None else None
    results = verification.get("criteria_results") or []
    if state is not None:
        symbol, _style = look(state)
        text.append(f"  {symbol} {_VERIFICATION_STATES[state]}", style="bold yellow")
    elif verification:
        passed = sum(1 for r in results if r.get("passed"))
        unchecked = sum(1 for r in results if r.get("not_checked"))
        style = "green" if verification.get("passed") else "bold red"
        if verification.get("passed") and unchecked:
            style = "yellow"  # through, but not everything was checked
        text.append(f"  {passed} of {len(results)} passed", style=style)
        if unchecked:
            text.append(f", {unchecked} not checked", style="yellow")
    else:
        text.append("  not verified yet", style="dim")
    if verification:
        last = "last verified" if state is not None else "verified"
        text.append(f"\n  {last} at {_clock_time(verification.get('verified_at'))}", style="dim")
        if verification.get("attempt") is not None:
            text.append(f", attempt {shown(verification['attempt'])}", style="dim")


def _criterion_row(
    text: Text, criterion: dict[str, Any], result: dict[str, Any] | None, waiting: set[str]
) -> None:
    if result is None:
        mark, style, note = "…", "dim", "not verified yet"
    elif result.get("passed"):
        mark, style, note = "✓", "green", ""
    elif result.get("not_checked"):
        mark, style, note = "?", "yellow", "not checked"
    elif (command := criterion_command(criterion)) is not None and command.key in waiting:
        mark, style, note = "…", "bold yellow", "waits for approval"
    else:
        mark, style, note = "✗", "bold red", ""
    text.append(f"\n  {mark} ", style=style)
    what = criterion.get("description") or criterion.get("type") or "criterion"
    text.append(one_line(what, 120))
    if criterion.get("universal"):
        text.append("  universal", style="dim")
    if result is not None and (took := _duration(result.get("duration_ms"))):
        text.append(f"  {took}", style="dim")
    if note:
        text.append(f"  {note}", style=style)
    if result is not None:
        for line in _excerpt(result.get("output")):
            text.append(f"\n      {line}", style="dim")


def _criteria(text: Text, detail: dict[str, Any]) -> None:
    criteria = [c for c in detail.get("criteria") or [] if isinstance(c, dict)]
    verification = detail.get("verification") or {}
    results = [r for r in verification.get("criteria_results") or [] if isinstance(r, dict)]
    if not criteria and not results:
        return
    _criteria_heading(text, detail, verification)
    waiting = pending_commands(detail)
    keys = {command.key for command in waiting}
    for criterion, result in _pairs(criteria, results):
        _criterion_row(text, criterion, result, keys)
    if verification.get("override_applied"):
        text.append("\n  overridden", style="bold magenta")
        if verification.get("overridden_by"):
            text.append(f" by {one_line(verification['overridden_by'], 60)}", style="bold magenta")
        text.append(": ", style="bold magenta")
        text.append(one_line(verification.get("override_reason") or "", 300))
    if waiting:
        key = ACTIONS["approve_command"].key
        which = "the first (one at a time)" if len(waiting) > 1 else "it"
        text.append(f"\n  commands awaiting approval: {key} allows {which}", style="bold yellow")
        for command in waiting:
            text.append("\n    $ ", style="dim")
            text.append(one_line(command.display, 200))
            if command.shell:
                text.append("  (through a shell)", style="dim")


def render_gates(view: RunView | None) -> Text:
    """The panel's content for one run, or a hint when nothing is selected."""
    if view is None:
        return Text("No run selected.", style="dim")
    if view.detail is None:
        return Text(f"Run {shown(view.run_id)} is no longer in the store.", style="dim")
    detail = view.detail
    text = _run_header(detail)
    _gates(text, detail)
    # Verified after the gates: read next, before risk and the failure record that repeats it.
    _criteria(text, detail)
    _risk(text, detail)
    _failures(text, detail, view.peers)
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
