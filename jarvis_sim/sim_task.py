"""What the simulated worker reads of its dispatch: the scenario its ``sim:<scenario>`` token
asks for, and the task (the files and tests it names, its acceptance criteria) as the worker's
story uses it (`jarvis_sim.sim_work`)."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.contracts.dispatch import evidence_required
from core.contracts.names import relative_path_problem

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

DEFAULT_SCENARIO = "ok"

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


def clip(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
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


def test_kind(test: str) -> str:
    """``runner``, ``linter``, ``command``, or ``prose`` (an assertion checked, not run)."""
    words = test.split()
    head = words[0] if words else ""
    if head in _TEST_RUNNERS or (head in _COMMANDS and "test" in test):
        return "runner"
    if head in _LINTERS or (head in _COMMANDS and "lint" in test):
        return "linter"
    return "command" if head in _COMMANDS else "prose"


def test_outcome(test: str, rng: random.Random) -> str:
    """What running one acceptance test reports."""
    kind = test_kind(test)
    if kind == "runner":
        return f"{test}: {rng.randint(4, 60)} passed"
    if kind == "linter":
        return f"{test}: no issues"
    return f"{test}: ok" if kind == "command" else f"verified: {test}"


def edit_step(path: str, rng: random.Random) -> Step:
    notes = _DOC_NOTES if path.endswith(_DOC_SUFFIXES) else _EDIT_NOTES
    return Step("editing", f"editing {path}: {rng.choice(notes)}", "edit")


def runnable_command(task: Task) -> str:
    """The test command the worker runs while it works."""
    for test in task.tests:
        if test_kind(test) == "runner":
            return test
    return "npm test" if task.javascript else "pytest -q"
