"""What the diff parser (`core.contracts.diffparse`) returns: each file's change, the lines it
adds, and the problems met reading it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

FileStatus = Literal["added", "deleted", "modified", "renamed", "copied"]


@dataclass(frozen=True, slots=True)
class AddedLine:
    """One added line and where it lands in the new file."""

    line: int
    """1-based line number in the new version of the file."""
    text: str
    """The line without the leading ``+`` and without a line ending."""


@dataclass(frozen=True, slots=True)
class DiffProblem:
    """Something in the patch that is not a well-formed diff."""

    line: int
    """1-based line number in the patch."""
    code: str
    """Stable snake_case identifier, e.g. ``truncated_hunk``."""
    message: str
    """One sentence for people."""

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class FileDiff:
    """The change to one file."""

    old_path: str | None
    """Path before the change; None for an added file."""
    new_path: str | None
    """Path after the change; None for a deleted file."""
    status: FileStatus
    """added, deleted, modified, renamed or copied."""
    additions: int
    """Number of ``+`` lines in the file's hunks."""
    deletions: int
    """Number of ``-`` lines in the file's hunks."""
    is_binary: bool
    """True for ``Binary files ... differ`` and ``GIT binary patch``."""
    old_mode: str | None
    """File mode before (``old mode`` / ``deleted file mode``), e.g. ``100644``."""
    new_mode: str | None
    """File mode after (``new mode`` / ``new file mode``), e.g. ``100755``."""
    similarity: int | None
    """Rename or copy similarity in percent, when given."""
    added_lines: tuple[AddedLine, ...]
    """Every added line with its new-file line number."""

    @property
    def path(self) -> str:
        """The path to show: the new path, or the old one for a deletion."""
        return self.new_path or self.old_path or ""

    @property
    def paths(self) -> tuple[str, ...]:
        """Every distinct path the change touches (both sides of a rename)."""
        out: list[str] = []
        for p in (self.old_path, self.new_path):
            if p is not None and p not in out:
                out.append(p)
        return tuple(out)

    @property
    def mode_changed(self) -> bool:
        """True when an existing file's mode changes (e.g. it becomes executable)."""
        return (
            self.old_mode is not None
            and self.new_mode is not None
            and self.old_mode != self.new_mode
        )


@dataclass(frozen=True, slots=True)
class ParsedDiff:
    """A whole patch: its files and whatever could not be parsed."""

    files: tuple[FileDiff, ...]
    problems: tuple[DiffProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def files_changed(self) -> int:
        return len(self.files)

    @property
    def additions(self) -> int:
        return sum(f.additions for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f.deletions for f in self.files)
