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
from typing import Final

from core.contracts.diff_paths import header_value, split_git_header, strip_prefix, unquote_c
from core.contracts.diff_shapes import AddedLine, DiffProblem, FileDiff, FileStatus, ParsedDiff

#: The parser's results and the C-quoted path reader, named here as callers have always found them.
__all__ = [
    "AddedLine",
    "DiffProblem",
    "FileDiff",
    "FileStatus",
    "ParsedDiff",
    "parse_diff",
    "unquote_c",
]

_HUNK = re.compile(r"@@ -(\d{1,18})(?:,(\d{1,18}))? \+(\d{1,18})(?:,(\d{1,18}))? @@")
_SIMILARITY = re.compile(r"(\d{1,3})%")
_MODE = re.compile(r"[0-7]{6}")
_BINARY_FILES = re.compile(r"Binary files (.+) and (.+) differ")

_PROBLEM_LIMIT: Final = 100
"""At most this many problems are kept; a garbage 20 MB file would otherwise yield millions."""


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
        a, b, sure = split_git_header(rest)
        if a is None or b is None:
            self.problem(line_no, "bad_file_header", "A 'diff --git' line does not name two paths.")
        self.cur = _Builder(
            git=True,
            start_line=line_no,
            header_old=strip_prefix(a, "a/"),
            header_new=strip_prefix(b, "b/"),
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
            cur.rename_from = header_value(line[12:])
        elif line.startswith("rename to "):
            cur.rename_to = header_value(line[10:])
        elif line.startswith("copy from "):
            cur.copy_from = header_value(line[10:])
        elif line.startswith("copy to "):
            cur.copy_to = header_value(line[8:])
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
        builder.minus_path = strip_prefix(a, "a/")
        builder.plus_path = strip_prefix(b, "b/")
        self.cur = builder
        self.finish(line_no)

    def file_pair(self, line_no: int, minus: str, plus: str) -> None:
        cur = self.cur
        if cur is None or not cur.git or cur.hunks or cur.saw_minus_plus:
            self.finish(line_no)
            cur = _Builder(git=False, start_line=line_no)
            self.cur = cur
        cur.saw_minus_plus = True
        old = header_value(minus)
        new = header_value(plus)
        cur.minus_dev_null = old == "/dev/null"
        cur.plus_dev_null = new == "/dev/null"
        cur.minus_path = None if cur.minus_dev_null else strip_prefix(old, "a/")
        cur.plus_path = None if cur.plus_dev_null else strip_prefix(new, "b/")

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
