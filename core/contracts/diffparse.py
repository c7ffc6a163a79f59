"""A unified-diff parser for worker patches: which files change, how, and which lines are added.

It reads ``git diff`` output (extended headers, renames, copies, mode changes, binary markers,
quoted paths) and plain ``--- / +++`` unified diffs. It never raises on bad input: anything it
cannot make sense of becomes a `DiffProblem`, and the risk gate treats a patch with problems as
one it cannot vouch for. One pass over the lines, no backtracking regular expressions, so a
20 MB patch costs time proportional to its size.

Decisions where formats are loose:

* Paths are reported without the ``a/`` and ``b/`` prefixes; other prefixes (``--no-prefix``,
  ``diff -ru old/ new/``) are kept as written.
* ``/dev/null`` means "no such side": the old path of an added file and the new path of a
  deleted one are None.
* Lines after a hunk has used up its line counts that still look like ``+``/``-`` lines are a
  problem (``line_outside_hunk``): tools disagree on whether to apply them, so a patch that has
  them is one whose effect is ambiguous. Their ``+`` text is still reported as added, so a
  secret cannot hide there.
* The content of ``GIT binary patch`` blocks is not decoded; such files are only marked binary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal

FileStatus = Literal["added", "deleted", "modified", "renamed", "copied"]

_HUNK = re.compile(r"@@ -(\d{1,18})(?:,(\d{1,18}))? \+(\d{1,18})(?:,(\d{1,18}))? @@")
_SIMILARITY = re.compile(r"(\d{1,3})%")
_MODE = re.compile(r"[0-7]{6}")
_BINARY_FILES = re.compile(r"Binary files (.+) and (.+) differ")

_ESCAPES: Final = {
    "a": 7,
    "b": 8,
    "t": 9,
    "n": 10,
    "v": 11,
    "f": 12,
    "r": 13,
    '"': 34,
    "\\": 92,
}
_PROBLEM_LIMIT: Final = 100
"""At most this many problems are kept; a garbage 20 MB file would otherwise yield millions."""


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


@dataclass(slots=True)
class _Builder:
    git: bool
    start_line: int
    header_old: str | None = None
    header_new: str | None = None
    header_sure: bool = True
    minus_path: str | None = None
    plus_path: str | None = None
    saw_minus_plus: bool = False
    minus_dev_null: bool = False
    plus_dev_null: bool = False
    rename_from: str | None = None
    rename_to: str | None = None
    copy_from: str | None = None
    copy_to: str | None = None
    new_file: bool = False
    deleted_file: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    similarity: int | None = None
    is_binary: bool = False
    hunks: int = 0
    additions: int = 0
    deletions: int = 0
    added: list[AddedLine] = field(default_factory=list)


def unquote_c(text: str) -> tuple[str | None, int]:
    """Decode a git C-style quoted path at the start of ``text``.

    Returns:
        The decoded path (octal escapes are UTF-8 bytes; undecodable bytes become U+FFFD) and the
        index just past the closing quote, or ``(None, 0)`` when the quote is not closed.
    """
    if not text.startswith('"'):
        return None, 0
    out = bytearray()
    i = 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            return out.decode("utf-8", "replace"), i + 1
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            octal = text[i + 1 : i + 4]
            if len(octal) == 3 and all(c in "01234567" for c in octal) and int(octal, 8) < 256:
                out.append(int(octal, 8))
                i += 4
                continue
            out.append(ord("\\"))
            i += 1
            continue
        out.extend(ch.encode("utf-8", "surrogatepass"))
        i += 1
    return None, 0


def _strip_prefix(path: str | None, prefix: str) -> str | None:
    if path is None:
        return None
    return path[len(prefix) :] if path.startswith(prefix) else path


def _header_value(value: str) -> str | None:
    """A path as written after ``rename from`` or ``---``: quoted, or the text up to a tab."""
    if value.startswith('"'):
        decoded, _ = unquote_c(value)
        return decoded
    # GNU diff puts a tab and a timestamp after the name; git adds nothing.
    return value.split("\t", 1)[0].rstrip("\r")


def _split_git_header(rest: str) -> tuple[str | None, str | None, bool]:
    """The two paths of ``diff --git <a> <b>``, prefixes still on, and whether the split is sure.

    Unquoted paths with spaces make the line ambiguous when the two paths differ; the other
    headers (``rename from``, ``---``) then say which paths are meant.
    """
    if rest.startswith('"'):
        a, end = unquote_c(rest)
        if a is None:
            return None, None, True
        tail = rest[end:].lstrip(" ")
        return a, (_header_value(tail) if tail else None), True
    if rest.endswith('"'):
        idx = rest.rfind(' "')
        if idx < 0:
            return None, None, True
        b, _ = unquote_c(rest[idx + 1 :])
        return rest[:idx], b, True
    n = len(rest)
    if n % 2 == 1:
        half = n // 2
        a, b = rest[:half], rest[half + 1 :]
        # Same path on both sides (the usual case) settles where a path with spaces splits.
        if rest[half] == " " and (a == b or (a[:2] == "a/" and b[:2] == "b/" and a[2:] == b[2:])):
            return a, b, True
    sure = rest.count(" ") == 1
    idx = rest.find(" b/")
    if idx < 0:
        idx = rest.find(" ")
    if idx < 0:
        return rest or None, None, True
    return rest[:idx], rest[idx + 1 :], sure


class _Parser:
    def __init__(self) -> None:
        self.files: list[FileDiff] = []
        self.problems: list[DiffProblem] = []
        self.cur: _Builder | None = None
        self.old_left = 0
        self.new_left = 0
        self.new_no = 0
        self.in_hunk = False
        self.skip_binary = False
        self.skip_unsupported = False

    def problem(self, line: int, code: str, message: str) -> None:
        if len(self.problems) < _PROBLEM_LIMIT:
            self.problems.append(DiffProblem(line, code, message))

    def finish(self, line_no: int) -> None:
        if self.in_hunk:
            self.problem(
                line_no,
                "truncated_hunk",
                "A hunk ends before the number of lines its @@ header promises.",
            )
            self.in_hunk = False
        self.skip_binary = False
        cur = self.cur
        self.cur = None
        if cur is None:
            return
        old = cur.rename_from or cur.copy_from
        new = cur.rename_to or cur.copy_to
        if old is None:
            old = None if cur.minus_dev_null else (cur.minus_path or cur.header_old)
        if new is None:
            new = None if cur.plus_dev_null else (cur.plus_path or cur.header_new)
        status: FileStatus
        if cur.rename_from is not None or cur.rename_to is not None:
            status = "renamed"
        elif cur.copy_from is not None or cur.copy_to is not None:
            status = "copied"
        elif cur.new_file or cur.minus_dev_null:
            status = "added"
            old = None
        elif cur.deleted_file or cur.plus_dev_null:
            status = "deleted"
            new = None
        else:
            status = "modified"
        if old is None and new is None:
            self.problem(cur.start_line, "missing_path", "A file in the patch names no path.")
            return
        if (
            cur.git
            and cur.header_sure
            and cur.header_old is not None
            and cur.header_new is not None
        ):
            # git apply refuses a file whose ---/+++ or rename lines disagree with its
            # 'diff --git' line; which path would really change is then unclear.
            if (old is not None and old != cur.header_old) or (
                new is not None and new != cur.header_new
            ):
                self.problem(
                    cur.start_line,
                    "inconsistent_paths",
                    "A file's 'diff --git' line and its other headers name different paths.",
                )
        if status in ("renamed", "copied") and (old is None or new is None):
            self.problem(
                cur.start_line, "missing_path", f"A {status} file lacks its old or new path."
            )
        if status == "added" and new is None:
            self.problem(cur.start_line, "missing_path", "An added file names no new path.")
            return
        if status == "deleted" and old is None:
            self.problem(cur.start_line, "missing_path", "A deleted file names no old path.")
            return
        self.files.append(
            FileDiff(
                old_path=old,
                new_path=new,
                status=status,
                additions=cur.additions,
                deletions=cur.deletions,
                is_binary=cur.is_binary,
                old_mode=cur.old_mode,
                new_mode=cur.new_mode,
                similarity=cur.similarity,
                added_lines=tuple(cur.added),
            )
        )

    def start_git(self, line_no: int, rest: str) -> None:
        self.finish(line_no)
        a, b, sure = _split_git_header(rest)
        if a is None or b is None:
            self.problem(line_no, "bad_file_header", "A 'diff --git' line does not name two paths.")
        self.cur = _Builder(
            git=True,
            start_line=line_no,
            header_old=_strip_prefix(a, "a/"),
            header_new=_strip_prefix(b, "b/"),
            header_sure=sure,
        )

    def hunk_line(self, line_no: int, line: str) -> bool:
        """Consume one line inside a hunk; False when the line is not part of the hunk."""
        cur = self.cur
        assert cur is not None
        head = line[:1]
        if head == "\\":
            return True  # "\ No newline at end of file"
        if head == "+":
            if self.new_left <= 0:
                self.problem(
                    line_no,
                    "hunk_count_mismatch",
                    "A hunk has more '+' lines than its header says.",
                )
            self.new_left -= 1
            cur.additions += 1
            cur.added.append(AddedLine(self.new_no, line[1:]))
            self.new_no += 1
        elif head == "-":
            if self.old_left <= 0:
                self.problem(
                    line_no,
                    "hunk_count_mismatch",
                    "A hunk has more '-' lines than its header says.",
                )
            self.old_left -= 1
            cur.deletions += 1
        elif head == " " or line == "":
            # Some tools strip the single space of an empty context line; accept that.
            self.old_left -= 1
            self.new_left -= 1
            self.new_no += 1
        else:
            return False
        if self.old_left <= 0 and self.new_left <= 0:
            if self.old_left < 0 or self.new_left < 0:
                self.problem(
                    line_no,
                    "hunk_count_mismatch",
                    "A hunk's lines do not add up to its header's counts.",
                )
            self.in_hunk = False
        return True

    def start_hunk(self, line_no: int, line: str) -> None:
        cur = self.cur
        if cur is None:
            self.problem(line_no, "hunk_without_file", "A hunk appears before any file header.")
            return
        m = _HUNK.match(line)
        if m is None:
            self.problem(
                line_no, "bad_hunk_header", "A line starting with '@@' is not a hunk header."
            )
            return
        old_count = 1 if m.group(2) is None else int(m.group(2))
        new_count = 1 if m.group(4) is None else int(m.group(4))
        cur.hunks += 1
        self.old_left = old_count
        self.new_left = new_count
        self.new_no = int(m.group(3)) if new_count else int(m.group(3)) + 1
        self.in_hunk = old_count > 0 or new_count > 0

    def header_line(self, line_no: int, line: str) -> bool:
        """Apply a git extended header line to the current file; False when it is not one."""
        cur = self.cur
        if cur is None or not cur.git or cur.hunks:
            return False
        if line.startswith("old mode "):
            cur.old_mode = self.mode(line_no, line[9:])
        elif line.startswith("new mode "):
            cur.new_mode = self.mode(line_no, line[9:])
        elif line.startswith("deleted file mode "):
            cur.deleted_file = True
            cur.old_mode = self.mode(line_no, line[18:])
        elif line.startswith("new file mode "):
            cur.new_file = True
            cur.new_mode = self.mode(line_no, line[14:])
        elif line.startswith("rename from "):
            cur.rename_from = _header_value(line[12:])
        elif line.startswith("rename to "):
            cur.rename_to = _header_value(line[10:])
        elif line.startswith("copy from "):
            cur.copy_from = _header_value(line[10:])
        elif line.startswith("copy to "):
            cur.copy_to = _header_value(line[8:])
        elif line.startswith(("similarity index ", "dissimilarity index ")):
            m = _SIMILARITY.fullmatch(line.split(" ", 2)[2].strip())
            if m is not None and line.startswith("similarity"):
                cur.similarity = int(m.group(1))
        elif line.startswith("index "):
            pass
        elif line == "GIT binary patch":
            cur.is_binary = True
            self.skip_binary = True
        else:
            return False
        return True

    def mode(self, line_no: int, value: str) -> str | None:
        value = value.strip()
        if _MODE.fullmatch(value):
            return value
        self.problem(line_no, "bad_mode", "A file mode is not six octal digits.")
        return None

    def plain_binary(self, line_no: int, line: str) -> None:
        cur = self.cur
        if cur is not None and not cur.hunks and not cur.is_binary:
            cur.is_binary = True
            return
        m = _BINARY_FILES.fullmatch(line)
        if m is None:
            return
        self.finish(line_no)
        a, b = m.group(1), m.group(2)
        builder = _Builder(git=False, start_line=line_no, is_binary=True)
        builder.minus_dev_null = a == "/dev/null"
        builder.plus_dev_null = b == "/dev/null"
        builder.minus_path = _strip_prefix(a, "a/")
        builder.plus_path = _strip_prefix(b, "b/")
        self.cur = builder
        self.finish(line_no)

    def file_pair(self, line_no: int, minus: str, plus: str) -> None:
        cur = self.cur
        if cur is None or not cur.git or cur.hunks or cur.saw_minus_plus:
            self.finish(line_no)
            cur = _Builder(git=False, start_line=line_no)
            self.cur = cur
        cur.saw_minus_plus = True
        old = _header_value(minus)
        new = _header_value(plus)
        cur.minus_dev_null = old == "/dev/null"
        cur.plus_dev_null = new == "/dev/null"
        cur.minus_path = None if cur.minus_dev_null else _strip_prefix(old, "a/")
        cur.plus_path = None if cur.plus_dev_null else _strip_prefix(new, "b/")

    def run(self, lines: list[str]) -> None:
        i = 0
        n = len(lines)
        while i < n:
            raw = lines[i]
            line = raw[:-1] if raw.endswith("\r") else raw
            line_no = i + 1
            i += 1
            if self.in_hunk:
                if self.hunk_line(line_no, line):
                    continue
                # The hunk stopped short of its counts; note it and read this line afresh.
                self.problem(
                    line_no,
                    "truncated_hunk",
                    "A hunk ends before the number of lines its @@ header promises.",
                )
                self.in_hunk = False
            if line.startswith("diff --git "):
                self.skip_unsupported = False
                self.start_git(line_no, line[11:])
                continue
            if line.startswith(("diff --cc ", "diff --combined ")):
                self.finish(line_no)
                self.problem(
                    line_no,
                    "unsupported_combined_diff",
                    "Combined (merge) diffs are not supported.",
                )
                self.skip_unsupported = True
                continue
            if self.skip_binary or self.skip_unsupported:
                continue
            if line.startswith("@@"):
                self.start_hunk(line_no, line)
                continue
            if line.startswith("--- ") and i < n and lines[i].startswith("+++ "):
                plus = lines[i]
                i += 1
                self.file_pair(line_no, line[4:], plus[4:].rstrip("\r"))
                continue
            if self.header_line(line_no, line):
                continue
            if line.startswith("Binary files ") and line.endswith(" differ"):
                self.plain_binary(line_no, line)
                continue
            cur = self.cur
            if (
                cur is not None
                and cur.hunks
                and line[:1] in ("+", "-")
                and line not in ("--", "-- ")
            ):
                # A +/- line after the hunk's counts are used up: see the module docstring.
                self.problem(
                    line_no, "line_outside_hunk", "A '+' or '-' line lies outside any hunk."
                )
                if line.startswith("+"):
                    cur.added.append(AddedLine(self.new_no, line[1:]))
                continue
            if line.startswith("diff "):
                # "diff -ru old new" from GNU diff: the --- / +++ pair that follows starts a file.
                self.finish(line_no)
        self.finish(n + 1)


def parse_diff(data: str | bytes) -> ParsedDiff:
    """Parse a unified diff (git or plain).

    Args:
        data: The patch text; bytes are decoded as UTF-8 with undecodable bytes replaced, since
            patches legitimately carry files in other encodings.

    Returns:
        The files with their status, counts and added lines, plus any problems. An empty or
        blank patch has no files and no problems; non-blank text with no file diffs has the
        problem ``not_a_diff``. Never raises.
    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    parser = _Parser()
    parser.run(lines)
    if not parser.files and not parser.problems and text.strip():
        parser.problem(1, "not_a_diff", "The patch has text but no file diffs.")
    return ParsedDiff(files=tuple(parser.files), problems=tuple(parser.problems))
