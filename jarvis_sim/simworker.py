"""The simulated worker: ``python -m jarvis_sim.simworker`` speaks the worker side of docs/ipc.md.

It lets the host and the console be exercised end to end without a real coding agent. Its
behaviour comes from a ``sim:<scenario>`` token in the dispatch's ``input``:

- ``ok`` (default): 4-8 progress events, then a completion that passes every gate;
- ``slow``: like ``ok`` with 30-40 events, so there is time to steer it;
- ``fail_contract``: progress, then a completion that breaks a gate;
- ``crash``: 2-4 events, a traceback on stderr, exit 1 without a completion;
- ``hang``: one event, then silence until it is killed;
- ``verify_fail``: like ``ok``, but ``files_changed`` leaves out what the task asked for.

When its checkout (``JARVIS_CHECKOUT``) is a git repository, it really edits the files and
commits them on its branch, and its completion cites that commit. Some scenarios then lie, for
the git gates to catch: ``lie_files`` claims a file it did not touch, ``lie_unclaimed`` changes
a file it does not claim, ``lie_commit`` cites a commit that does not exist, ``stale_commit``
cites its first commit after making a second, ``uncommitted`` leaves a change uncommitted, and
``leak_secret`` commits an access key.

Environment (see docs/ipc.md; read by `core.ipc.worker_env`): ``JARVIS_RUN_ID``,
``JARVIS_LANE``, ``JARVIS_DISPATCH``, ``JARVIS_PROGRESS_DIR``, ``JARVIS_STEER_FILE`` and
``JARVIS_ACK_FILE`` are required; ``JARVIS_ATTEMPT`` defaults to 1; ``JARVIS_IPC_DIR`` is accepted
but not needed, since every path the worker uses comes in its own variable.
``JARVIS_SIM_INTERVAL_MS=min,max`` overrides the 100-500 ms interval between events,
``JARVIS_SIM_EVENTS=N`` how many events a scenario other than ``crash`` and ``hang`` emits (at
least the few its ending needs), and ``JARVIS_SIM_SEED`` makes the run reproducible.

Exit codes: 0 after a completion, 1 for a crash (or an unwritable IPC file), 2 for a bad
environment, 128 + the signal number when stopped by SIGTERM (143) or SIGINT (130).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from core.contracts.dispatch import P0_COMPLETION_FIELDS, PR_FIELDS, evidence_required
from core.contracts.names import relative_path_problem
from core.contracts.screenshot_ban import mentions_screenshot
from core.ipc.worker_env import (
    OUTPUT_END,
    OUTPUT_START,
    ConfigError,
    WorkerConfig,
    iso_ms,
    load_worker_config,
    write_json_atomic,
)
from core.repos.git import GitError, git

SCENARIOS = (
    "ok",
    "slow",
    "fail_contract",
    "crash",
    "hang",
    "verify_fail",
    "lie_files",
    "lie_unclaimed",
    "lie_commit",
    "stale_commit",
    "uncommitted",
    "leak_secret",
)
#: Scenarios whose completion lies about the repository (or whose commit leaks a key); the git
#: gates catch each.
LIES = frozenset(
    {"lie_files", "lie_unclaimed", "lie_commit", "stale_commit", "uncommitted", "leak_secret"}
)
#: AWS's documented example key: what a careless worker's commit leaks in ``leak_secret``.
EXAMPLE_AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
#: Who the simulated worker's commits are by.
SIM_IDENTITY = {
    "GIT_AUTHOR_NAME": "Jarvis simulated worker",
    "GIT_AUTHOR_EMAIL": "simworker@localhost",
    "GIT_COMMITTER_NAME": "Jarvis simulated worker",
    "GIT_COMMITTER_EMAIL": "simworker@localhost",
}
#: Files a changelog or backlog criterion names (the extractor's lists, and the document's).
CHANGELOG_NAMES = frozenset(
    {"CHANGELOG.md", "CHANGES.md", "HISTORY.md", "CHANGELOG.rst", "NEWS.md"}
)
BACKLOG_NAMES = frozenset({"BACKLOG.md", "TODO.md", "backlog.md", "todo.md"})
DEFAULT_SCENARIO = "ok"
DEFAULT_INTERVAL_MS = (100, 500)

EXIT_OK = 0
EXIT_CRASH = 1
EXIT_USAGE = 2

#: How often the worker looks at its steer file and its stop flag. The protocol promises 100 ms;
#: half that leaves room for a slow file system without missing the promise.
POLL_SECONDS = 0.05
#: Steer files bigger than the host's own IPC size cap are not steers; ignore them.
MAX_STEER_BYTES = 64 * 1024
#: Operators read summaries on one line; a long steer message is cut rather than flooding it.
MAX_SUMMARY_CHARS = 400

_SCENARIO_TOKEN = re.compile(r"\bsim:([a-z_]+)")
_PATH_TOKEN = re.compile(r"[\w.-]+(?:/[\w.-]+)+")
_TEST_RUNNERS = {"pytest", "jest", "vitest", "tox", "nox"}
_LINTERS = {"ruff", "mypy", "eslint", "flake8", "pylint", "tsc", "black", "prettier"}
_COMMANDS = {"npm", "yarn", "pnpm", "npx", "make", "cargo", "go", "python", "python3", "uv", "node"}
_JS_HINTS = ("npm ", "yarn ", "pnpm ", ".tsx", ".ts", ".jsx", ".js", ".css", "dashboard")
_STOP_WORDS = frozenset(
    """about after again also keep keeps make sure that their them then there these they this
    those what when where which while with from into onto over under each exactly once only
    should must would could does create continue move rename visible change changes section
    succeeds lists names counts runs public module new text shows that when without""".split()
)
_EDIT_NOTES = (
    "tightened the edge case",
    "extracted a helper",
    "updated the call sites",
    "added a regression test",
    "renamed for clarity",
    "removed dead code",
    "handled the empty case",
    "documented the behaviour",
)
_DOC_NOTES = (
    "added the section",
    "reworded the introduction",
    "fixed the examples",
    "added the missing steps",
)
_DOC_SUFFIXES = (".md", ".rst", ".txt", ".adoc")
_RISKS = (
    "low: the change is small and covered by the acceptance tests",
    "low: behaviour outside the touched module is unchanged",
    "medium: touches a shared code path; the acceptance tests cover it",
)
_BROWSER_TOOLS = (
    "navigate_page",
    "take_snapshot",
    "evaluate_script",
    "click",
    "list_console_messages",
    "list_network_requests",
)


@dataclass(frozen=True, slots=True)
class Config(WorkerConfig):
    """Everything the simulated worker takes from its environment: the protocol's, then its own."""

    interval_ms: tuple[int, int] = DEFAULT_INTERVAL_MS
    seed: str | None = None
    events: int | None = None
    """How many progress events to emit (``JARVIS_SIM_EVENTS``); else the scenario's own."""


def _parse_interval(raw: str) -> tuple[int, int]:
    parts = [p.strip() for p in raw.split(",")]
    if len(parts) == 1:
        parts *= 2  # "50" means exactly 50 ms every time
    try:
        low, high = (int(p) for p in parts)
    except ValueError:
        raise ConfigError(
            f"JARVIS_SIM_INTERVAL_MS must be 'min,max' in milliseconds, not {raw!r}"
        ) from None
    if low < 0 or high < low:
        raise ConfigError(f"JARVIS_SIM_INTERVAL_MS needs 0 <= min <= max, not {raw!r}")
    return low, high


def load_config(env: Mapping[str, str]) -> Config:
    """Read and check the worker's environment, ``JARVIS_SIM_*`` included.

    Raises:
        ConfigError: a required variable is missing or blank, or a value is invalid.
    """
    base = load_worker_config(env)
    interval_raw = env.get("JARVIS_SIM_INTERVAL_MS", "").strip()
    seed = env.get("JARVIS_SIM_SEED", "").strip() or None
    raw_events = env.get("JARVIS_SIM_EVENTS", "").strip()
    if raw_events and (not raw_events.isdigit() or int(raw_events) < 1):
        raise ConfigError(f"JARVIS_SIM_EVENTS must be a positive integer, not {raw_events!r}")
    protocol = {f.name: getattr(base, f.name) for f in fields(WorkerConfig)}
    return Config(
        **protocol,
        interval_ms=_parse_interval(interval_raw) if interval_raw else DEFAULT_INTERVAL_MS,
        seed=seed,
        events=int(raw_events) if raw_events else None,
    )


def scenario_of(dispatch: Mapping[str, Any]) -> tuple[str, str | None]:
    """The scenario a dispatch asks for, and the unknown name it asked for instead, if any."""
    text = _task_text(dispatch)
    match = _SCENARIO_TOKEN.search(text)
    if match is None:
        return DEFAULT_SCENARIO, None
    name = match.group(1)
    if name not in SCENARIOS:
        return DEFAULT_SCENARIO, name
    return name, None


def _task_text(dispatch: Mapping[str, Any]) -> str:
    # A dispatch record (the other dispatch format) names its task "task", not "input".
    for key in ("input", "task"):
        value = dispatch.get(key)
        if isinstance(value, str):
            return value
    return ""


def _clip(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Step:
    """One progress event to emit."""

    phase: str
    summary: str
    tool_used: str | None = None


@dataclass(slots=True)
class Task:
    """What the simulated worker makes of its dispatch: the words, the files, the tests."""

    run_id: str
    branch: str
    repo: str
    text: str
    tests: list[str]
    asked: list[str]
    """Paths the task itself names (in its input or acceptance criteria)."""
    files: list[str]
    """Every file a complete piece of work would change; ``asked`` first."""
    javascript: bool
    keyword: str
    component: str
    evidence: bool
    required: list[str] = field(default_factory=list)


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def _paths_in(text: str) -> Iterator[str]:
    for token in text.split():
        token = token.strip("'\"`()[]{},;:").rstrip(".")
        if not _PATH_TOKEN.fullmatch(token):
            continue
        parts = token.split("/")
        # Only relative paths to files that stay inside the repository look like a task's target.
        if ".." in parts or "." not in parts[-1].strip("."):
            continue
        yield token


#: Criteria about bookkeeping files rather than the change itself.
_BOOKKEEPING = frozenset({"changelog_updated", "backlog_updated"})


def _criteria_paths(criteria: Any, *, bookkeeping: bool) -> Iterator[str]:
    """Paths the criteria name: the bookkeeping ones (changelog, backlog) or the others."""
    if not isinstance(criteria, list | tuple):
        return
    for criterion in criteria:
        if isinstance(criterion, dict) and (criterion.get("type") in _BOOKKEEPING) == bookkeeping:
            path = criterion.get("path")
            if isinstance(path, str) and relative_path_problem(path) is None:
                yield path


def _strings_or_dicts(value: Any) -> list[Any]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def read_task(
    dispatch: Mapping[str, Any],
    fallback_run_id: str,
    criteria: Sequence[Mapping[str, Any]] = (),
) -> Task:
    """Derive a plausible piece of work from a dispatch, read defensively.

    ``criteria`` are the run's acceptance criteria (``JARVIS_CRITERIA``): the files they name
    are part of the work, and a changelog or backlog they ask for is kept up to date.
    """
    raw_text = _task_text(dispatch)
    text = " ".join(_SCENARIO_TOKEN.sub("", raw_text).split()) or "the assigned task"
    tests = _strings(dispatch.get("acceptance_tests"))
    given = [*_strings_or_dicts(dispatch.get("acceptance_criteria")), *criteria]
    asked = _unique([*_paths_in(text), *_criteria_paths(given, bookkeeping=False)])
    bookkeeping = _unique(_criteria_paths(given, bookkeeping=True))
    test_paths = _unique(p for t in tests for p in _paths_in(t))
    blob = " ".join([text, *tests, *asked]).lower()
    javascript = any(hint in blob for hint in _JS_HINTS)

    path_free = " ".join(w for w in text.split() if "/" not in w)
    words = _unique(
        w for w in re.findall(r"[a-z]+", path_free.lower()) if len(w) >= 4 and w not in _STOP_WORDS
    )[:2] or ["task"]
    keyword = "_".join(words)
    component = "".join(w.capitalize() for w in words)
    repo = dispatch.get("repo") if isinstance(dispatch.get("repo"), str) else None
    package = (repo or "app/app").rsplit("/", 1)[-1].replace("-", "_").replace(".", "_")
    if javascript:
        generated = [f"src/components/{component}.tsx", f"src/components/{component}.test.tsx"]
    else:
        tests_file = next((p for p in test_paths if p.endswith(".py")), f"tests/test_{keyword}.py")
        generated = [f"src/{package}/{keyword}.py", tests_file]
    run_id = dispatch.get("run_id")
    run_id = run_id if isinstance(run_id, str) else fallback_run_id
    branch = dispatch.get("branch")
    contract = dispatch.get("output_contract")
    required = _strings(contract.get("required_fields")) if isinstance(contract, dict) else []
    return Task(
        run_id=run_id,
        branch=branch if isinstance(branch, str) else f"jarvis-{run_id}",
        repo=repo if repo and _PATH_TOKEN.fullmatch(repo) else "example/app",
        text=text,
        tests=tests,
        asked=asked,
        # A task that names its files is about those files; otherwise invent plausible ones.
        files=_unique(
            [*asked, *test_paths, *bookkeeping]
            if asked
            else [*generated, *test_paths, *bookkeeping]
        ),
        javascript=javascript,
        keyword=keyword,
        component=component,
        evidence=evidence_required(dispatch) or "browser_evidence" in required,
        required=required,
    )


def _test_kind(test: str) -> str:
    """``runner``, ``linter``, ``command``, or ``prose`` (an assertion checked, not run)."""
    words = test.split()
    head = words[0] if words else ""
    if head in _TEST_RUNNERS or (head in _COMMANDS and "test" in test):
        return "runner"
    if head in _LINTERS or (head in _COMMANDS and "lint" in test):
        return "linter"
    return "command" if head in _COMMANDS else "prose"


def _test_outcome(test: str, rng: random.Random) -> str:
    """What running one acceptance test reports."""
    kind = _test_kind(test)
    if kind == "runner":
        return f"{test}: {rng.randint(4, 60)} passed"
    if kind == "linter":
        return f"{test}: no issues"
    return f"{test}: ok" if kind == "command" else f"verified: {test}"


def _edit(path: str, rng: random.Random) -> Step:
    notes = _DOC_NOTES if path.endswith(_DOC_SUFFIXES) else _EDIT_NOTES
    return Step("editing", f"editing {path}: {rng.choice(notes)}", "edit")


def _runnable(task: Task) -> str:
    """The test command the worker runs while it works."""
    for test in task.tests:
        if _test_kind(test) == "runner":
            return test
    return "npm test" if task.javascript else "pytest -q"


@dataclass(slots=True)
class Outcome:
    """The completion a scenario ends with, and what the worker says about it."""

    completion: dict[str, Any]
    note: str
    """For the last progress summary and the completion's own ``summary``."""


def _file_text(name: str, task: Task, today: str) -> tuple[str, bool]:
    """What the simulated change leaves in ``name``, and whether it is appended (a log).

    Each file gets what its kind holds: a changelog a dated entry, a backlog a ticked item,
    Python a module (or a passing test) that a linter accepts, other code a line of its own
    syntax. So a checklist run in the checkout (tests, lint, changelog, backlog) can pass.
    """
    base = name.rsplit("/", 1)[-1]
    stem, _, suffix = base.lower().rpartition(".")
    summary = _clip(task.text, 160)
    if base in CHANGELOG_NAMES:
        return f"\n## {today}\n\n- {summary}\n", True
    if base in BACKLOG_NAMES:
        return f"- [x] {summary}\n", True
    if suffix == "py":
        doc = f'"""Simulated change for run {task.run_id}."""\n\n\n'
        if stem.startswith("test_") or stem.endswith("_test"):
            check = f"assert len({task.run_id!r}) == {len(task.run_id)}"
            return doc + f"def test_{task.keyword}() -> None:\n    {check}\n", False
        return doc + f"def simulated_{task.keyword}() -> str:\n    return {task.run_id!r}\n", False
    if suffix in ("ts", "tsx", "js", "jsx", "mjs", "cjs"):
        return f"export const simulatedChange = {json.dumps(task.run_id)};\n", False
    if suffix == "json":
        return json.dumps({"simulated_change": task.run_id}) + "\n", False
    if suffix in ("go", "rs", "java", "kt", "c", "h", "cpp", "cs", "swift"):
        return f"// simulated change for run {task.run_id}\n", False
    if suffix in ("toml", "yaml", "yml", "sh", "cfg", "ini", "rb"):
        return f"# simulated change for run {task.run_id}\n", False
    return f"Simulated change for run {task.run_id}: {summary}\n", False


def write_checkout(checkout: str | None, completion: Mapping[str, Any], task: Task) -> None:
    """Leave in the run's checkout (``JARVIS_CHECKOUT``) the files the completion says changed,
    so the host's verification checks real files: ``verify_fail`` leaves out what was asked.

    Each file holds what its kind would (`_file_text`); a changelog or backlog gets an entry
    appended. Paths that are absolute or climb out are skipped, never written.
    """
    if not checkout:
        return
    root = Path(checkout).resolve()
    today = datetime.now(UTC).date().isoformat()
    for name in completion.get("files_changed") or []:
        if not isinstance(name, str) or name.startswith(("/", "~")) or ".." in Path(name).parts:
            continue
        target = (root / name).resolve()
        if not target.is_relative_to(root):
            continue
        text, append = _file_text(name, task, today)
        # A file the repository already has is added to, as an edit would, not replaced.
        grows = append or target.is_file()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("a" if grows else "w", encoding="utf-8") as out:
                out.write(text if append or not grows else f"\n{text}")
        except OSError:
            continue  # a file that cannot be written is simply missing at verification


def _repository(checkout: str | None) -> Path | None:
    """The checkout, when it is the root of a git work tree (a worktree the host made)."""
    if not checkout:
        return None
    root = Path(checkout)
    try:
        top = git(["rev-parse", "--show-toplevel"], cwd=root, check=False).out.strip()
    except GitError:
        return None
    return root if top and Path(top).resolve() == root.resolve() else None


def _commit(repo: Path, message: str) -> str:
    git(["add", "--all", "--", "."], cwd=repo)
    commit = ["commit", "--quiet", "--allow-empty", "--no-verify", "-m", message]
    git(commit, cwd=repo, env=SIM_IDENTITY)
    return git(["rev-parse", "HEAD"], cwd=repo).out.strip()


def commit_work(
    repo: Path, completion: dict[str, Any], task: Task, scenario: str, rng: random.Random
) -> str:
    """Make the change in the worktree and commit it; cite in ``completion`` what the scenario
    says (the truth, or one of the `LIES`). Returns what it did, for the summary."""
    claimed = list(completion.get("files_changed") or [])
    touched = list(claimed)
    note = ""
    if scenario == "lie_files":
        ghost = f"docs/{task.keyword}-notes.md"
        claimed.append(ghost)
        note = f"claims {ghost}, which it did not touch"
    elif scenario == "lie_unclaimed":
        extra = f"scripts/{task.keyword}_helper.py"
        touched.append(extra)
        note = f"changed {extra} without claiming it"
    write_checkout(str(repo), {"files_changed": touched}, task)
    if scenario == "leak_secret":
        settings = "config/settings.py"
        (repo / "config").mkdir(exist_ok=True)
        (repo / settings).write_text(f'AWS_ACCESS_KEY_ID = "{EXAMPLE_AWS_KEY}"\n')
        claimed.append(settings)
        note = f"committed an access key in {settings}"
    sha = _commit(repo, f"{_clip(task.text, 60)}\n\nRun {task.run_id}.")
    if scenario == "stale_commit":
        (repo / f".{task.keyword}-followup").write_text(f"follow-up for {task.run_id}\n")
        claimed.append(f".{task.keyword}-followup")
        _commit(repo, f"Follow-up for run {task.run_id}")
        note = f"cites {sha[:12]}, its first commit, not the head"
    elif scenario == "lie_commit":
        sha = f"{rng.getrandbits(160):040x}"
        note = f"cites {sha[:12]}, a commit that does not exist"
    elif scenario == "uncommitted":
        (repo / f"{task.keyword}.draft").write_text(f"draft left by {task.run_id}\n")
        note = f"left {task.keyword}.draft uncommitted"
    completion["commit_sha"] = sha
    completion["files_changed"] = claimed
    return note


def build_completion(
    dispatch: Mapping[str, Any], task: Task, scenario: str, rng: random.Random
) -> Outcome:
    """The completion for ``scenario``: valid for ok/slow/verify_fail, broken for fail_contract."""
    sha = f"{rng.getrandbits(48):012x}"[: rng.randint(7, 12)]
    files = list(task.files)
    note = f"changed {len(files)} file(s); acceptance tests pass"
    if scenario == "verify_fail":
        omitted = task.asked or files[:1]
        files = [f for f in files if f not in omitted] or ["README.md"]
        why = "which the task asked for" if task.asked else "which the change needs"
        note = f"changed {', '.join(files)}; left out {', '.join(omitted)}, {why}"
    completion: dict[str, Any] = {
        "run_id": task.run_id,
        "branch": task.branch,
        "commit_sha": sha,
        "files_changed": files,
        "test_result": "; ".join(_test_outcome(t, rng) for t in task.tests)
        or f"{_runnable(task)}: {rng.randint(4, 60)} passed",
        "risk": rng.choice(_RISKS),
    }
    if "pr_skipped_reason" in task.required and "pr_url" not in task.required:
        completion["pr_skipped_reason"] = (
            "the dispatch asks for no pull request; the branch is pushed for review"
        )
    else:
        completion["pr_url"] = f"https://github.com/{task.repo}/pull/{rng.randint(10, 999)}"
    for name in task.required:
        if name in completion or name in P0_COMPLETION_FIELDS or name in PR_FIELDS:
            continue
        if name == "session_id":
            given = dispatch.get("session_id")
            completion[name] = (
                given if isinstance(given, str) else f"sess-{rng.getrandbits(32):08x}"
            )
        elif name != "browser_evidence":
            completion[name] = f"{name.replace('_', ' ')}: see the summary"
    if "session_id" not in completion and isinstance(dispatch.get("session_id"), str):
        completion["session_id"] = dispatch["session_id"]
    if task.evidence:
        completion["browser_evidence"] = _browser_evidence(task, rng)
    if scenario == "fail_contract":
        note = _break_a_gate(completion, rng)
    completion["summary"] = f"{task.text[:120]} — {note}"
    return Outcome(completion, note)


def _browser_evidence(task: Task, rng: random.Random) -> dict[str, Any]:
    port = rng.choice((3000, 4173, 5173, 8000, 8080))
    base_url = f"http://127.0.0.1:{port}/"
    # A prose acceptance test is a browser assertion; the screenshot filter is belt and braces
    # (a valid dispatch cannot contain one) because evidence that mentions one fails its gate.
    assertions = [t for t in task.tests if _test_kind(t) == "prose"]
    steps = [
        f"navigate_page {base_url} -> 200, page loaded",
        f"take_snapshot: the {task.component} element is present in the accessibility tree",
        *(f"evaluate_script: assert {json.dumps(a)} -> true" for a in assertions),
        "list_console_messages: 0 errors, 0 warnings",
    ]
    return {
        "base_url": base_url,
        "tools_listed": list(_BROWSER_TOOLS),
        "execute_tool_evidence": [s for s in steps if mentions_screenshot(s) is None],
    }


def _break_a_gate(completion: dict[str, Any], rng: random.Random) -> str:
    """Spoil the completion the way a careless worker would; returns what it did."""
    choice = rng.randrange(3)
    if choice == 0:
        completion["commit_sha"] = "HEAD~1"
        return "reported the commit as HEAD~1"
    if choice == 1:
        del completion["test_result"]
        return "did not report a test result"
    completion["branch"] = "main"
    return "committed on main"


def _extra_steps(task: Task, rng: random.Random) -> Iterator[Step]:
    """An endless, plausible stream of middle-of-the-work events."""
    for path in task.files[:3]:
        yield Step("reading", f"reading {path}", "read")
    yield Step("searching", f"searching the repo for '{task.keyword}'", "grep")
    yield Step("planning", f"planning: {len(task.files)} file(s) to change, tests first", None)
    runnable = _runnable(task)
    while True:
        for path in task.files:
            yield _edit(path, rng)
        failed = rng.randint(0, 3)
        passed = rng.randint(4, 60)
        if failed:
            yield Step("testing", f"running {runnable}: {failed} failed, {passed} passed", "bash")
            yield Step("reading", f"reading the output of {runnable}", "read")
        else:
            yield Step("testing", f"running {runnable}: {passed} passed", "bash")


def build_plan(
    task: Task, outcome: Outcome, scenario: str, rng: random.Random, events: int | None = None
) -> tuple[list[Step], int]:
    """The events a scenario emits, and how many of them to emit before it stops or hangs.

    ``events`` sets the count for a scenario that ends with a completion (the plan is never
    shorter than its first and last steps)."""
    count = {"slow": rng.randint(30, 40), "crash": rng.randint(2, 4), "hang": 1}.get(
        scenario, rng.randint(4, 8)
    )
    if events is not None and scenario not in ("crash", "hang"):
        count = events
    start = [Step("reading", f"reading task: {_clip(task.text, 160)}", "read")]
    end = [_edit(task.files[0], rng)]
    if task.evidence:
        end.append(Step("browser", f"checking the {task.component} in the browser", "browser"))
    completion = outcome.completion
    result = completion.get("test_result", "ok")
    end.append(Step("testing", f"running acceptance tests: {result}", "bash"))
    where = completion.get("pr_url") or "no pull request"
    end.append(
        Step(
            "committing",
            f"committed {completion['commit_sha']} on {completion['branch']}; {where}; "
            f"{outcome.note}",
            "bash",
        )
    )
    extras = list(_take(_extra_steps(task, rng), max(0, count - len(start) - len(end))))
    plan = start + extras + end
    return plan, min(count, len(plan)) if scenario in ("crash", "hang") else len(plan)


def _take(items: Iterator[Step], count: int) -> Iterator[Step]:
    for _, item in zip(range(count), items, strict=False):
        yield item


class _StopFlag:
    """Set from a signal handler; the worker checks it between short sleeps.

    A flag, not a `threading.Event`: setting an Event takes a lock, which a handler running in
    the main thread could find already held by that same thread, and deadlock.
    """

    def __init__(self) -> None:
        self.signum: int | None = None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        del frame
        self.signum = signum


class Worker:
    """Runs one scenario: progress events, steering, and the completion."""

    def __init__(
        self,
        config: Config,
        rng: random.Random,
        stop: _StopFlag,
        out: TextIO,
        err: TextIO,
    ) -> None:
        self.config = config
        self.rng = rng
        self.stop = stop
        self.out = out
        self.err = err
        self.seq = 0
        self.last_ms = 0
        self.acked: set[str] = set()
        self.pending: deque[tuple[str, str]] = deque()

    def say(self, line: str) -> None:
        """A log line on stdout, flushed so the host sees output as it happens."""
        # A host that went away must not turn the simulator's exit into a traceback.
        with contextlib.suppress(OSError, ValueError):
            print(line, file=self.out, flush=True)

    def emit(self, step: Step) -> None:
        self.seq += 1
        # Names must sort in event order: never reuse or go back on a millisecond, even if the
        # clock does, so `<ms>-<seq>.json` always increases.
        now_ms = time.time_ns() // 1_000_000
        self.last_ms = max(now_ms, self.last_ms + 1)
        stamp = iso_ms(self.last_ms)
        doc: dict[str, Any] = {
            "kind": "worker_progress",
            "run_id": self.config.run_id,
            "group_folder": self.config.lane,
            "timestamp": stamp,
            "phase": step.phase,
            "summary": _clip(step.summary),
            "seq": self.seq,
        }
        if step.tool_used:
            doc["tool_used"] = step.tool_used
        write_json_atomic(self.config.progress_dir / f"{self.last_ms}-{self.seq}.json", doc)
        self.say(f"[{stamp}] #{self.seq} {step.phase}: {doc['summary']}")

    def poll_steer(self) -> None:
        """Acknowledge a new steer, once; anything unreadable is left for the next poll."""
        try:
            raw = self.config.steer_file.read_bytes()
        except OSError:
            return  # usually absent; anything else may clear up by the next poll
        if len(raw) > MAX_STEER_BYTES:
            return
        try:
            doc = json.loads(raw)
        except ValueError:
            return  # half-written by a careless writer: it will parse once complete
        if not isinstance(doc, dict):
            return
        steer_id = doc.get("steer_id")
        if not isinstance(steer_id, str) or not steer_id.strip() or steer_id in self.acked:
            return
        run_id = doc.get("run_id")
        if isinstance(run_id, str) and run_id != self.config.run_id:
            return  # misrouted: acknowledging it would tell the host the wrong run took it in
        message = doc.get("message")
        text = " ".join(message.split()) if isinstance(message, str) else ""
        ack = {"steer_id": steer_id, "acked_at": iso_ms(time.time_ns() // 1_000_000)}
        try:
            self.config.ack_file.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.config.ack_file, ack)
        except OSError as exc:
            self.say(f"steer {steer_id}: cannot write the acknowledgement yet ({exc})")
            return
        self.acked.add(steer_id)
        self.pending.append((steer_id, text))
        self.say(f"steer {steer_id} received: {_clip(text, 120)}")

    def wait(self, seconds: float, *, steerable: bool = True) -> bool:
        """Sleep, polling the steer file; False as soon as a stop signal arrived."""
        deadline = time.monotonic() + seconds
        while True:
            if self.stop.signum is not None:
                return False
            if steerable:
                self.poll_steer()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            time.sleep(min(remaining, POLL_SECONDS))

    def interval(self) -> float:
        low, high = self.config.interval_ms
        return self.rng.uniform(low, high) / 1000

    def flush_steers(self) -> None:
        while self.pending:
            steer_id, text = self.pending.popleft()
            self.emit(Step("steering", f"steer {steer_id} acknowledged: {text}"))

    def run(self, scenario: str) -> int:
        task = read_task(self.config.dispatch, self.config.run_id, self.config.criteria)
        outcome = build_completion(self.config.dispatch, task, scenario, self.rng)
        repo = _repository(os.environ.get("JARVIS_CHECKOUT"))
        if repo is not None and scenario not in ("crash", "hang", "fail_contract"):
            # Real work in a real worktree: the commit comes first, so progress can cite it.
            try:
                lie = commit_work(repo, outcome.completion, task, scenario, self.rng)
            except GitError as exc:
                print(f"simworker: cannot commit in {repo}: {exc}", file=self.err, flush=True)
                return EXIT_CRASH
            if lie:
                outcome = Outcome(outcome.completion, f"{outcome.note}; {lie}")
                outcome.completion["summary"] = f"{task.text[:120]} — {outcome.note}"
        plan, count = build_plan(task, outcome, scenario, self.rng, self.config.events)
        self.say(
            f"simworker: run {self.config.run_id} attempt {self.config.attempt} on "
            f"{self.config.lane}, scenario {scenario}"
        )
        steps = deque(plan[:count])
        if scenario == "hang":
            self.emit(steps[0])
            # Silence: no output, no steering, until a signal ends it.
            while self.wait(3600, steerable=False):
                pass
            return self.stopped()
        first = True
        while steps:
            if not first and not self.wait(self.interval()):
                return self.stopped()
            first = False
            if self.pending:
                # A steer acknowledged since the last event is what the next event is about.
                steer_id, text = self.pending.popleft()
                self.emit(Step("steering", f"steer {steer_id} acknowledged: {text}"))
                continue
            self.emit(steps.popleft())
        if not self.wait(self.interval()):
            return self.stopped()
        self.flush_steers()
        if scenario == "crash":
            self.crash()
            return EXIT_CRASH
        self.say(f"simworker: done, {outcome.note}")
        if repo is None:
            write_checkout(os.environ.get("JARVIS_CHECKOUT"), outcome.completion, task)
        body = json.dumps(outcome.completion, indent=2)
        self.say(f"{OUTPUT_START}\n<completion>\n{body}\n</completion>\n{OUTPUT_END}")
        return EXIT_OK

    def stopped(self) -> int:
        signum = self.stop.signum or signal.SIGTERM
        print(f"simworker: stopped by signal {signum}", file=self.err, flush=True)
        return 128 + int(signum)

    def crash(self) -> None:
        print(
            "Traceback (most recent call last):\n"
            '  File "/workspace/agent/loop.py", line 212, in run_step\n'
            "    result = tool.execute(call)\n"
            '  File "/workspace/agent/tools.py", line 88, in execute\n'
            "    raise ToolProcessError(self.name, code)\n"
            "ToolProcessError: simulated crash: the edit tool exited with code 137",
            file=self.err,
            flush=True,
        )


def _install(stop: _StopFlag) -> list[tuple[int, Any]]:
    """Route SIGTERM and SIGINT to ``stop``; returns what to restore (nothing off the main
    thread, where Python refuses signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        return []
    restore: list[tuple[int, Any]] = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous = signal.signal(signum, stop.handle)
        restore.append((signum, previous if previous is not None else signal.SIG_DFL))
    return restore


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Run the simulated worker; returns its exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m jarvis_sim.simworker",
        description="A simulated coding-agent worker speaking the Jarvis IPC protocol. "
        "Configured by JARVIS_* environment variables; see docs/ipc.md.",
    )
    try:
        parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        config = load_config(os.environ if env is None else env)
    except ConfigError as exc:
        print(f"simworker: {exc}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    scenario, unknown = scenario_of(config.dispatch)
    if unknown is not None:
        print(
            f"simworker: unknown scenario 'sim:{unknown}'; running '{scenario}' "
            f"(known: {', '.join(SCENARIOS)})",
            file=sys.stderr,
            flush=True,
        )
    stop = _StopFlag()
    restore = _install(stop)
    try:
        config.progress_dir.mkdir(parents=True, exist_ok=True)
        worker = Worker(config, random.Random(config.seed), stop, sys.stdout, sys.stderr)
        return worker.run(scenario)
    except OSError as exc:
        print(f"simworker: cannot write to the IPC folder: {exc}", file=sys.stderr, flush=True)
        return EXIT_CRASH
    finally:
        for signum, previous in restore:
            signal.signal(signum, previous)


if __name__ == "__main__":
    sys.exit(main())
