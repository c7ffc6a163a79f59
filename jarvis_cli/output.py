"""Writing results: one JSON object for scripts, or a readable Rich rendering for people.

Text from workers and dispatchers — progress, reasons, gate details, command output, file names,
the values quoted in error messages — must reach a terminal as text, never as a control. One place
makes sure, so that a field added tomorrow cannot forget it: `InertConsole`, the only console the
commands print through.

- Every ``str`` it prints (arguments, table cells, titles) becomes plain text: no markup, no emoji
  codes, and every control character shown as an escape (`escape`), new lines included.
- Every `Text` it renders has its controls escaped the same way before it is laid out, new lines
  included: a new line in a worker's text could otherwise forge a line of output (``show``'s
  fields, a table's rows). `Lines` is the one exception, for output that is lines by nature (a
  command's output tail); each of its lines is still escaped.
- The segments it writes are escaped once more, a last line of defence for any other renderable.

JSON output escapes every control character too, including the C1 range and the bidirectional
controls that ``json.dumps`` leaves alone with ``ensure_ascii=False``, so even a terminal showing
raw ``--json`` output executes nothing a worker wrote. Messages for stderr go through `escape`.

Secrets are masked on the way out as well (`core.contracts.secrets_scan.mask_secrets`, which
reads a text as a person would, escapes taken out), always before any escaping: the engine masks
worker text as it stores it, and this covers what a store written before a rule still holds. Once
a control is escaped it is text, and a key it splits no longer reads as a key.
"""

from __future__ import annotations

import json
import logging
import sys
import traceback
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

from core.service.text import JSON_UNSAFE, escaped, inert, mask_secrets, unsafe


def escape(text: str, *, keep_new_lines: bool = False) -> str:
    """``text`` with its secrets masked, then every control character shown as a visible escape
    (``\\x1b``, ``\\n``).

    Args:
        keep_new_lines: leave line feeds as they are, for text that is lines by nature.
    """
    return inert(mask_secrets(text), keep_lines=keep_new_lines, keep_tabs=False)


def data(value: object, style: str = "") -> Text:
    """A value from a store, a document or an argument, as text for a table or a line.

    Escaped here rather than only when rendered: Rich drops some controls (BEL, CR, ...) when a
    `Text` is made, and measures a cell before it is rendered, so escaping first shows every
    character and gives the column the width the escapes take.
    """
    return Text(escape(str(value)), style=style)


class Lines(Text):
    """Text whose new lines are meant (a command's output tail): shown line by line, each line
    still escaped. Every other `Text` is shown on one line."""


def _inert_text(text: Text) -> Text:
    """``text`` with its secrets masked and its controls escaped, its styles kept on the
    characters around the escapes (a text with a secret to mask keeps only its own style)."""
    plain = text.plain
    masked = mask_secrets(plain)
    if masked != plain:
        text = _restyled(text, masked)
        plain = masked
    pattern = unsafe(keep_lines=isinstance(text, Lines), keep_tabs=False)
    if not pattern.search(plain):
        return text
    inert_copy = text.blank_copy()
    start = 0
    for match in pattern.finditer(plain):
        inert_copy.append_text(text[start : match.start()])
        inert_copy.append(escaped(match))
        start = match.end()
    inert_copy.append_text(text[start:])
    return inert_copy


def _restyled(text: Text, plain: str) -> Text:
    copy = text.blank_copy()
    copy.append(plain)
    return copy


def _masked(value: Any) -> Any:
    """Every string in a JSON value with its secrets masked; keys are this program's own."""
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(item) for item in value]
    return value


class InertConsole(Console):
    """A Rich console through which nothing it is given reaches the terminal as a control."""

    def render_str(self, text: str, *, style: str | Style = "", **options: Any) -> Text:
        """A plain string as plain text: no markup, no emoji codes, controls escaped."""
        return Text(
            escape(text),
            style=style,
            justify=options.get("justify"),
            overflow=options.get("overflow"),
        )

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        """Render as Rich does, with every `Text` escaped first and every segment after."""
        if isinstance(renderable, Text):
            renderable = _inert_text(renderable)
        for segment in super().render(renderable, options):
            if segment.control is None and unsafe(keep_tabs=False).search(segment.text):
                # Rich's own line breaks are separate segments: a new line here is layout.
                segment = Segment(escape(segment.text, keep_new_lines=True), segment.style)
            yield segment


class InertLogFormatter(logging.Formatter):
    """Log records for a terminal or a log file someone tails: each message on one line with its
    controls escaped, so a worker's file name or text in it cannot forge a record or act on the
    terminal; a traceback keeps its lines, each escaped."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        return escape(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:  # noqa: N802 (logging's name)
        parts = []
        for part in traceback.TracebackException(*ei[:3]).format():
            body = part.removesuffix("\n")
            # A frame's lines are the code's; an exception's message is anyone's, one line.
            parts.append(escape(body, keep_new_lines=body.startswith('  File "')))
        return "\n".join(parts)

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 (logging's name)
        return escape(super().formatStack(stack_info), keep_new_lines=True)


def dumps(obj: Any) -> str:
    """Serialise for ``--json``: UTF-8 readable, secrets masked, every control escaped."""
    text = json.dumps(_masked(obj), ensure_ascii=False, allow_nan=False)
    # Those characters can only occur inside JSON strings, where a \\u escape is always valid.
    return JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def emit_json(obj: Any) -> None:
    sys.stdout.write(dumps(obj) + "\n")
    sys.stdout.flush()


def console() -> Console:
    """The console every command prints through (see `InertConsole`)."""
    # highlight=False: Rich's repr highlighter would colour worker text by guesswork.
    return InertConsole(highlight=False, soft_wrap=False, markup=False, emoji=False)


#: The width a table is laid out in for a pipe: wider than any row, so no value is cut or folded.
PIPE_WIDTH = 100_000


def whole_when_piped(out: Console) -> bool:
    """Lay ``out``'s tables out with every value whole when it is not a terminal (a pipe, a file:
    for grep and cut, where 80 folded columns help no one); True when it is piped. A table that
    expands to the width must not expand then."""
    piped = not out.is_terminal
    if piped:
        out.width = PIPE_WIDTH
    return piped


def verdict_line(ok: bool, label: str, note: str = "") -> Table:
    """``✓ label  note`` (or ``✗``). Label and note wrap in columns of their own, so no line
    they wrap onto starts where a line of ours would."""
    line = Table.grid(padding=(0, 0, 0, 1))
    line.add_column(no_wrap=True)
    line.add_column(overflow="fold", max_width=40)
    mark = Text("✓", style="bold green") if ok else Text("✗", style="bold red")
    cells: list[RenderableType] = [mark, data(label, "bold")]
    if note:
        line.add_column(overflow="fold", ratio=1)
        cells.append(Text.assemble(" ", data(note, "dim")))
    line.add_row(*cells)
    return line


def fields(pairs: Iterable[tuple[str, object]]) -> Table:
    """``  name   value`` lines; a long value wraps in its own column, never under the names."""
    grid = Table.grid(padding=(0, 0, 0, 1))
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column(overflow="fold")
    for name, value in pairs:
        grid.add_row(f"  {name:<21}", data(value))
    return grid


def quoted(lines: Iterable[str], *, style: str = "dim") -> Table:
    """Lines someone else wrote (a worker's stderr), each behind a ``│`` gutter: however they are
    laid out, they cannot pass for this command's own lines, and a long one wraps after the
    gutter."""
    grid = Table.grid(padding=(0, 0, 0, 1))
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column(overflow="fold", style=style)
    for line in lines:
        grid.add_row("  │", data(line))
    return grid


def errors_table(errors: list[dict[str, Any]], *, title: str = "errors") -> Table:
    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    table.add_column("field", overflow="fold", max_width=36)
    table.add_column("code", overflow="fold", max_width=30)
    table.add_column("message", overflow="fold")
    for err in errors:
        table.add_row(
            data(err.get("field", "")),
            data(err.get("code", ""), "yellow"),
            data(err.get("message", "")),
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
            data(gate.get("name", "")),
            data(gate.get("detail", ""), "" if passed else "red"),
        )
    return table


def write_error(line: str) -> None:
    """Write one line to stderr, every control character escaped, new lines included: what a
    message quotes (a path, an argument, a worker's text) cannot start a line of its own."""
    sys.stderr.write(escape(line) + "\n")


def usage_error(code: str, message: str, *, as_json: bool, lines: Sequence[str] = ()) -> int:
    """Report a usage or I/O error (exit 2): one JSON object, or ``jarvis: message`` on stderr.

    Args:
        lines: more lines after the message, each escaped on its own (the end of a log).
    """
    if as_json:
        emit_json({"error": {"code": code, "message": "\n".join([message, *lines])}})
    else:
        write_error(f"jarvis: {message}")
        for line in lines:
            write_error(line)
    return 2
