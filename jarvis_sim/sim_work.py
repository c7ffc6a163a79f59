"""What the simulated worker does and ends with: the files it writes in its checkout and
commits (and the lies some scenarios tell the git gates), its completion, and the progress
events on the way (`build_plan`)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.contracts.dispatch import P0_COMPLETION_FIELDS, PR_FIELDS
from core.contracts.screenshot_ban import mentions_screenshot
from core.repos.git import GitError, git
from jarvis_sim.sim_task import (
    Step,
    Task,
    clip,
    edit_step,
    runnable_command,
    test_kind,
    test_outcome,
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
    summary = clip(task.text, 160)
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


def repository_of(checkout: str | None) -> Path | None:
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
    sha = _commit(repo, f"{clip(task.text, 60)}\n\nRun {task.run_id}.")
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
        "test_result": "; ".join(test_outcome(t, rng) for t in task.tests)
        or f"{runnable_command(task)}: {rng.randint(4, 60)} passed",
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
    assertions = [t for t in task.tests if test_kind(t) == "prose"]
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
    runnable = runnable_command(task)
    while True:
        for path in task.files:
            yield edit_step(path, rng)
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
    start = [Step("reading", f"reading task: {clip(task.text, 160)}", "read")]
    end = [edit_step(task.files[0], rng)]
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
