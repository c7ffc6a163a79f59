"""A stand-in for NanoClaw's container runner, run as a plain process the way Jarvis runs one.

It does what the real agent runner (``container/agent-runner/src/index.ts``) does around its
agent, in the same formats:

- reads its task as one JSON object on stdin until end of file, and records it (the raw text,
  its environment's ``NANOCLAW_IPC_DIR`` and its working directory) to ``$FIXTURE_RECORD``;
- deletes a stale ``input/_close`` at start-up;
- writes progress events to ``<ipc>/progress/<runId>/<timestamp with - for : and .>-<seq>.json``,
  compact, written directly (no temp file), as the runner with ``workerSteeringEnabled`` does;
  ``seq`` starts at 0, as the real runner's does;
- edits a file and commits it in its working directory (the run's worktree);
- prints its output framed: a log line, the answer (with the completion block) in one frame,
  then a session-update frame with a null result;
- then waits, as the real runner's agent does, for ``input/_close`` (deleted once seen) and
  exits 0.

Behaviour from the task: ``NC:error`` prints an error frame and exits 1 (as the runner does
when its agent fails); ``NC:garbage`` adds broken frames and log around the good ones;
``NC:steer`` waits, after its first event, for a steer in ``<ipc>/steer/<runId>.json``, and takes
it as the runner's ``checkForSteering`` does (at 0779be9): the ack ``{"steer_id","acked_at"}``
written in place to ``<runId>.acked.json``, the steer file removed, the message a new query
(its events numbered from 0 again, the first one quoting it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

START = "---NANOCLAW_OUTPUT_START---"
END = "---NANOCLAW_OUTPUT_END---"
IDENTITY = {
    "GIT_AUTHOR_NAME": "nanoclaw fixture",
    "GIT_AUTHOR_EMAIL": "nanoclaw@localhost",
    "GIT_COMMITTER_NAME": "nanoclaw fixture",
    "GIT_COMMITTER_EMAIL": "nanoclaw@localhost",
}
#: The longest the fixture waits for ``_close`` before giving up (a test's hang guard).
CLOSE_WAIT_S = 120.0
SESSION = "fixture-session-0001"


def iso_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def output(doc: dict[str, object]) -> None:
    """One frame, as the runner's ``writeOutput`` prints it."""
    print(START, flush=True)
    print(json.dumps(doc, separators=(",", ":")), flush=True)
    print(END, flush=True)


def progress(ipc: Path, task: dict[str, object], seq: int, phase: str, summary: str,
             tool: str | None = None) -> None:  # fmt: skip
    """A progress event, written directly (``writeFileSync``), compact."""
    timestamp = iso_now()
    event: dict[str, object] = {
        "kind": "worker_progress", "run_id": task["runId"], "group_folder": task["groupFolder"],
        "timestamp": timestamp, "phase": phase, "summary": summary,
    }  # fmt: skip
    if tool is not None:
        event["tool_used"] = tool
    event["seq"] = seq
    folder = ipc / "progress" / str(task["runId"])
    folder.mkdir(parents=True, exist_ok=True)
    name = timestamp.replace(":", "-").replace(".", "-") + f"-{seq}.json"
    (folder / name).write_text(json.dumps(event, separators=(",", ":")), "utf-8")


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **IDENTITY})  # fmt: skip
    return done.stdout.strip()


def prompt_line(prompt: str, label: str) -> str:
    for line in prompt.splitlines():
        if line.startswith(label):
            return line[len(label) :].strip()
    raise SystemExit(f"[agent-runner] the prompt has no {label!r} line")


def take_steer(ipc: Path, run_id: str) -> str | None:
    """Wait for the run's steer and take it, as ``checkForSteering`` does."""
    steer = ipc / "steer" / f"{run_id}.json"
    deadline = time.monotonic() + CLOSE_WAIT_S
    while time.monotonic() < deadline:
        try:
            event = json.loads(steer.read_text("utf-8"))
        except (OSError, ValueError):
            time.sleep(0.05)
            continue
        ack = {"steer_id": event["steer_id"], "acked_at": iso_now()}
        (ipc / "steer" / f"{run_id}.acked.json").write_text(
            json.dumps(ack, separators=(",", ":")), "utf-8"
        )
        steer.unlink(missing_ok=True)
        print(f"[agent-runner] Steering received (steer_id={event['steer_id']})", file=sys.stderr)
        return str(event["message"])
    return None


def wait_for_close(ipc: Path) -> bool:
    close = ipc / "input" / "_close"
    deadline = time.monotonic() + CLOSE_WAIT_S
    while time.monotonic() < deadline:
        if close.exists():
            close.unlink()
            return True
        time.sleep(0.05)
    return False


def main() -> int:
    raw = sys.stdin.read()  # the host closes stdin after the one object
    task = json.loads(raw)
    ipc = Path(os.environ.get("NANOCLAW_IPC_DIR", "/workspace/ipc"))
    record = os.environ.get("FIXTURE_RECORD")
    if record:
        Path(record).write_text(json.dumps({"stdin": raw, "ipc": str(ipc), "cwd": os.getcwd()}))
    (ipc / "input" / "_close").unlink(missing_ok=True)  # a stale sentinel from an earlier run
    prompt = str(task["prompt"])
    seq = 0
    print("[agent-runner] Received input for group: " + str(task["groupFolder"]), file=sys.stderr)
    if "NC:error" in prompt:
        progress(ipc, task, seq, "thinking", "Looking at the task")
        error = "Claude Code process exited with code 1: \x1b[31mrate limited"
        output({"status": "error", "result": None, "error": error})
        return 1
    progress(ipc, task, seq, "thinking", "I'll add the retry to src/retry.py")
    if "NC:steer" in prompt:
        message = take_steer(ipc, str(task["runId"]))
        if message is None:
            output({"status": "error", "result": None, "error": "no steer came"})
            return 1
        # The steer is a new query: its events count from 0 again, the next one 1.
        progress(ipc, task, 0, "thinking", f"Steered: {message}"[:100])
    Path("src").mkdir(exist_ok=True)
    Path("src/retry.py").write_text("RETRIES = 2\n")
    progress(ipc, task, seq + 1, "using Bash", "Tool: Bash", "Bash")
    git("add", "src/retry.py")
    git("commit", "--quiet", "-m", "Retry twice")
    completion = {
        "run_id": task["runId"],
        "branch": prompt_line(prompt, "Branch:"),
        "commit_sha": git("rev-parse", "HEAD"),
        "files_changed": ["src/retry.py"],
        "test_result": "pytest tests/test_retry.py: 3 passed",
        "risk": "low: one constant",
        "pr_skipped_reason": "PR creation not requested",
        "session_id": SESSION,
    }
    answer = f"<completion>{json.dumps(completion)}</completion>"
    print("[agent-runner] Query done", flush=True)
    if "NC:garbage" in prompt:
        print(START + "\nnot json\n" + END, flush=True)
        print(START + '\n{"status": "success", "resu', flush=True)  # its end is lost
    output({"status": "success", "result": answer, "newSessionId": SESSION})
    output({"status": "success", "result": None, "newSessionId": SESSION})
    closed = wait_for_close(ipc)
    if record:
        seen = json.loads(Path(record).read_text())
        Path(record).write_text(json.dumps({**seen, "closed": closed}))
    return 0 if closed else 3


if __name__ == "__main__":
    sys.exit(main())
