"""`jarvis show`: what a run's agent spent, and the progress it reported."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.ipc.payloads import Usage
from core.ipc.progress_order import utc_text
from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.cli.conftest import jarvis
from tests.core.store_helpers import make_run

RUN = "r1"


def test_a_cost_under_a_cent_is_shown_as_what_it_was(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    make_run(store, RUN, RunState.RUNNING)
    with store.transaction() as tx:
        tx.record_usage(RUN, 1, 1, Usage(tokens_in=3_400, tokens_out=200, cost_usd=0.0042))
    store.close()
    shown = jarvis("show", RUN, "--workspace", ws)
    assert shown.code == 0, shown.stderr
    (used,) = [line for line in shown.stdout.splitlines() if line.startswith("  used")]
    assert used.split() == ["used", "3.4k", "in", "·", "200", "out", "·", "$0.004"], used
    # The JSON keeps the figure whole.
    usage = jarvis("show", RUN, "--workspace", ws, "--json").json()["run"]["usage"]
    assert usage["cost_usd"] == 0.0042


# -- the run's progress -------------------------------------------------------------------------

#: A summary as a hostile worker may write it: a forged line, a terminal's title and screen
#: sequences, markup, and a key.
FAKE_KEY = "sk-ant-api03-" + "Ab3dE5fG7h" * 9
HOSTILE = (
    f"ran tests\n  state                 done\x1b]0;owned\x07\x1b[2J [red]M[/] :warning: {FAKE_KEY}"
)


def add_events(ws: Path, run_id: str, events: list[tuple[int, str, str | None, str]]) -> None:
    """Record (attempt, phase, tool, summary) events, a second apart from 09:00:00 UTC, as
    ingesting them does (seq restarts with each attempt)."""
    store = SqliteStore(ws / "jarvis.db")
    seqs: dict[int, int] = {}
    with store.transaction() as tx:
        for n, (attempt, phase, tool, summary) in enumerate(events):
            seq = seqs[attempt] = seqs.get(attempt, -1) + 1
            stamp = datetime(2026, 11, 22, 9, 0, 0, tzinfo=UTC) + timedelta(seconds=n)
            tx.add_progress_event(
                run_id, attempt, seq, f"{seq:08d}.json",
                timestamp=stamp.isoformat().replace("+00:00", "Z"), at_utc=utc_text(stamp),
                phase=phase, summary=summary, tool_used=tool,
            )  # fmt: skip
    store.close()


@pytest.fixture
def busy(tmp_path: Path) -> Path:
    """A workspace whose run reported 25 events: 10 in its first attempt, 15 in its second."""
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    make_run(store, RUN, RunState.RUNNING)
    store.close()
    events = [(1, "editing", "Write", f"first try, step {i}") for i in range(10)]
    events += [(2, "testing", "Bash" if i % 2 else None, f"second try, step {i}")
               for i in range(15)]  # fmt: skip
    add_events(ws, RUN, events)
    return ws


def progress_rows(stdout: str) -> list[list[str]]:
    """The cells of the readable progress table's rows, in order."""
    lines = stdout.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("progress")))
    rows = []
    for line in lines[start + 4 :]:  # past the title and the header's lines
        if not line.startswith("│"):
            break
        rows.append([cell.strip() for cell in line.strip("│").split("│")])
    return rows


def test_show_lists_the_latest_20_progress_events_newest_last(busy: Path) -> None:
    shown = jarvis("show", RUN, "--workspace", busy)
    assert shown.code == 0, shown.stderr
    rows = progress_rows(shown.stdout)
    # time, attempt, phase, tool, summary: the last 20 of 25, oldest of them first.
    assert [row[0] for row in rows] == [f"09:00:{s:02d}" for s in range(5, 25)]
    assert rows[0] == ["09:00:05", "1", "editing", "Write", "first try, step 5"]
    assert rows[5] == ["09:00:10", "2", "testing", "", "second try, step 0"]
    assert rows[-1] == ["09:00:24", "2", "testing", "", "second try, step 14"]
    assert rows[-2][3] == "Bash"
    # It says how many more there are, and how to list them.
    assert "5 earlier event(s) not listed: --events 25 lists them all" in shown.stdout


def test_events_n_lists_more_or_fewer_and_0_none(busy: Path) -> None:
    every = progress_rows(jarvis("show", RUN, "--events", "30", "--workspace", busy).stdout)
    assert len(every) == 25 and every[0][4] == "first try, step 0"
    three = jarvis("show", RUN, "--events", "3", "--workspace", busy).stdout
    assert [row[4] for row in progress_rows(three)] == [
        "second try, step 12", "second try, step 13", "second try, step 14"
    ]  # fmt: skip
    assert "22 earlier event(s) not listed" in three
    none = jarvis("show", RUN, "--events", "0", "--workspace", busy)
    assert none.code == 0 and not any(
        line.startswith("progress") for line in none.stdout.splitlines()
    )
    assert "earlier event(s)" not in none.stdout and "audit" in none.stdout


def test_the_json_keeps_its_shape_and_events_bounds_it(busy: Path) -> None:
    run = jarvis("show", RUN, "--workspace", busy, "--json").json()["run"]
    # Without --events, as before: up to 50, oldest first, each with its attempt.
    assert len(run["events"]) == 25 and run["events_count"] == 25
    assert run["events"][0] == {"attempt": 1, "seq": 0, "timestamp": "2026-11-22T09:00:00Z",
                                "phase": "editing", "summary": "first try, step 0",
                                "tool_used": "Write"}  # fmt: skip
    run = jarvis("show", RUN, "--events", "2", "--workspace", busy, "--json").json()["run"]
    assert [e["summary"] for e in run["events"]] == ["second try, step 13", "second try, step 14"]
    assert run["events_count"] == 25
    run = jarvis("show", RUN, "--events", "0", "--workspace", busy, "--json").json()["run"]
    assert run["events"] == [] and run["events_count"] == 25


@pytest.mark.parametrize("value", ["-1", "10001", "many", "2.5", ""])
def test_a_bad_events_count_is_a_usage_error(busy: Path, value: str) -> None:
    readable = jarvis("show", RUN, "--events", value, "--workspace", busy)
    assert readable.code == 2 and readable.stdout == "", readable.stdout
    # A sentence naming the option (after the command's usage line when it does not parse).
    said = [line for line in readable.stderr.splitlines() if line.startswith("jarvis: ")]
    assert len(said) == 1 and "--events" in said[0], readable.stderr
    assert "Traceback" not in readable.stderr
    as_json = jarvis("show", RUN, "--events", value, "--workspace", busy, "--json")
    assert as_json.code == 2 and as_json.json()["error"]["code"] == "usage"


def test_a_workers_text_in_the_progress_is_inert_and_masked(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    make_run(store, RUN, RunState.RUNNING)
    store.close()
    add_events(ws, RUN, [(1, HOSTILE, HOSTILE, HOSTILE)])
    out = jarvis("show", RUN, "--workspace", ws).stdout
    assert "\x1b" not in out and "\x07" not in out
    # The worker's new line starts no line of ours: no forged "state" field.
    assert not any(line.lstrip(" │").startswith("state ") for line in out.splitlines())
    flat = "".join(line.strip(" │") for line in out.splitlines())
    assert "ran tests\\n  state" in flat and "\\x1b]0;owned\\x07" in flat
    assert "[red]M[/]" in flat and ":warning:" in flat
    assert FAKE_KEY not in out and "sk-a****" in out
    shown = jarvis("show", RUN, "--workspace", ws, "--json")
    (event,) = shown.json()["run"]["events"]
    assert FAKE_KEY not in shown.stdout and "\\u001b]0;owned" in shown.stdout
    assert event["summary"].startswith("ran tests\n  state")
