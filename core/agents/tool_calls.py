"""How a coding agent's tool calls and shell commands are classed (the event's phase: reading,
testing, editing, …) and described in one line an operator reads (``read src/app.py``,
``run: pytest -q``), whichever agent made them."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from core.agents.events import Phase, one_line

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
