"""Writing results: one JSON object for scripts, or a readable Rich rendering for people.

JSON output escapes every control character, including the C1 range that ``json.dumps`` leaves
alone with ``ensure_ascii=False``, so even a terminal showing raw ``--json`` output executes
nothing a worker wrote. Rich output builds `Text` objects from inert strings and never parses
markup in them.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from jarvis_tui.safe_text import inert

_C1 = re.compile(r"[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def dumps(obj: Any) -> str:
    """Serialise for ``--json``: UTF-8 readable, every control character escaped."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    # Those characters can only occur inside JSON strings, where a \\u escape is always valid.
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def emit_json(obj: Any) -> None:
    sys.stdout.write(dumps(obj) + "\n")
    sys.stdout.flush()


def console() -> Console:
    # highlight=False: Rich's repr highlighter would colour worker text by guesswork.
    return Console(highlight=False, soft_wrap=False)


def verdict_line(ok: bool, label: str, note: str = "") -> Text:
    mark = Text("✓ ", style="bold green") if ok else Text("✗ ", style="bold red")
    line = Text.assemble(mark, Text(inert(label), style="bold"))
    if note:
        line.append("  " + inert(note), style="dim")
    return line


def errors_table(errors: list[dict[str, Any]], *, title: str = "errors") -> Table:
    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    table.add_column("field", overflow="fold", max_width=36)
    table.add_column("code", overflow="fold", max_width=30)
    table.add_column("message", overflow="fold")
    for err in errors:
        table.add_row(
            Text(inert(str(err.get("field", "")))),
            Text(inert(str(err.get("code", ""))), style="yellow"),
            Text(inert(str(err.get("message", "")))),
        )
    return table


def gates_table(gates: list[dict[str, Any]]) -> Table:
    table = Table(title="completion gates", title_justify="left")
    table.add_column("", width=1)
    table.add_column("gate")
    table.add_column("detail", overflow="fold")
    for gate in gates:
        passed = bool(gate.get("passed"))
        table.add_row(
            Text("✓", style="green") if passed else Text("✗", style="red"),
            Text(inert(str(gate.get("name", "")))),
            Text(inert(str(gate.get("detail", ""))), style="" if passed else "red"),
        )
    return table


def write_error(text: str) -> None:
    """Write ``text`` to stderr, every control character escaped."""
    sys.stderr.write(inert(text) + "\n")


def usage_error(code: str, message: str, *, as_json: bool) -> int:
    if as_json:
        emit_json({"error": {"code": code, "message": message}})
    else:
        sys.stderr.write(f"jarvis: {inert(message)}\n")
    return 2
