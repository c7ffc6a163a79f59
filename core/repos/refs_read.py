"""A run's repository's refs, read as files: git is never run in a repository a worker wrote.

A run's repository (its checkout's ``.git``) is the worker's to write, configuration included,
and a configuration can name programs git runs (a filter, an fsmonitor, an ``include`` of any
file). So the host reads the refs it needs as git keeps them on disk — loose ref files, then
``packed-refs`` — each file opened without following a link, refusing anything that is not a
regular file (a FIFO would block the reader), within size and count bounds. What it finds is
data for a host-owned repository (`core.repos.view`), never a path git is pointed at.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

#: A loose ref file is a sha or ``ref: NAME`` and a line feed; anything larger is not one.
MAX_REF_BYTES = 1024
#: ``packed-refs`` of a repository with very many refs; past this it is not read.
MAX_PACKED_BYTES = 64 * 1024 * 1024
#: Refs read at most: a repository a worker filled with more is read only this far.
MAX_REFS = 20_000
#: Symbolic refs followed in a row at most (git's own limit is 5).
MAX_DEPTH = 5

_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
#: What git accepts in a ref name, narrowed: no control character, space or the characters
#: check-ref-format refuses, no ``..``, no ``@{``, no part starting with ``.``.
_NAME = re.compile(r"(?:refs/|HEAD$)[^\x00-\x20\x7f~^:?*\[\\]*")


class RefsUnreadable(Exception):
    """The repository's refs cannot be read as files; ``str()`` is a sentence saying why."""


def _name_ok(name: str) -> bool:
    return (
        bool(_NAME.fullmatch(name))
        and ".." not in name
        and "@{" not in name
        and "//" not in name
        and not name.endswith((".lock", "/", "."))
        and "/." not in name
    )


def read_small(path: Path, limit: int) -> bytes | None:
    """The bytes of the regular file ``path`` (not a link), or None when it is none or is
    larger than ``limit``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= limit else None
    finally:
        os.close(fd)


@dataclass
class RepoRefs:
    """A repository's refs as found on disk."""

    git_dir: Path
    direct: dict[str, str] = field(default_factory=dict)
    """Full ref name → the sha it holds."""
    symbolic: dict[str, str] = field(default_factory=dict)
    """Full ref name (``HEAD``, ``refs/remotes/origin/HEAD``) → the ref it names."""
    truncated: bool = False
    """More refs were found than `MAX_REFS`; the rest were not read."""

    def resolve(self, name: str) -> str | None:
        """The sha the full ref ``name`` holds, following symbolic refs; None when it holds
        none."""
        for _ in range(MAX_DEPTH + 1):
            if name in self.direct:
                return self.direct[name]
            target = self.symbolic.get(name)
            if target is None:
                return None
            name = target
        return None

    def lookup(self, short: str) -> str | None:
        """The sha a name as a person writes it (``main``, ``origin/main``, ``HEAD``, a full
        name) holds, in git's order of precedence."""
        for candidate in (short, f"refs/{short}", f"refs/tags/{short}", f"refs/heads/{short}",
                          f"refs/remotes/{short}", f"refs/remotes/{short}/HEAD"):  # fmt: skip
            found = self.resolve(candidate)
            if found is not None:
                return found
        return None

    def all_direct(self) -> dict[str, str]:
        """Every ref (symbolic ones resolved) under ``refs/``: what a copy of the refs holds."""
        found = {name: sha for name, sha in self.direct.items() if name.startswith("refs/")}
        for name in self.symbolic:
            sha = self.resolve(name)
            if sha is not None and name.startswith("refs/"):
                found[name] = sha
        return found


def git_dir_of(repo: Path) -> Path:
    """The ``.git`` folder of the work tree ``repo``, which must be a real folder.

    Raises:
        RefsUnreadable: ``.git`` is missing, a link, or a file (a linked worktree's pointer to
            another repository, which the host does not follow).
    """
    git_dir = repo / ".git"
    try:
        mode = os.lstat(git_dir).st_mode
    except OSError:
        raise RefsUnreadable(f"{repo} holds no .git folder.") from None
    if stat.S_ISLNK(mode):
        raise RefsUnreadable(f"{git_dir} is a symbolic link; the host does not follow it.")
    if not stat.S_ISDIR(mode):
        raise RefsUnreadable(
            f"{git_dir} is not a folder (a linked worktree's pointer); the host reads only a "
            "repository of the checkout's own."
        )
    return git_dir


def _parse_value(data: bytes) -> tuple[str, str] | None:
    """``("sha", value)`` or ``("ref", name)`` from a loose ref file's text."""
    try:
        text = data.decode("ascii").strip()
    except UnicodeDecodeError:
        return None
    if _SHA.fullmatch(text):
        return "sha", text
    if text.startswith("ref:"):
        target = text[4:].strip()
        if _name_ok(target):
            return "ref", target
    return None


def read_refs(git_dir: Path) -> RepoRefs:
    """Every ref of the repository at ``git_dir`` (and its ``HEAD``), as the files say.

    Raises:
        RefsUnreadable: the refs are kept in a way the host does not read (reftable).
    """
    if os.path.lexists(git_dir / "reftable"):
        raise RefsUnreadable(
            f"{git_dir} keeps its refs in the reftable format, which the host does not read."
        )
    found = RepoRefs(git_dir)
    packed = read_small(git_dir / "packed-refs", MAX_PACKED_BYTES)
    if packed:
        for line in packed.decode("ascii", "replace").splitlines():
            if line.startswith(("#", "^")) or " " not in line:
                continue
            sha, name = line.split(" ", 1)
            if _SHA.fullmatch(sha) and _name_ok(name):
                found.direct[name] = sha
                if len(found.direct) >= MAX_REFS:
                    found.truncated = True
                    break
    loose = 0
    for path, name in _walk(git_dir / "refs", "refs"):
        if loose >= MAX_REFS:
            found.truncated = True
            break
        loose += 1
        _take(found, name, read_small(path, MAX_REF_BYTES))
    _take(found, "HEAD", read_small(git_dir / "HEAD", MAX_REF_BYTES))
    return found


def _take(found: RepoRefs, name: str, data: bytes | None) -> None:
    value = _parse_value(data) if data else None
    if value is None or not _name_ok(name):
        return
    kind, text = value
    # A loose ref wins over its packed copy, as in git.
    if kind == "sha":
        found.symbolic.pop(name, None)
        found.direct[name] = text
    else:
        found.direct.pop(name, None)
        found.symbolic[name] = text


def _walk(folder: Path, prefix: str, depth: int = 0) -> list[tuple[Path, str]]:
    """Regular files under ``folder`` (no links followed), with their ref names."""
    if depth > 32:
        return []
    out: list[tuple[Path, str]] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return out
    for entry in entries:
        name = f"{prefix}/{entry.name}"
        try:
            if entry.is_dir(follow_symlinks=False):
                out.extend(_walk(Path(entry.path), name, depth + 1))
            elif entry.is_file(follow_symlinks=False) and not entry.name.endswith(".lock"):
                out.append((Path(entry.path), name))
        except OSError:
            continue
        if len(out) > MAX_REFS:
            break
    return out
