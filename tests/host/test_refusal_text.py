"""A refused dispatch's reason says each thing once: where the host keeps it (the store, the
reason file beside the quarantined file, `jarvis errors`) and where `jarvis dispatch` prints it.

A duplicate's one field error is the refusal's own sentence; joined to it, the operator read
the sentence twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.host.host import Host
from core.ipc.files import atomic_write_json
from core.run_views import run_detail
from tests.cli.conftest import jarvis
from tests.conftest import SAMPLES
from tests.core.store_helpers import dispatch_doc
from tests.host.inproc import LANE, host_in_process

RUN = "dup-run-1"
SENTENCE = f"Run {RUN} already exists and is queued; a duplicate is blocked"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with host_in_process(tmp_path / "ws", RUN) as made:
        yield made


@pytest.mark.parametrize(
    ("where", "content"),
    [
        pytest.param(
            "main/messages/again.json",
            {
                "type": "message",
                "chatJid": f"{LANE}@nanoclaw",
                "text": json.dumps(dispatch_doc(RUN)),
            },
            id="a-message",
        ),  # fmt: skip
        pytest.param(
            "main/tasks/again.json",
            {"type": "dispatch", "target": LANE, "payload": dispatch_doc(RUN)},
            id="a-dispatch-task",
        ),
    ],
)
def test_a_refused_duplicates_reason_is_said_once(
    host: Host, where: str, content: dict[str, object]
) -> None:
    assert host.store is not None
    path = host.layout.root / where
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, content)
    host.sweep()
    (refused,) = run_detail(host.store, RUN)["quarantined"]  # type: ignore[index]
    assert refused["code"] == "dispatch_duplicate", refused
    assert refused["message"].count(SENTENCE) == 1, refused["message"]
    (reason,) = host.layout.errors_dir.glob("*.reason.json")
    assert json.loads(reason.read_text())["message"].count(SENTENCE) == 1
    shown = jarvis("errors", "--workspace", host.workspace.root)
    assert shown.code == 0 and _flat(shown.stdout).count(SENTENCE) == 1, shown.stdout


def test_dispatch_prints_a_duplicates_reason_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    fix = SAMPLES / "dispatches/valid-backend-fix.json"
    assert jarvis("dispatch", fix, "--workspace", ws).code == 0
    again = jarvis("dispatch", fix, "--workspace", ws)
    assert again.code == 1
    sentence = "Run task-20260222-014 already exists and is queued; a duplicate is blocked"
    assert _flat(again.stdout).count(sentence) == 1, again.stdout
    # The JSON keeps the field's error whole: a script reads the code there.
    out = jarvis("dispatch", fix, "--workspace", ws, "--json").json()
    assert out["outcome"] == "duplicate"
    assert [(e["field"], e["code"]) for e in out["errors"]] == [("run_id", "duplicate_run")]


def _flat(text: str) -> str:
    """Readable output as one line: a sentence a table wrapped is whole again."""
    return " ".join(" ".join(line.strip(" │") for line in text.splitlines()).split())
