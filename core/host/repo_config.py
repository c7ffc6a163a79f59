"""Adding and removing ``[repos."owner/name"]`` in ``jarvis.toml``, as ``jarvis repo`` does.

The file is someone's: it is edited with tomlkit, which keeps its comments, layout and every other
key (tomllib only reads). Each change is checked against the schema before it is written, and
written to a temporary file that replaces the old one, so the file is never half written and never
left invalid. The workspace folder is locked (``flock``) for the edit: two commands adding at once
both land.
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable, Table
from tomlkit.toml_document import TOMLDocument

from core.host.config import CONFIG_NAME, ConfigError, RepoConfig, config_from_text
from core.repos.git import repository_problem

T = TypeVar("T")

#: Paths are quoted whole in messages (a shortened one cannot be copied), still inert.


class RepoRefused(Exception):
    """The change was refused and nothing was written; ``message`` says why in a sentence.

    Attributes:
        code: ``repo_exists``, ``unknown_repo`` or ``not_a_repository``.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ConfigWriteError(ConfigError):
    """``jarvis.toml`` could not be written; it is as it was."""


def add_repo(workspace_root: Path, name: str, repo: RepoConfig, *, replace: bool = False) -> bool:
    """Write ``repo`` as ``[repos."<name>"]`` into the workspace's ``jarvis.toml``.

    The file is made when missing. A ``path`` must be a git repository (`repository_problem`).

    Args:
        replace: change an entry of that name instead of refusing it; keys the file has and
            ``repo`` leaves unset are removed, comments in the entry kept.

    Returns:
        Whether an entry of that name was replaced.

    Raises:
        RepoRefused: the name is taken (``repo_exists``) or the path is no repository
            (``not_a_repository``).
        ConfigError: the file cannot be read or is invalid already (`ConfigWriteError`: it
            cannot be written).
    """
    local = repo.resolved_path(workspace_root)
    if local is not None:
        problem = repository_problem(local)
        if problem:
            raise RepoRefused("not_a_repository", problem)

    def change(doc: TOMLDocument, current: dict[str, RepoConfig]) -> bool:
        if name in current and not replace:
            raise RepoRefused(
                "repo_exists",
                f"{name} is in {workspace_root / CONFIG_NAME} already; --replace changes it.",
            )
        _set_entry(doc, name, repo)
        return name in current

    return _edit(workspace_root, change)


def remove_repo(workspace_root: Path, name: str) -> RepoConfig:
    """Remove ``[repos."<name>"]`` from the workspace's ``jarvis.toml``; returns what it was.

    Raises:
        RepoRefused: there is no such entry (``unknown_repo``).
        ConfigError: the file cannot be read, is invalid, or cannot be written.
    """

    def change(doc: TOMLDocument, current: dict[str, RepoConfig]) -> RepoConfig:
        if name not in current:
            raise RepoRefused(
                "unknown_repo", f"{name} is not a repository in {workspace_root / CONFIG_NAME}."
            )
        repos = doc["repos"]
        assert isinstance(repos, dict)
        del repos[name]
        if not repos:
            del doc["repos"]
        return current[name]

    return _edit(workspace_root, change)


def _edit(workspace_root: Path, change: Callable[[TOMLDocument, dict[str, RepoConfig]], T]) -> T:
    """Apply ``change`` to the parsed file under the workspace's lock; validate, then write."""
    path = workspace_root / CONFIG_NAME
    with _locked(workspace_root):
        text = _read(path)
        current = config_from_text(text, path)  # an invalid file is fixed by hand, not by us
        try:
            doc = tomlkit.parse(text)
        except TOMLKitError as exc:
            raise ConfigError(f"{path} cannot be edited: {exc}.") from None
        result = change(doc, current.repos)
        dumped = tomlkit.dumps(doc)
        new_text = dumped.rstrip("\n") + "\n" if dumped.strip() else ""
        try:
            config_from_text(new_text, path)
        except ConfigError as exc:
            raise ConfigError(f"{exc} Nothing was written.") from None
        _write(path, new_text)
    return result


def _set_entry(doc: TOMLDocument, name: str, repo: RepoConfig) -> None:
    # The merge mode is written only when it is not the default: a file says what was chosen.
    values = {
        k: v
        for k, v in repo.model_dump().items()
        if v is not None and not (k == "merge" and v == "auto-merge")
    }
    repos: Any = doc.get("repos")
    if repos is None:
        repos = tomlkit.table(is_super_table=True)
        doc["repos"] = repos
    entry = repos.get(name)
    if isinstance(repos, InlineTable) or isinstance(entry, InlineTable):
        inline = tomlkit.inline_table()  # holds no comments: written anew, in its place
        inline.update(values)
        repos[name] = inline
        return
    if entry is not None:
        # Changed in place, so the entry's comments and its place in the file stay.
        for key in [k for k in entry if k not in values]:
            del entry[key]
        for key, value in values.items():
            entry[key] = value
        return
    table: Table = tomlkit.table()
    table.update(values)
    table.add(tomlkit.nl())  # a blank line before whatever table follows
    repos[name] = table


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except FileNotFoundError:
        return ""
    except (UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path} cannot be read: {exc}.") from None


def _write(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` in one step (through a symbolic link, to its target)."""
    target = path.resolve()
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = 0o644
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise ConfigWriteError(
            f"{path} cannot be written: {exc.strerror or exc}; it is unchanged."
        ) from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
