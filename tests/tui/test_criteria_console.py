"""Acceptance criteria in the console: the gates panel's results, verifying again with ``v``, and
allowing a waiting command with ``A``, each against a store the real verification filled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.text import Text

from core.criteria import run_criteria
from core.lifecycle import STAGES, RunState, VerificationState
from core.service.actions import availability
from core.service.criteria import pending_commands
from core.store.sqlite_store import SqliteStore
from jarvis_tui.app import JarvisApp
from jarvis_tui.commands import JarvisCommands
from jarvis_tui.feed import RunView
from jarvis_tui.modals.allow_command_dialog import AllowCommandDialog
from jarvis_tui.modals.help_screen import HELP, HelpScreen
from jarvis_tui.screens.main_screen import MainScreen
from jarvis_tui.state_look import STATE_LOOK
from jarvis_tui.widgets.gate_panel import GatePanel, render_gates
from jarvis_tui.widgets.progress_stream import ProgressStream
from tests.tui.conftest import HOSTILE
from tests.tui.criteria_store import INSTALL_GUIDE, build_criteria_store, checkout
from tests.tui.helpers import (
    console_on,
    make_app,
    read_run,
    select,
    settle,
    table,
    wait_for,
    wait_for_palette_hit,
)

SMOKE_KEY = json.dumps(["./scripts/smoke.sh", "--fast"])


@pytest.fixture
def criteria_db(tmp_path: Path) -> Path:
    """The workspace store with ``run-criteria`` (failed by its criteria) and ``run-approval``
    (waiting for a command to be allowed)."""
    return build_criteria_store(tmp_path / "jarvis.db")


def latest(db: Path, run_id: str) -> dict[str, object] | None:
    store = SqliteStore(db, migrate=False)
    try:
        return run_criteria.latest_results(store, run_id)
    finally:
        store.close()


def panel_text(app: JarvisApp) -> str:
    return app.main.query_one(GatePanel).shown.plain


async def test_a_run_failed_by_its_criteria_shows_each_verdict_with_its_output(
    criteria_db: Path,
) -> None:
    async with console_on(criteria_db, "run-criteria") as (app, pilot):
        text = panel_text(app)
        assert "completion gates (attempt 1)\n  ✓ 9 of 9 passed\n" in text  # the gates let it on
        assert "acceptance criteria  1 of 3 passed\n  verified at " in text
        assert ", attempt 1\n  ✗ The install guide exists" in text
        assert "✗ The install guide exists  3 ms" in text
        assert "✗ It has an Installation section  5 ms" in text
        assert "✓ The README is kept  7 ms" in text
        assert "      missing: docs/install.md" in text  # the output excerpt, under its row
        assert "      file exists: README.md" in text
        assert "v verify" in text and "allow command" not in text  # nothing waits
        # The criteria come right after the completion gates, before the failure record.
        assert text.index("\nacceptance criteria") < text.index("\nfailures")


async def test_v_verifies_again_records_new_results_and_notifies(criteria_db: Path) -> None:
    async with console_on(criteria_db, "run-criteria") as (app, pilot):
        before = latest(criteria_db, "run-criteria")
        assert before is not None and before["passed"] is False
        guide = checkout(criteria_db.parent, "run-criteria") / "docs" / "install.md"
        guide.parent.mkdir(parents=True)
        guide.write_text(INSTALL_GUIDE)
        await pilot.press("v")
        await wait_for(pilot, lambda: any(n[0] == "Verified" for n in app.notes))
        after = latest(criteria_db, "run-criteria")
        assert after is not None and after["passed"] is True
        assert after["verified_at"] != before["verified_at"]
        note = next(n for n in app.notes if n[0] == "Verified")
        assert note[1] == (
            "Run run-criteria: 3 of 3 criteria passed, 0 failed; "
            "it stays failed (override it if the work is done)."
        )
        # Decided runs keep their state: the operator reads the results and may override.
        assert read_run(criteria_db, "run-criteria")["state"] == "failed"
        await wait_for(pilot, lambda: "3 of 3 passed" in panel_text(app))
        assert "✓ The install guide exists" in panel_text(app)


async def test_a_waiting_command_is_listed_and_allowed_after_seeing_its_argv(
    criteria_db: Path,
) -> None:
    async with console_on(criteria_db, "run-approval") as (app, pilot):
        text = panel_text(app)
        assert "awaiting approval" in text
        assert "… The smoke script passes" in text and "waits for approval" in text
        assert "commands awaiting approval: A allows it" in text
        assert "$ ./scripts/smoke.sh --fast" in text
        assert "A allow command" in text
        await pilot.press("A")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, AllowCommandDialog)
        body = str(dialog.query_one("#allow-body").render())
        assert '["./scripts/smoke.sh", "--fast"]' in body
        assert "The smoke script passes" in body
        await pilot.press("y")
        await wait_for(
            pilot, lambda: read_run(criteria_db, "run-approval")["verification_state"] == "pending"
        )
        run = read_run(criteria_db, "run-approval")
        assert json.loads(run["approved_commands"]) == [SMOKE_KEY]
        assert run["state"] == "running"
        await wait_for(pilot, lambda: any(n[0] == "Done" for n in app.notes))
        done = next(n for n in app.notes if n[0] == "Done")
        assert SMOKE_KEY in done[1] and "press v to verify it now" in done[1]
        await wait_for(pilot, lambda: "pending verification" in panel_text(app))
        assert "commands awaiting approval" not in panel_text(app)


async def test_allowing_a_command_after_the_run_moved_on_is_refused_as_stale(
    criteria_db: Path,
) -> None:
    async with console_on(criteria_db, "run-approval") as (app, pilot):
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, AllowCommandDialog)
        # While the dialog is up, a colleague allows it from the command line: the run moves on.
        store = SqliteStore(criteria_db)
        try:
            assert run_criteria.approve_command(store, "run-approval", SMOKE_KEY, "colleague").ok
        finally:
            store.close()
        await pilot.press("y")
        await wait_for(pilot, lambda: any(n[0].startswith("Refused") for n in app.notes))
        refused = next(n for n in app.notes if n[0].startswith("Refused"))
        assert refused[0] == "Refused (stale_version)"
        assert "it is now running (pending)" in refused[1]
    store = SqliteStore(criteria_db)
    try:
        allowed = store.rows("SELECT actor FROM audit WHERE run_id = 'run-approval' "
                             "AND action = 'approve_command'")  # fmt: skip
    finally:
        store.close()
    assert allowed == [{"actor": "colleague"}]


async def test_backing_out_of_the_dialog_allows_nothing(criteria_db: Path) -> None:
    async with console_on(criteria_db, "run-approval") as (app, pilot):
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, AllowCommandDialog)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        await settle(pilot)
        run = read_run(criteria_db, "run-approval")
        assert run["verification_state"] == "awaiting_approval"
        assert run["approved_commands"] is None


@pytest.mark.parametrize(
    ("run_id", "key", "title", "reason"),
    [
        ("run-done", "v", "Verify: not possible", "has no acceptance criteria to verify"),
        # The lifecycle's sentence: allowing a command is a move of verification.
        ("run-criteria", "A", "Allow command: not possible", "only when it is running (awaiting"),
        ("run-done", "A", "Allow command: not possible", "only when it is running (awaiting"),
    ],
)
async def test_a_key_that_cannot_act_says_why(
    criteria_db: Path, run_id: str, key: str, title: str, reason: str
) -> None:
    app = make_app(criteria_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await select(pilot, run_id)
        before = latest(criteria_db, run_id)
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert any(n[0] == title and reason in n[1] for n in app.notes), app.notes
        await settle(pilot)
        assert latest(criteria_db, run_id) == before


async def test_verify_is_refused_while_the_host_verifies(criteria_db: Path) -> None:
    store = SqliteStore(criteria_db)
    try:  # allowed, then picked up by a host that has not finished
        assert run_criteria.approve_command(store, "run-approval", SMOKE_KEY, "night-operator").ok
        assert run_criteria.begin(store, "run-approval") is not None
    finally:
        store.close()
    async with console_on(criteria_db, "run-approval", size=(80, 24)) as (app, pilot):
        assert "verifying now" in panel_text(app)
        await pilot.press("v")
        await pilot.pause()
        assert any(
            n[0] == "Verify: not possible" and "being verified by the host" in n[1]
            for n in app.notes
        )


def detail_with(**changes: object) -> dict[str, object]:
    criterion = {"type": "command_success", "command": ["make", "check"],
                 "description": f"checks {HOSTILE}", "universal": False}  # fmt: skip
    detail: dict[str, object] = {
        "run_id": "run-x",
        "state": "failed",
        "criteria": [criterion],
        "verification_state": None,
        "approved_commands": [],
        "verification": {
            "attempt": 2,
            "verified_at": "2026-01-02T10:00:05.000Z",
            "passed": False,
            "criteria_results": [
                {
                    "criterion": criterion,
                    "passed": False,
                    "output": "exit status 2\nline one\n\n\x1b[31mred [bold]x[/]\x1b[0m\r\n"
                    "token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB\n",
                    "duration_ms": 2345,
                }
            ],
        },
    }
    detail.update(changes)
    return detail


def awaiting(**changes: object) -> dict[str, object]:
    """`detail_with` for a run whose verification waits for a command's approval."""
    return detail_with(state="running", verification_state="awaiting_approval", **changes)


def test_output_excerpts_are_the_last_two_lines_inert_and_masked() -> None:
    text = render_gates(RunView("run-x", detail_with()))
    plain = text.plain
    assert "✗ checks [bold red]x[/] \\x1b[2J  2.3 s" in plain
    assert "      \\x1b[31mred [bold]x[/]\\x1b[0m" in plain  # escapes shown, never sent
    assert "      token ghp_****" in plain and "ghp_1234567890abcdef" not in plain  # masked
    assert "line one" not in plain and "exit status 2" not in plain  # only the last two lines
    assert "\x1b" not in plain and "\r" not in plain
    assert isinstance(text, Text)


def test_an_override_says_who_and_why() -> None:
    verification = detail_with()["verification"]
    assert isinstance(verification, dict)
    verification.update(
        override_applied=True,
        override_reason="criteria were wrong",
        overridden_by="night-operator",
        overridden_at="2026-01-02T10:10:00Z",
    )
    plain = render_gates(RunView("run-x", detail_with(verification=verification))).plain
    assert "overridden by night-operator: criteria were wrong" in plain


def test_criteria_not_verified_yet_are_listed_with_an_ellipsis() -> None:
    detail = detail_with(verification=None, state="queued")
    plain = render_gates(RunView("run-x", detail)).plain
    assert "acceptance criteria  not verified yet\n  … checks" in plain
    assert "… checks [bold red]x[/] \\x1b[2J  not verified yet" in plain


def test_availability_of_the_criteria_actions() -> None:
    assert availability("verify", detail_with()).enabled
    no_criteria = availability("verify", detail_with(criteria=[]))
    assert not no_criteria.enabled and "no acceptance criteria" in no_criteria.reason
    # A table row carries no criteria: the answer waits for the run's detail.
    assert not availability("verify", {"run_id": "run-x", "state": "failed"}).enabled
    assert not availability("approve_command", detail_with()).enabled
    assert availability("approve_command", awaiting()).enabled
    # A leftover outside running is no stage of verification: nothing waits there.
    assert not availability(
        "approve_command", detail_with(verification_state="awaiting_approval")
    ).enabled


def test_pending_commands_come_from_the_latest_verification_minus_approved() -> None:
    waiting = awaiting()
    [command] = pending_commands(waiting)
    assert command.argv == ["make", "check"] and command.key == json.dumps(["make", "check"])
    approved = awaiting(approved_commands=[command.key])
    assert pending_commands(approved) == []
    assert pending_commands(detail_with()) == []  # not waiting: nothing to allow


async def test_the_palette_offers_both_actions_and_says_why_not(criteria_db: Path) -> None:
    async with console_on(criteria_db, "run-approval") as (app, pilot):
        offered = {title: help_text for title, help_text, _ in JarvisCommands._commands(
            JarvisCommands(app.screen), app.main)}  # fmt: skip
        assert offered["Run: Verify run-approval"] == "key v"
        assert offered["Run: Allow command run-approval"] == "key A"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"allow command")
        await wait_for_palette_hit(pilot, "Allow command")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, AllowCommandDialog)
        await pilot.press("escape")
        await select(pilot, "run-done")
        offered = {title: help_text for title, help_text, _ in JarvisCommands._commands(
            JarvisCommands(app.screen), app.main)}  # fmt: skip
        assert "no acceptance criteria" in offered["Run: Verify run-done"]


async def test_v_on_a_run_waiting_for_approval_counts_what_waits(criteria_db: Path) -> None:
    async with console_on(criteria_db, "run-approval", size=(80, 24)) as (app, pilot):
        await pilot.press("v")
        await wait_for(pilot, lambda: any(n[0] == "Verified" for n in app.notes))
        note = next(n for n in app.notes if n[0] == "Verified")
        assert note[1] == (
            "Run run-approval: 1 of 2 criteria passed, 0 failed, "
            "1 waiting for your approval (A); it stays running."
        )
        run = read_run(criteria_db, "run-approval")
        assert run["verification_state"] == "awaiting_approval"  # the command still was not run


async def test_the_stage_of_verification_is_shown_with_the_lifecycles_symbols(
    criteria_db: Path,
) -> None:
    # Every symbol comes from the one look per stage of `core.lifecycle.STAGES`.
    assert list(STATE_LOOK) == list(STAGES)
    waits, _style = STATE_LOOK[VerificationState.AWAITING_APPROVAL]
    running, _style = STATE_LOOK[RunState.RUNNING]
    async with console_on(criteria_db, "run-approval", size=(160, 48)) as (app, pilot):
        runs = table(app)
        drawn = [runs.render_line(y).text for y in range(runs.row_count)]
        row = next(text for text in drawn if text.startswith("run-approval"))
        assert f"{running} running {waits} " in row, row  # the table: its symbol beside running
        text = panel_text(app)
        assert f"{running} running {waits} awaiting_approval" in text
        assert f"acceptance criteria  {waits} awaiting approval" in text
        await wait_for(pilot, lambda: bool(app.main.query_one(ProgressStream).shown_lines))
        stream = "\n".join(app.main.query_one(ProgressStream).shown_lines)
        # Each move of verification is a transition of the journal, drawn as any other.
        pending, verifying = (
            STATE_LOOK[s][0] for s in (VerificationState.PENDING, VerificationState.VERIFYING)
        )
        assert f"{pending} await_verification: running → running (pending)" in stream, stream
        assert f"{verifying} start_verification: running (pending) → running (verifying)" in stream
        assert (
            f"{waits} await_approval: running (verifying) → running (awaiting_approval)" in stream
        )
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
    # The help says what each symbol of verification means (the header says the states').
    legend = "\n".join(what for _section, keys in HELP for _key, what in keys)
    for stage in (RunState.RUNNING, *VerificationState):
        assert f"{STATE_LOOK[stage][0]} {stage.value}" in legend, stage
