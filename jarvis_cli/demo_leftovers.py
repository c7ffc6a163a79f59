"""Temporary demo workspaces left behind by a demo that was killed, found and removed later.

A demo removes its temporary workspace on the way out, however it ends, except after
``kill -9``: then nothing of it runs any more (its host and fleet die with it), but the
directory stays. Each temporary workspace names its owner in ``demo.owner`` (pid and start
time, so a reused pid is not mistaken for it); the next `jarvis demo` removes every such
directory of this user whose owner is gone and which no host holds. A directory without the
file, another user's, or one still in use is never touched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from core.service.hosting import HostLock

PREFIX = "jarvis-demo-"
OWNER_FILE = "demo.owner"


def _started(pid: int) -> str | None:
    """When ``pid`` started (clock ticks since boot), or None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[19] if len(fields) > 19 else None  # field 22 of proc(5), after the name


def make_temporary() -> Path:
    """A new temporary demo workspace, owned by this process."""
    root = Path(tempfile.mkdtemp(prefix=PREFIX))
    (root / OWNER_FILE).write_text(f"{os.getpid()} {_started(os.getpid()) or ''}\n", "utf-8")
    return root


def _owner_gone(root: Path) -> bool:
    try:
        pid_text, _, started = (root / OWNER_FILE).read_text("utf-8").strip().partition(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return False  # no owner we can judge: not ours to remove
    now = _started(pid)
    return now is None or (bool(started) and now != started)


def remove_leftovers(base: Path | None = None) -> list[Path]:
    """Remove this user's temporary demo workspaces whose demo is gone; the ones removed."""
    base = base if base is not None else Path(tempfile.gettempdir())
    removed: list[Path] = []
    for root in sorted(base.glob(f"{PREFIX}*")):
        try:
            if root.is_symlink() or not root.is_dir() or root.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        if not (root / OWNER_FILE).is_file() or not _owner_gone(root):
            continue
        if HostLock.holder(root) is not None:
            continue  # a host still works there (it stops once it notices its demo is gone)
        shutil.rmtree(root, ignore_errors=True)
        if not root.exists():
            removed.append(root)
    return removed
