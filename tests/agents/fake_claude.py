"""A stand-in for the ``claude`` program, speaking its stream-json output: it really edits and
commits in its working directory (the run's worktree), then reports what it did the way Claude
Code's ``-p --output-format stream-json --verbose`` does. Used to test the runner, the adapter
and the host together; the real agent end to end is tested apart.

Behaviour from the prompt: ``FAKE:silent`` prints no completion (Jarvis composes one from
git); ``FAKE:garbage`` mixes in unreadable lines and an escape sequence; a resumed session
(``--resume ID``) answers the steer it was given in one short turn; ``FAKE:await-steer`` ends
its first turn only once a steer file exists; ``FAKE:hugeline`` prints a 100 MiB line first;
``FAKE:hang`` never ends its turn; ``FAKE:usage-overflow`` reports 2^63 - 1 input tokens;
``FAKE:spend`` never ends its turn either, but goes on calling its model: every
``FAKE_STREAM_INTERVAL_MS`` one more call (message ``msg_N``, 900 + N tokens in, 40 out, its
usage repeated on each of the call's two lines, as Claude Code prints a message of two blocks).

From the environment: ``FAKE_ARGV_FILE`` receives its command line; ``FAKE_STREAM_EVENTS=N``
makes it read N files first, one ``Read`` tool use and its result every
``FAKE_STREAM_INTERVAL_MS`` (default 100), as an agent streaming for a while does;
``FAKE_CPU_FILE`` gets a line with the CPU seconds it used (its children's included) when it
ends. Outside a git repository it edits but commits nothing and cites a made-up commit, as the
simulated worker does in an empty checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "fake claude",
    "GIT_AUTHOR_EMAIL": "fake@localhost",
    "GIT_COMMITTER_NAME": "fake claude",
    "GIT_COMMITTER_EMAIL": "fake@localhost",
}


def say(doc: dict[str, object]) -> None:
    print(json.dumps(doc), flush=True)


def git(*args: str) -> str:
    env = {**os.environ, **IDENTITY}
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()  # fmt: skip


def stream(session: str, count: int, interval_s: float) -> None:
    """``count`` tool uses, each followed by its result, one every ``interval_s``."""
    start = time.monotonic()
    for n in range(1, count + 1):
        path = Path.cwd() / "src" / f"module_{n % 10}.py"
        say({"type": "assistant", "session_id": session, "message": {"content": [
            {"type": "tool_use", "id": f"s{n}", "name": "Read", "input": {"file_path": str(path)}}],
            "usage": {"input_tokens": 900 + n, "output_tokens": 40}}})  # fmt: skip
        text = f"     1\tdef step_{n}() -> int:\n     2\t    return {n}\n"
        say({"type": "user", "session_id": session, "message": {"content": [
            {"type": "tool_result", "tool_use_id": f"s{n}", "content": text}]}})  # fmt: skip
        pause = start + n * interval_s - time.monotonic()
        if pause > 0:
            time.sleep(pause)


def spend(session: str, interval_s: float) -> None:
    """Model calls, one every ``interval_s``, until the process is stopped."""
    n = 0
    while True:
        n += 1
        message = {"id": f"msg_{n}", "usage": {"input_tokens": 900 + n, "output_tokens": 40}}
        path = str(Path.cwd() / "src" / f"module_{n % 10}.py")
        say({"type": "assistant", "session_id": session, "message": {**message, "content": [
            {"type": "text", "text": f"Reading module {n}."}]}})  # fmt: skip
        say({"type": "assistant", "session_id": session, "message": {**message, "content": [
            {"type": "tool_use", "id": f"s{n}", "name": "Read",
             "input": {"file_path": path}}]}})  # fmt: skip
        say({"type": "user", "session_id": session, "message": {"content": [
            {"type": "tool_result", "tool_use_id": f"s{n}", "content": "pass"}]}})  # fmt: skip
        time.sleep(interval_s)


def report_cpu() -> None:
    if os.environ.get("FAKE_CPU_FILE"):
        used = os.times()
        spent = used.user + used.system + used.children_user + used.children_system
        with open(os.environ["FAKE_CPU_FILE"], "a") as out:  # one short append: whole lines
            out.write(f"{spent}\n")


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print("2.1.0 (Claude Code, fake)")
        return 0
    if os.environ.get("FAKE_ARGV_FILE"):
        Path(os.environ["FAKE_ARGV_FILE"]).write_text(json.dumps(argv))
    prompt = argv[-1]  # the adapter puts the prompt last, after every option
    resumed = next((a.split("=", 1)[1] for a in argv if a.startswith("--resume=")), None)
    session = resumed or "fake-session-0001"
    say({"type": "system", "subtype": "init", "session_id": session, "model": "fake",
         "tools": ["Read", "Edit", "Bash"], "cwd": os.getcwd()})  # fmt: skip
    if resumed:
        say({"type": "result", "subtype": "success", "is_error": False, "session_id": session,
             "result": f"Done as asked: {prompt[:80]}", "total_cost_usd": 0.001,
             "usage": {"input_tokens": 50, "output_tokens": 10}, "num_turns": 1})  # fmt: skip
        return 0
    if "FAKE:spend" in prompt:
        spend(session, float(os.environ.get("FAKE_STREAM_INTERVAL_MS") or 100) / 1000)
    if "FAKE:hang" in prompt:
        while True:  # an agent that never answers again: the host's no-output limit ends it
            time.sleep(1)
    if "FAKE:hugeline" in prompt:
        # One line far over the runner's 1 MiB read limit, written in pieces.
        piece = "x" * (1024 * 1024)
        for _ in range(100):
            sys.stdout.write(piece)
        sys.stdout.write("\n")
        sys.stdout.flush()
    if "FAKE:garbage" in prompt:
        print("this is not json \x1b]0;pwned\x07", flush=True)
        print('{"type": "assistant", "message": 42}', flush=True)
    if os.environ.get("FAKE_STREAM_EVENTS"):
        interval_ms = float(os.environ.get("FAKE_STREAM_INTERVAL_MS") or 100)
        stream(session, int(os.environ["FAKE_STREAM_EVENTS"]), interval_ms / 1000)
    target = Path("src") / "retry.py"
    target.parent.mkdir(exist_ok=True)
    say({"type": "assistant", "session_id": session, "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Edit",
         "input": {"file_path": str(Path.cwd() / target)}}],
        "usage": {"input_tokens": 1200, "output_tokens": 300}}})  # fmt: skip
    target.write_text("RETRIES = 2\n")
    say({"type": "user", "session_id": session, "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}})  # fmt: skip
    say({"type": "assistant", "session_id": session, "message": {"content": [
        {"type": "tool_use", "id": "t2", "name": "Bash",
         "input": {"command": "git commit -am 'Retry twice'"}}],
        "usage": {"input_tokens": 1500, "output_tokens": 100}}})  # fmt: skip
    if Path(".git").exists():
        git("add", "--all")
        git("commit", "--quiet", "-m", "Retry twice")
        sha = git("rev-parse", "HEAD")
    else:
        sha = os.urandom(6).hex()
    run_id = os.environ.get("JARVIS_RUN_ID", "")
    # The host passes a large dispatch by file only (docs/ipc.md).
    dispatch_text = os.environ.get("JARVIS_DISPATCH") or Path(
        os.environ.get("JARVIS_DISPATCH_FILE") or os.devnull).read_text() or "{}"  # fmt: skip
    dispatch = json.loads(dispatch_text)
    completion = {"run_id": run_id, "branch": dispatch.get("branch"), "commit_sha": sha,
                  "files_changed": [str(target)], "test_result": "pytest -q: 3 passed",
                  "risk": "low: one constant", "pr_url": "https://example.com/pr/1"}  # fmt: skip
    if "FAKE:await-steer" in prompt:
        # Ends its turn only once a steer is there: the runner gives it at the next turn.
        steer = Path(os.environ["JARVIS_STEER_FILE"])
        while not steer.exists():
            time.sleep(0.02)
    text = "Changed the retry count."
    # FAKE:usage-overflow: token counts no store can sum, as a broken or hostile agent says.
    counted = 2**63 - 1 if "FAKE:usage-overflow" in prompt else 2700
    if "FAKE:silent" not in prompt:
        text += f"\n<completion>\n{json.dumps(completion)}\n</completion>"
    say({"type": "result", "subtype": "success", "is_error": False, "session_id": session,
         "result": text, "total_cost_usd": 0.0123,
         "usage": {"input_tokens": counted, "output_tokens": 400}, "num_turns": 3})  # fmt: skip
    report_cpu()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
