"""A secret split by an escape sequence is still a secret: masked when stored and when shown.

A worker that colours half of a key (``AKIAIOSF\\x1b[0mODNN7EXAMPLE``) hides it from a scanner
that reads the text as written, while a terminal, or a reader of the escaped text, puts it back
together. A real host runs such a worker: its progress, its stderr and its completion carry an
AWS key id and a GitHub token split by colour codes, a title sequence and a bell. Every reader
(`jarvis show`, `runs`, `journal`, readable and ``--json``) must show the masked form, no piece
of either secret past the four characters a mask keeps, and the run must be flagged for both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.host.hostkit import (
    cli,
    connect,
    running_host,
    script_workspace,
    wait_for_states,
)
from tests.jarvis_cli import jarvis

pytestmark = pytest.mark.slow

RUN = "split-secret-1"
AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
#: Each secret as a worker may split it, and the pieces no reader may show. The first four
#: characters survive a mask (``AKIA****``); every later piece of the secret must not.
SPLITS = {
    "colour": (f"{AWS[:8]}\x1b[0m{AWS[8:]}", f"{GITHUB[:10]}\x1b[31m{GITHUB[10:]}\x1b[0m"),
    "title": (f"{AWS[:8]}\x1b]0;x\x07{AWS[8:]}", f"{GITHUB[:10]}\x1b]0;x\x1b\\{GITHUB[10:]}"),
    "bell": (f"{AWS[:8]}\x07{AWS[8:]}", f"{GITHUB[:10]}\x00{GITHUB[10:]}"),
}
PIECES = (AWS[4:8], AWS[8:], GITHUB[4:10], GITHUB[10:])
MASKED = ("AKIA****", "ghp_****")

WORKER = r"""
import json, os, sys, time
splits = json.loads(os.environ["SPLIT_SECRETS"])
progress = os.environ["JARVIS_PROGRESS_DIR"]
seq = 0
for name, (aws, github) in splits.items():
    seq += 1
    doc = {"kind": "worker_progress", "run_id": os.environ["JARVIS_RUN_ID"],
           "group_folder": os.environ["JARVIS_LANE"],
           "timestamp": "2026-11-22T00:00:%02d.000Z" % seq, "phase": "testing",
           "summary": f"{aws} via {github} ({name})", "tool_used": f"curl -H {github}",
           "seq": seq}
    tmp = os.path.join(progress, f".{seq}.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, os.path.join(progress, f"{seq:04d}.json"))
    sys.stderr.write(f"export AWS_KEY={aws} GH={github}\n")
dispatch = json.loads(os.environ["JARVIS_DISPATCH"])
aws, github = splits["colour"]
print("<completion>")
print(json.dumps({"run_id": dispatch["run_id"], "branch": dispatch["branch"],
                  "commit_sha": f"abc1234 {aws}", "files_changed": [f"keys/{aws}.env"],
                  "test_result": f"passed with {aws}", "risk": f"token {github} in a test",
                  "pr_skipped_reason": f"no remote; {splits['title'][1]}"}))
print("</completion>")
"""


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # The host passes its environment on to its workers: how the texts reach the worker.
    monkeypatch.setenv("SPLIT_SECRETS", json.dumps(SPLITS))
    monkeypatch.setenv("COLUMNS", "400")  # readable output wide enough to hold every summary
    return script_workspace(tmp_path, WORKER, RUN)


def leaked(output: str) -> list[str]:
    """The pieces of a secret ``output`` shows: what a reader could put back together."""
    return [piece for piece in PIECES if piece in output]


def test_split_secrets_are_masked_by_every_reader_and_flag_the_run(ws: Path) -> None:
    conn = connect(ws)
    with running_host(ws) as host:
        # Its commit_sha quotes a key, so the gates refuse it, quoting the value in their detail.
        wait_for_states(conn, {RUN: "failed_contract"}, 60, host)
    conn.close()

    code, shown = cli(ws, "show", RUN)
    assert code == 0
    run = shown["run"]
    assert run["secrets_found"] == ["AWS access key id", "GitHub token"]
    assert [e["summary"] for e in run["events"]] == [
        f"AKIA**** via ghp_**** ({name})" for name in SPLITS
    ]
    assert run["test_summary"] == "passed with AKIA****"
    assert run["risk_summary"] == "token ghp_**** in a test"
    assert run["commit_sha"] == "abc1234 AKIA****"
    (sha_gate,) = [g for g in run["gates"] if g["name"] == "commit_sha_format"]
    assert "'abc1234 AKIA****'" in sha_gate["detail"]

    outputs = {}
    for command in (("show", RUN), ("runs",), ("journal",)):
        for form in ((), ("--json",)):
            ran = jarvis(*command, "--workspace", ws, *form)
            assert ran.code == 0, (command, form, ran.stderr)
            outputs[" ".join((*command, *form))] = ran.stdout
    for name, output in outputs.items():
        assert not leaked(output), f"{name} shows {leaked(output)}"
        assert GITHUB[:10] not in output and AWS[:8] not in output, name
        for masked in MASKED:
            assert masked in output, f"{name} does not show {masked}"
