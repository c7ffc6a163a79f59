"""The console's test store plus worker logs where the host writes them.

``run-failed`` has a stdout of numbered build lines that ends with hostile worker text and a
fake key, and a stderr with a traceback; ``run-running`` has a short stdout its tests append to,
as its worker would; ``run-queued`` has none.
"""

from __future__ import annotations

from pathlib import Path

from core.worker_logs import attempt_dir
from tests.tui.conftest import build_store

FAKE_KEY = "sk-ant-api03-" + "Ab3dE5fG7h" * 9
#: Escape sequences a terminal would act on, markup a console would style, a colour code.
HOSTILE = "\x1b]0;pwned\x07\x1b[2J [bold]x[/] \x1b[31mred\x1b[0m \u202eevil"
BUILD_LINES = 60


def build_log_store(db_path: Path) -> Path:
    build_store(db_path)
    root = db_path.parent
    failed = attempt_dir(root, "run-failed", 1)
    failed.mkdir(parents=True)
    lines = [f"[{n:03d}] compiling module_{n:03d}.py\tok" for n in range(1, BUILD_LINES + 1)]
    lines += [f"worker says: {HOSTILE}", f"export ANTHROPIC_API_KEY={FAKE_KEY}", "build failed"]
    (failed / "stdout.log").write_text("\n".join(lines) + "\n", "utf-8")
    (failed / "stderr.log").write_text(
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "ValueError: the fixture file tests/data/users.json is broken\n",
        "utf-8",
    )
    running = attempt_dir(root, "run-running", 1)
    running.mkdir(parents=True)
    (running / "stdout.log").write_text("reading the failing test\n", "utf-8")
    return db_path
