"""``python -m core.agents.runner --profile NAME``: a coding agent as a Jarvis worker.

The host starts this for a run whose lane has an agent profile (docs/agents.md). It
speaks the worker protocol (docs/ipc.md) on the agent's behalf:

- builds the agent's prompt from the dispatch and the criteria (`core.agents.prompt`) and runs
  the agent non-interactively in the run's worktree, ``PWD`` saying so, in this process's group
  (so the host's signals reach it), with what lasts across its turns (`core.agents.attempt`:
  a folder outside the checkout, a usage meter where the agent's output leaves calls out);
- reads the agent's machine-readable output a line at a time (a line is read up to
  `MAX_LINE_BYTES`; the rest of a longer one is skipped, not held), turns each into progress
  events through the agent's adapter (`core.agents.registry`), and copies it to its own stdout
  (the run's log);
- delivers a steer at the agent's next turn: once the agent ends a turn, a waiting steer is
  acknowledged and the agent's session is resumed with it as the next message;
- ends with a completion: the agent's own block when it printed one, else one composed from git
  (`core.agents.compose`), every derived field marked.

Exit codes: 0 after a completion, 1 when the agent could not be run or exited without any
output, 2 for a bad environment, 128 + the signal on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from core.agents.attempt import Attempt
from core.agents.codex_usage import RolloutUsage, rollout_for, take_totals
from core.agents.compose import compose_completion
from core.agents.events import AgentEvent, Usage
from core.agents.programs import DEFAULT_EXECUTABLES
from core.agents.prompt import build_prompt
from core.agents.registry import adapter_for
from core.agents.spending import said, usage_doc
from core.agents.unattended import unattended_args
from core.contracts.completion import extract_completion
from core.ipc.worker_env import (
    OUTPUT_END,
    OUTPUT_START,
    ConfigError,
    WorkerConfig,
    iso_ms,
    load_worker_config,
    write_json_atomic,
)
from core.prices import read_price

#: A line of the agent's output longer than this is skipped past, not held in memory.
MAX_LINE_BYTES = 1024 * 1024
#: How many more turns steers may add to one attempt.
MAX_STEER_TURNS = 3
#: SIGTERM to the agent, then SIGKILL after this.
AGENT_GRACE_S = 5.0

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class Runner:
    """One attempt of one agent on one run."""

    def __init__(self, config: WorkerConfig, profile: dict[str, Any], out: IO[str]) -> None:
        self.config = config
        self.profile = profile
        self.agent = str(profile["agent"])
        self.adapter = adapter_for(self.agent)
        self.spent = Usage()
        """What earlier turns of this attempt used (each turn has an adapter of its own)."""
        self.out = out
        self.seq = 0
        self.last_ms = 0
        self.session_id: str | None = None
        self.final_text = ""
        self.lines = 0
        self.stopping: int | None = None
        self.child: subprocess.Popen[bytes] | None = None
        self.acked: set[str] = set()
        self.attempt: Attempt | None = None
        """What lasts across the turns (`core.agents.attempt`); made by `run`."""
        self.price = read_price(os.environ)
        self.rollout: RolloutUsage | None = None
        self.reported = Usage()
        """The usage the last progress event carried."""

    def used(self) -> Usage:
        """The attempt's usage so far: every turn's, or its meter's."""
        reported = self.spent.plus(self.adapter.usage)
        return self.attempt.usage(reported) if self.attempt else reported

    # -- the protocol's side --------------------------------------------------------------

    def emit(self, phase: str, summary: str, tool: str | None = None) -> None:
        self.seq += 1
        now_ms = time.time_ns() // 1_000_000
        self.last_ms = max(now_ms, self.last_ms + 1)
        doc: dict[str, Any] = {
            "kind": "worker_progress",
            "run_id": self.config.run_id,
            "group_folder": self.config.lane,
            "timestamp": iso_ms(self.last_ms),
            "phase": phase,
            "summary": summary[:400] or phase,
            "seq": self.seq,
        }
        if tool:
            doc["tool_used"] = tool[:60]
        # Cumulative for the attempt: the host keeps the largest and checks budgets on it.
        self.reported = self.used()
        if (usage := usage_doc(self.reported, self.price)) is not None:
            doc["usage"] = usage
        write_json_atomic(self.config.progress_dir / f"{self.last_ms}-{self.seq}.json", doc)

    def take(self, events: Sequence[AgentEvent]) -> None:
        for event in events:
            if event.session_id:
                self.session_id = event.session_id
            if event.error and not event.summary:
                self.emit("error", event.error)
            if event.final_text:
                self.final_text = event.final_text
            if event.summary:
                self.emit(event.phase, event.summary, event.tool)

    def waiting_steer(self) -> tuple[str, str] | None:
        """A steer not yet acknowledged: ``(steer_id, message)``, else None."""
        try:
            raw = self.config.steer_file.read_bytes()
        except OSError:
            return None
        if len(raw) > 64 * 1024:
            return None
        try:
            doc = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(doc, dict):
            return None
        steer_id, message = doc.get("steer_id"), doc.get("message")
        if not isinstance(steer_id, str) or steer_id in self.acked or not isinstance(message, str):
            return None
        if doc.get("run_id") not in (None, self.config.run_id):
            return None
        return steer_id, " ".join(message.split())

    def acknowledge(self, steer_id: str) -> None:
        ack = {"steer_id": steer_id, "acked_at": iso_ms(time.time_ns() // 1_000_000)}
        self.config.ack_file.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.config.ack_file, ack)
        self.acked.add(steer_id)

    # -- the agent's side -----------------------------------------------------------------

    def turn(self, prompt: str, checkout: Path, session: str | None) -> int:
        """Run the agent once; its exit code (or 128 + a signal that stopped us)."""
        self.spent = self.spent.plus(self.adapter.usage)
        assert self.attempt is not None
        extra = [a for a in self.profile.get("args") or [] if isinstance(a, str)]
        extra = [*unattended_args(self.agent, self.attempt.checkout, extra, os.environ), *extra]
        earlier, self.adapter = self.adapter, adapter_for(
            self.agent, cwd=str(self.attempt.checkout),
            extra_args=[*extra, *self.attempt.extra_args], state_dir=self.attempt.state_dir,
        )  # fmt: skip
        if session:
            self.adapter.resuming(earlier)
        self.rollout = rollout_for(self.agent, os.environ, session)  # Codex's per-call tokens
        take_totals(self.rollout, self.adapter, first=True)
        executable = list(self.profile.get("command") or DEFAULT_EXECUTABLES[self.agent])
        argv = self.adapter.argv(
            executable, prompt, model=self.profile.get("model"), session_id=session
        )
        on_stdin = self.adapter.prompt_on_stdin
        try:
            self.child = subprocess.Popen(
                argv, cwd=self.attempt.checkout, env=self.attempt.env(),
                stdin=subprocess.PIPE if on_stdin else subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=None,  # the agent's stderr is ours: the host keeps its end
            )  # fmt: skip
        except OSError as exc:
            print(f"runner: cannot start {argv[0]}: {exc.strerror or exc}", file=sys.stderr)
            return 127
        if on_stdin:
            threading.Thread(target=_feed, args=(self.child, prompt), daemon=True).start()
        assert self.child.stdout is not None
        self.read(self.child.stdout)
        code = self.child.wait()
        self.take(self.adapter.finish())
        for name in self.attempt.tidy():
            self.emit("message", f"removed {name}, which {self.adapter.name} left for itself")
        return 128 + self.stopping if self.stopping else code

    def read(self, stream: IO[bytes]) -> None:
        while True:
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            self.lines += 1
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                self._skip_rest(stream)
                self.emit("error", f"skipped an output line over {MAX_LINE_BYTES:,} bytes")
                continue
            # The raw line goes to the run's log; its progress comes from the adapter.
            self.out.write(line.decode("utf-8", "replace"))
            self.out.flush()
            self.take(self.adapter.parse_line(line))
            take_totals(self.rollout, self.adapter)
            if (used := self.used()) != self.reported:
                self.emit("usage", said(used))  # no event carried it: a budget may need it

    @staticmethod
    def _skip_rest(stream: IO[bytes]) -> None:
        while True:
            chunk = stream.readline(MAX_LINE_BYTES)
            if not chunk or chunk.endswith(b"\n"):
                return

    def stop(self, signum: int) -> None:
        """SIGTERM or SIGINT: pass it to the agent; kill it if it does not go."""
        self.stopping = signum
        child = self.child
        if child is None or child.poll() is not None:
            return
        child.send_signal(signal.SIGTERM)

        def kill_later() -> None:
            try:
                child.wait(AGENT_GRACE_S)
            except subprocess.TimeoutExpired:
                child.kill()

        threading.Thread(target=kill_later, daemon=True).start()

    # -- the whole attempt ----------------------------------------------------------------

    def run(self, checkout: Path) -> int:
        extra = [a for a in self.profile.get("args") or [] if isinstance(a, str)]
        self.attempt = Attempt(self.agent, checkout, extra, os.environ)
        try:
            return self._run(checkout)
        finally:
            self.attempt.close()

    def _run(self, checkout: Path) -> int:
        config = self.config
        prompt = build_prompt(config.dispatch, config.criteria, config.run_id, config.dispatch_file)
        self.emit("reading", f"starting {self.adapter.name}: {prompt.splitlines()[0][:300]}")
        code = self.turn(prompt, checkout, self._resumed_session())
        for _ in range(MAX_STEER_TURNS):
            if self.stopping or code != 0 or self.session_id is None:
                break
            steer = self.waiting_steer()
            if steer is None:
                break
            steer_id, message = steer
            # The agent's next output follows the steer: that is what the ack says.
            self.acknowledge(steer_id)
            self.emit("steering", f"steer {steer_id} acknowledged: {message}")
            code = self.turn(message, checkout, self.session_id)
        if self.stopping:
            return 128 + self.stopping
        if self.lines == 0:
            print(f"runner: {self.adapter.name} exited with code {code} and printed nothing",
                  file=sys.stderr)  # fmt: skip
            return EXIT_FAILED
        self.complete(checkout)
        return EXIT_OK

    def _resumed_session(self) -> str | None:
        session = self.config.dispatch.get("session_id")
        continuing = self.config.dispatch.get("context_intent") == "continue"
        return session if continuing and isinstance(session, str) else None

    def complete(self, checkout: Path) -> None:
        found = extract_completion(self.final_text).completion if self.final_text else None
        if found is None:
            base = os.environ.get("JARVIS_BASE_COMMIT") or None
            found = compose_completion(checkout, self.config.dispatch, self.config.run_id,
                                       base_commit=base, final_text=self.final_text)  # fmt: skip
        if self.session_id and "session_id" not in found:
            found["session_id"] = self.session_id
        used = self.used()
        if (usage := usage_doc(used, self.price)) is not None:
            if used.cost_usd is None and not usage.get("cost_computed"):
                usage["cost_usd"] = None  # no cost reported, and none could be computed
            found.setdefault("usage", usage)
        body = json.dumps(found, indent=2)
        self.out.write(f"{OUTPUT_START}\n<completion>\n{body}\n</completion>\n{OUTPUT_END}\n")
        self.out.flush()


def _feed(child: subprocess.Popen[bytes], prompt: str) -> None:
    """Write the prompt to the agent's stdin and close it (on a thread: a prompt larger than
    the pipe must not block the reading of the agent's output)."""
    assert child.stdin is not None
    try:
        child.stdin.write(prompt.encode("utf-8", "replace"))
        child.stdin.close()
    except OSError:
        pass  # it ended without reading: its exit says so


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.agents.runner",
        description="Run a coding agent as a Jarvis worker (docs/agents.md).",
    )
    parser.add_argument("--profile", required=True, help="the worker profile's name")
    args = parser.parse_args(argv)
    try:
        config = load_worker_config(os.environ)
        profile = json.loads(os.environ.get("JARVIS_WORKER_PROFILE") or "{}")
        if not isinstance(profile, dict) or profile.get("name") != args.profile:
            raise ConfigError(f"JARVIS_WORKER_PROFILE does not describe profile {args.profile}")
        checkout = Path(os.environ.get("JARVIS_CHECKOUT") or ".")
        runner = Runner(config, profile, sys.stdout)
    except (ConfigError, KeyError, ValueError) as exc:
        print(f"runner: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda s, _f: runner.stop(s))
    config.progress_dir.mkdir(parents=True, exist_ok=True)
    return runner.run(checkout)


if __name__ == "__main__":
    sys.exit(main())
