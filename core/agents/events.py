"""What an adapter makes of a coding agent's output: `AgentEvent`s, and how tool calls are classed.

An event is one thing an operator may want to see: the agent read a file, ran the tests,
committed, said something, failed or finished. Its ``summary`` is one line of plain text: secrets
masked, escape sequences dropped, line breaks folded into spaces, every other control character
shown as a visible escape (`core.text.inert`), and it is cut at `MAX_SUMMARY_CHARS`. That makes it
safe to store, but not trusted: it is still agent text, which the host masks again as it stores
it and escapes again when it shows it.

Token and cost figures on an event are **increments**: what the agent reported since the previous
event that carried any. Adapters turn the running totals some agents report into increments, so
adding up every event of a run (`total_usage`, or `Usage.plus`) gives the run's totals, whatever
the agent's own convention. ``tokens_in`` counts every input token the model read, cached or not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from core.contracts.secrets_scan import mask_secrets
from core.text import inert

Phase = Literal[
    "reading",
    "searching",
    "editing",
    "testing",
    "committing",
    "planning",
    "thinking",
    "tool",
    "message",
    "error",
    "done",
]
#: Every phase an adapter may report, in the order an operator would read them.
PHASES: Final[tuple[Phase, ...]] = get_args(Phase)
#: A summary is one line for an operator; the simulated worker keeps the same length.
MAX_SUMMARY_CHARS: Final = 400
#: An ``error`` text is a little longer: it may be the only account of what went wrong.
MAX_ERROR_CHARS: Final = 2_000
#: The largest token count kept: what the store's signed 64-bit integers hold.
MAX_COUNT: Final = 2**63 - 1


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """One thing a coding agent did or said, as Jarvis reports progress."""

    phase: Phase
    """What kind of step this is (`PHASES`)."""
    summary: str
    """One line of plain text, at most `MAX_SUMMARY_CHARS` characters, no raw control characters."""
    tool: str | None = None
    """The agent's own name for the tool it used (``Edit``, ``bash``, ``command_execution``)."""
    session_id: str | None = None
    """The agent's session (or thread) id, on every event once the agent has reported it."""
    tokens_in: int | None = None
    """Input tokens reported since the previous event that carried usage (cached ones included)."""
    tokens_out: int | None = None
    """Output tokens reported since the previous event that carried usage."""
    cost_usd: float | None = None
    """Dollars reported since the previous event that carried usage; None if no cost came."""
    final_text: str | None = None
    """The agent's final answer, on the event that ends a turn: where a completion block may be."""
    error: str | None = None
    """What went wrong: always set on ``error`` events, and on tool calls that failed; one line."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and dollars added up: an adapter's running total, or a sum of events."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    """None until some figure reported a cost (an agent may report tokens only)."""

    def plus(self, other: Usage | AgentEvent) -> Usage:
        """This total with ``other``'s figures (an event's increments, or another total) added."""
        cost = self.cost_usd
        if other.cost_usd is not None:
            cost = (cost or 0.0) + other.cost_usd
        return Usage(
            tokens_in=self.tokens_in + (other.tokens_in or 0),
            tokens_out=self.tokens_out + (other.tokens_out or 0),
            cost_usd=cost,
        )


def total_usage(events: Iterable[AgentEvent]) -> Usage:
    """The sum of the increments ``events`` carry: a run's totals when given all its events."""
    total = Usage()
    for event in events:
        total = total.plus(event)
    return total


# --- plain text -------------------------------------------------------------------------------

#: Terminal escape sequences: CSI (also the one-byte 0x9b form), OSC and the string controls
#: (up to BEL or ST, or to the end when unterminated), and two-byte escapes. All linear.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)
#: Lone surrogates (JSON's ``"\ud800"`` decodes to one); they cannot be written as UTF-8.
_SURROGATES = re.compile("[\ud800-\udfff]")


def writable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so it can be written as UTF-8."""
    return text if text.isascii() else _SURROGATES.sub("\ufffd", text)


def plain(text: str) -> str:
    """``text`` without escape sequences and lone surrogates; line breaks are kept."""
    if text.isascii() and "\x1b" not in text:
        return text
    return writable(_ESCAPES.sub("", text))


def one_line(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    """``text`` as one line of at most ``limit`` characters, safe to store (see module docstring).

    Only the first few times ``limit`` characters are looked at, so a megabyte of agent text
    costs no more than a short one.
    """
    # Masked before it is escaped or cut, either of which would hide a key from the host's own
    # scan: an escape makes a control inside a key four characters of text, a cut leaves part.
    text = mask_secrets(text[: limit * 4])
    if not (text.isascii() and text.isprintable()):
        text = inert(" ".join(plain(text).split()), keep_lines=False, keep_tabs=False)
    elif "  " in text or text[:1] == " " or text[-1:] == " ":
        text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def first_line(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    """The first non-blank line of ``text``, as `one_line` makes it."""
    for line in text[: limit * 4].splitlines():
        if line.strip():
            return one_line(line, limit)
    return ""


def count(value: object) -> int | None:
    """``value`` when it is a token count JSON may hold (a non-negative integer in range)."""
    if type(value) is int and 0 <= value <= MAX_COUNT:
        return value
    return None


def dollars(value: object) -> float | None:
    """``value`` when it is a plausible cost (a finite, non-negative number), as a float."""
    if type(value) in (int, float):
        amount = float(value)  # type: ignore[arg-type]
        if math.isfinite(amount) and 0.0 <= amount < 1e12:
            return amount
    return None


# --- classing tool calls ----------------------------------------------------------------------

_SHELL_TOOLS = frozenset(
    {"bash", "shell", "command_execution", "exec_command", "local_shell", "run_shell_command"}
)
_READ_TOOLS = frozenset(
    {"read", "view", "ls", "list", "notebookread", "read_file", "list_dir", "webfetch", "fetch"}
)
_SEARCH_TOOLS = frozenset(
    {"grep", "glob", "search", "codesearch", "websearch", "web_search", "find", "file_search"}
)
_EDIT_TOOLS = frozenset(
    {
        "edit",
        "multiedit",
        "write",
        "notebookedit",
        "apply_patch",
        "patch",
        "file_change",
        "write_file",
        "str_replace_editor",
        "str_replace_based_edit_tool",
    }
)
_PLAN_TOOLS = frozenset({"todowrite", "todo_list", "update_plan", "exitplanmode", "plan"})

#: Programs that run a test suite whatever their arguments.
_TEST_PROGRAMS = frozenset(
    {
        "pytest",
        "py.test",
        "tox",
        "nox",
        "jest",
        "vitest",
        "mocha",
        "ava",
        "rspec",
        "phpunit",
        "ctest",
        "karma",
        "nosetests",
        "trial",
        "unittest",
    }
)
#: Build tools whose ``test`` subcommand (or a ``test…`` script) runs the tests.
_TEST_SUBCOMMAND = frozenset(
    {
        "npm",
        "yarn",
        "pnpm",
        "bun",
        "go",
        "cargo",
        "dotnet",
        "mix",
        "deno",
        "swift",
        "bazel",
        "bazelisk",
        "mvn",
        "gradle",
        "gradlew",
        "sbt",
        "lein",
        "stack",
        "cabal",
        "make",
        "rake",
        "zig",
        "hatch",
    }
)
_TEST_WORDS = frozenset({"test", "tests", "t", "check", "nextest", "verify", "spec"})
_READ_PROGRAMS = frozenset(
    {"cat", "head", "tail", "less", "more", "bat", "ls", "tree", "wc", "stat", "nl"}
)
_SEARCH_PROGRAMS = frozenset({"grep", "egrep", "rg", "ag", "ack", "find", "fd", "fdfind"})
_GIT_READS = frozenset({"diff", "log", "show", "status", "blame"})
#: Words that run the command after them (a time limit's duration is skipped too).
_WRAPPERS = frozenset(
    {"sudo", "env", "time", "nice", "nohup", "command", "exec", "xvfb-run", "npx", "pnpx", "bunx"}
)
_RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "bundle"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_OPERATORS = re.compile(r"&&|\|\||[;|&\n]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: How much of a command is looked at: enough for any real command line.
_COMMAND_CHARS = 4_096
_RANK: Final[dict[Phase, int]] = {
    "committing": 5,
    "testing": 4,
    "editing": 3,
    "searching": 2,
    "reading": 1,
    "tool": 0,
}


#: A shell word: unquoted characters, single- or double-quoted strings and escapes, run together.
_WORD = re.compile(r"""(?:[^\s'"\\]+|'[^']*'|"(?:\\.|[^"\\])*"|\\.)+""")
_QUOTED = re.compile(r"""'([^']*)'|"((?:\\.|[^"\\])*)"|\\(.)""")
_ESCAPED = re.compile(r"\\(.)")


def _unquote(match: re.Match[str]) -> str:
    single, double, escaped = match.groups()
    if single is not None:
        return single
    if double is not None:
        return _ESCAPED.sub(r"\1", double)
    return escaped or ""


def _words(part: str) -> list[str]:
    """``part`` split into words as a shell would, near enough to class a command (a quote left
    open is dropped rather than refused). Linear, and much cheaper than `shlex.split`."""
    if "'" not in part and '"' not in part and "\\" not in part:
        return part.split()
    return [_QUOTED.sub(_unquote, word) for word in _WORD.findall(part)]


def unwrap_shell(command: str) -> str:
    """The script inside ``bash -lc '…'`` (or ``sh -c``), else ``command`` as it is."""
    words = _words(command[:_COMMAND_CHARS].strip())
    if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in _SHELLS:
        flags = words[1]
        if flags.startswith("-") and not flags.startswith("--") and "c" in flags:
            return words[2]
    return command


def _program(words: list[str]) -> list[str]:
    """``words`` from the program that does the work: assignments and wrappers skipped."""
    while words:
        head = words[0].rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(words[0]):
            words = words[1:]
        elif head in _WRAPPERS:
            words = words[1:]
        elif head == "timeout" and len(words) > 1:
            words = words[2:]
        elif head in _RUNNERS and len(words) > 1 and words[1] in ("run", "exec"):
            words = words[2:]
        elif head.startswith("python") and len(words) > 2 and words[1] == "-m":
            words = words[2:]
        else:
            return words
    return words


def _git_subcommand(args: list[str]) -> str:
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-C", "-c"):
            index += 2
        elif arg.startswith("-"):
            index += 1
        else:
            return arg
    return ""


def _simple_phase(words: list[str]) -> Phase:
    words = _program(words)
    if not words:
        return "tool"
    program = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if program in _SHELLS and len(args) >= 2 and args[0].startswith("-") and "c" in args[0]:
        return phase_of_command(args[1])
    if program == "git":
        sub = _git_subcommand(args)
        if sub == "commit":
            return "committing"
        if sub == "grep":
            return "searching"
        if sub == "apply":
            return "editing"
        return "reading" if sub in _GIT_READS else "tool"
    if program in _TEST_PROGRAMS:
        return "testing"
    if program in _TEST_SUBCOMMAND and args:
        sub = args[1] if args[0] == "run" and len(args) > 1 else args[0]
        if sub in _TEST_WORDS or sub.startswith(("test:", "test-")):
            return "testing"
    if program == "sed":
        return "editing" if any(arg.startswith("-i") for arg in args) else "reading"
    if program == "patch":
        return "editing"
    if program in _SEARCH_PROGRAMS:
        return "searching"
    if program in _READ_PROGRAMS:
        return "reading"
    return "tool"


def phase_of_command(command: str) -> Phase:
    """What a shell command is for: ``testing``, ``committing``, ``editing``, ``searching``,
    ``reading``, or ``tool`` when it is none of these.

    A compound command (``cd app && pytest -q``) takes the most telling phase of its parts, in
    the order committing, testing, editing, searching, reading. Wrappers (``uv run``,
    ``python -m``, ``timeout 60``, ``FOO=1``, ``bash -lc '…'``) are looked through. It is a
    heuristic over at most the first 4,096 characters, never an interpretation of the shell.
    """
    best: Phase = "tool"
    for part in _OPERATORS.split(command[:_COMMAND_CHARS]):
        words = _words(part)
        if words:
            phase = _simple_phase(words)
            if _RANK[phase] > _RANK[best]:
                best = phase
    return best


def _command_of(tool_input: Mapping[str, Any]) -> str:
    value = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(word, str) for word in value[:64]):
        return " ".join(value[:64])
    return ""


def phase_of_tool(name: str, tool_input: object = None) -> Phase:
    """The phase a tool call belongs to, from the tool's name and (for a shell) its command.

    ``Read``/``LS``/``WebFetch`` read, ``Grep``/``Glob``/``WebSearch`` search,
    ``Edit``/``Write``/``MultiEdit``/``apply_patch``/``file_change`` edit, ``TodoWrite`` and
    plan updates plan, and ``Bash`` (or any shell tool) is classed by its command with
    `phase_of_command`. Names are compared without case; anything else is ``tool``.
    """
    key = name.lower() if isinstance(name, str) else ""
    if key in _SHELL_TOOLS:
        command = _command_of(tool_input) if isinstance(tool_input, Mapping) else ""
        return phase_of_command(command)
    if key in _READ_TOOLS:
        return "reading"
    if key in _SEARCH_TOOLS:
        return "searching"
    if key in _EDIT_TOOLS:
        return "editing"
    if key in _PLAN_TOOLS:
        return "planning"
    return "tool"


# --- describing tool calls --------------------------------------------------------------------


def short_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies inside it (agents often give absolute paths)."""
    if cwd:
        root = cwd.rstrip("/") + "/"
        if path.startswith(root) and len(path) > len(root):
            return path[len(root) :]
    return path


def _text(mapping: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def describe_plan(items: Sequence[object]) -> str:
    """A to-do list as one line: how many are done, and the one in progress (or next)."""
    total = done = 0
    current = upcoming = ""
    for item in items[:200]:
        if not isinstance(item, Mapping):
            continue
        total += 1
        text = _text(item, "content", "text", "step", "activeForm")
        status = item.get("status")
        if status == "completed" or item.get("completed") is True:
            done += 1
        elif status == "in_progress" and not current:
            current = text
        elif not upcoming:
            upcoming = text
    line = f"plan: {done}/{total} done"
    if current:
        line += f"; now: {current}"
    elif upcoming:
        line += f"; next: {upcoming}"
    return line


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


def describe_files(paths: Sequence[str], verb: str) -> str:
    """``edit a.py, b.py (+3 more)``."""
    shown = ", ".join(paths[:3])
    more = f" (+{len(paths) - 3} more)" if len(paths) > 3 else ""
    return f"{verb} {shown}{more}" if paths else verb


def describe_tool(name: str, tool_input: object, cwd: str | None = None) -> str:
    """A tool call as one line an operator reads: ``read src/app.py``, ``run: pytest -q``."""
    args: Mapping[str, Any] = tool_input if isinstance(tool_input, Mapping) else {}
    key = name.lower()
    path = short_path(_text(args, "file_path", "filePath", "notebook_path", "path"), cwd)
    if key in _SHELL_TOOLS:
        return one_line(f"run: {unwrap_shell(_command_of(args))}")
    if key in ("read", "view", "notebookread", "read_file"):
        line = f"read {path}" if path else "read a file"
    elif key in ("ls", "list", "list_dir"):
        line = f"list {path or '.'}"
    elif key in ("webfetch", "fetch"):
        line = f"fetch {_text(args, 'url')}".rstrip()
    elif key in ("grep", "search", "codesearch", "find", "file_search"):
        pattern = _text(args, "pattern", "query")
        line = f"search for '{pattern}'" + (f" in {path}" if path else "")
    elif key == "glob":
        line = f"find files {_text(args, 'pattern')}" + (f" in {path}" if path else "")
    elif key in ("websearch", "web_search"):
        line = f"web search: {_text(args, 'query')}"
    elif key == "multiedit":
        edits = args.get("edits")
        changes = f" ({len(edits)} changes)" if isinstance(edits, list) else ""
        line = f"edit {path}{changes}"
    elif key in ("write", "write_file"):
        line = f"write {path}" if path else "write a file"
    elif key in ("apply_patch", "patch"):
        files = _PATCH_FILE.findall(_text(args, "patchText", "patch", "input")[:65_536])
        line = describe_files([short_path(f.strip(), cwd) for f in files], "patch")
    elif key in _EDIT_TOOLS:
        line = f"edit {path}" if path else "edit a file"
    elif key in ("todowrite", "update_plan"):
        todos = args.get("todos", args.get("plan"))
        line = describe_plan(todos) if isinstance(todos, list) else "update the plan"
    elif key in ("task", "agent"):
        line = f"delegate: {_text(args, 'description', 'prompt')}".rstrip(": ")
    else:
        line = name
    return one_line(line)
