"""Secrets in what workers send are masked once, as it is stored, and the run is flagged.

Every reader — `jarvis show`, `runs`, `journal`, the console — then shows the same masked text,
and the secret is nowhere in the store. The flag names the kinds found, never the values.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.host.host import Host
from core.lifecycle import Action
from core.moves import host_move
from core.run_views import run_detail, run_summary
from core.verdicts import record_completion, record_stderr
from tests.cli.conftest import jarvis
from tests.host.inproc import host_in_process, write_progress

RUN = "secrets-run-1"
ANTHROPIC = "sk-ant-api03-" + "Qx7" * 31 + "AA"
PROJECT = "sk-proj-" + "Zq9_" * 30
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUgRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
AWS = "AKIA" + "Z7Q3XK5M2N8P4R6T"
SECRETS = (ANTHROPIC, PROJECT, JWT, AWS)
SHA = "3f9c0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b"
UUID = "123e4567-e89b-12d3-a456-426614174000"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with host_in_process(tmp_path / "ws", RUN) as made:
        yield made


def everything_stored(db: Path) -> str:
    """Every value in every table, as one text: what `sqlite3 jarvis.db .dump` would show."""
    conn = sqlite3.connect(db)
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


def test_progress_secrets_are_masked_when_stored_and_the_run_flagged(host: Host) -> None:
    assert host.store is not None
    write_progress(host, RUN, 1, f"calling the API with {ANTHROPIC}", tool_used=f"curl {JWT}")
    write_progress(host, RUN, 2, f"export OPENAI_KEY_VALUE {PROJECT} and {AWS}")
    write_progress(host, RUN, 3, f"at {SHA}, request {UUID}: all green")
    host.sweep()

    dump = everything_stored(host.store.path)
    for secret in SECRETS:
        assert secret not in dump, f"{secret[:12]}… is in the store"
    assert SHA in dump and UUID in dump  # look-alikes are kept as written

    detail = run_detail(host.store, RUN)
    assert detail is not None
    summaries = [e["summary"] for e in detail["events"]]
    assert summaries[0] == "calling the API with sk-a****"
    assert summaries[2] == f"at {SHA}, request {UUID}: all green"
    assert detail["events"][0]["tool_used"] == "curl eyJh****"
    assert detail["secrets_found"] == [
        "AWS access key id",
        "Anthropic API key",
        "JSON web token",
        "OpenAI API key",
    ]
    assert run_summary(host.store.get_run(RUN) or {})["secrets_found"] == detail["secrets_found"]
    flags = [
        json.loads(e["payload"])
        for e in host.store.journal_since(0, run_id=RUN)
        if e["kind"] == "secrets"
    ]
    assert [f["new"] for f in flags] == [
        ["Anthropic API key", "JSON web token"],
        ["AWS access key id", "OpenAI API key"],
    ]
    assert all(f["source"] == "progress" for f in flags)


def test_a_run_without_secrets_is_not_flagged(host: Host) -> None:
    assert host.store is not None
    write_progress(host, RUN, 1, f"checked out {SHA} for {UUID}")
    host.sweep()
    assert run_detail(host.store, RUN)["secrets_found"] == []  # type: ignore[index]
    kinds = {e["kind"] for e in host.store.journal_since(0, run_id=RUN)}
    assert "secrets" not in kinds


def test_completion_text_artifacts_and_gate_details_are_masked(host: Host) -> None:
    assert host.store is not None
    host_move(host.store, RUN, Action.START)
    output = (
        "done\n<completion>"
        + json.dumps(
            {
                "run_id": RUN,
                "branch": "jarvis-retry-counter",
                "commit_sha": f"not-a-sha {ANTHROPIC}",
                "files_changed": [f"config/{AWS}.env"],
                "test_result": f"42 passed; used token {PROJECT}",
                "risk": f"low, header Bearer {JWT}",
                "pr_skipped_reason": "no remote",
            }
        )
        + "</completion>\n"
    ).encode()
    record_completion(host.store, RUN, output)
    dump = everything_stored(host.store.path)
    for secret in SECRETS:
        assert secret not in dump, f"{secret[:12]}… is in the store"
    detail = run_detail(host.store, RUN)
    assert detail is not None and detail["gates"], detail
    assert detail["test_summary"] == "42 passed; used token sk-p****"
    assert "secret" not in detail["state"]
    assert set(detail["secrets_found"]) >= {"Anthropic API key", "OpenAI API key"}


def test_a_completion_whose_fields_hide_a_split_key_is_masked_and_flags_the_run(
    host: Host,
) -> None:
    """The completion block is JSON: a worker's escape reaches it as ``\\u001b``, six
    characters of text, and only the decoded fields (and a gate's quote of one) hold the key."""
    assert host.store is not None
    host_move(host.store, RUN, Action.START)
    split = f"{AWS[:8]}\x1b[0m{AWS[8:]}"
    fields = {
        "run_id": RUN, "branch": "jarvis-retry-counter", "commit_sha": f"abc1234 {split}",
        "files_changed": ["src/app.py"], "test_result": "42 passed", "risk": "low",
        "pr_skipped_reason": "no remote",
    }  # fmt: skip
    record_completion(host.store, RUN, f"<completion>{json.dumps(fields)}</completion>".encode())
    detail = run_detail(host.store, RUN)
    assert detail is not None
    assert detail["commit_sha"] == "abc1234 AKIA****"
    (gate,) = [g for g in detail["gates"] if g["name"] == "commit_sha_format"]
    assert "'abc1234 AKIA****'" in gate["detail"], gate
    assert detail["secrets_found"] == ["AWS access key id"]
    dump = everything_stored(host.store.path)
    assert AWS[8:] not in dump and AWS[4:8] not in dump


def test_stderr_secrets_flag_the_run(host: Host) -> None:
    assert host.store is not None
    tail = record_stderr(host.store, RUN, 1, f"KEY={ANTHROPIC}\nboom\n".encode(), 30, 1)
    assert ANTHROPIC not in tail
    assert run_detail(host.store, RUN)["secrets_found"] == ["Anthropic API key"]  # type: ignore[index]
    assert ANTHROPIC not in everything_stored(host.store.path)


def test_every_reader_shows_the_same_masked_text_and_the_flag(host: Host) -> None:
    assert host.store is not None
    write_progress(host, RUN, 1, f"calling the API with {ANTHROPIC}")
    host.sweep()
    ws = host.workspace.root
    outputs = {
        "show": jarvis("show", RUN, "--workspace", ws, "--json"),
        "runs": jarvis("runs", "--workspace", ws, "--json"),
        "journal": jarvis("journal", "--workspace", ws, "--json"),
        "show readable": jarvis("show", RUN, "--workspace", ws),
        "runs readable": jarvis("runs", "--workspace", ws),
        "journal readable": jarvis("journal", "--workspace", ws),
    }
    for name, result in outputs.items():
        assert result.code == 0, (name, result.stderr)
        assert ANTHROPIC not in result.stdout, name
        if name != "runs readable":  # its table cuts the summary at 80 columns
            # Readable output wraps long values at the terminal's width, between words.
            assert "calling the API with sk-a****" in " ".join(result.stdout.split()), name
    assert outputs["show"].json()["run"]["secrets_found"] == ["Anthropic API key"]
    (row,) = outputs["runs"].json()["runs"]
    assert row["secrets_found"] == ["Anthropic API key"]
    assert "secrets masked: Anthropic API key" in outputs["show readable"].stdout
    assert "⚠ secrets masked" in outputs["runs readable"].stdout
