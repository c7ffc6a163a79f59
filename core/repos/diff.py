"""A run's diff, read from git for the places operators look at it: ``jarvis diff`` and the
console's ``d``.

Where: the run's latest attempt whose completion was checked against git names the commits,
merge base to head (`core.repos.diff_source`, which also tells which files the gates named).

What: the files (`changes_between`), and the unified patch as a stream of lines. A patch may be
hundreds of megabytes, so nothing here holds one whole: `iter_patch_lines` reads git's output a
line at a time as git writes it and ends git as soon as its reader stops; `patch_page` reads one
page, narrowed to the files the page falls in when a `PatchIndex` says where they start;
`index_patch` and `search_patch` pass over the patch once, keeping only line numbers.

Every line handed out has its secrets masked (`mask_secrets`; a private key's body lines by the
markers around them) and is at most `MAX_LINE_CHARS` long, a longer one cut with a marker that
says how long it was. It is still worker text: `shown_line` makes it inert for a terminal, and
JSON escapes it by itself.

git shows the patch as it is, whatever the repository's configuration asks: no colour, no
external diff program and no text conversion (both run commands a repository's configuration
names, and a worker can write that configuration), no renames, ``a/`` and ``b/`` prefixes,
paths from the repository's root. Commits go after ``--end-of-options``, paths after ``--`` as
literal pathspecs.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import Literal

from core.contracts.secrets_scan import MASK, PEM_BEGIN, PEM_END, mask_secrets
from core.repos.diff_source import (
    DiffRefusal,
    DiffSource,
    diff_files,
    finding_files,
    run_diff_source,
)
from core.repos.git import GitStream
from core.repos.patches import PATCH_OPTIONS
from core.text import inert

#: Where the diff is (`core.repos.diff_source`), named here as callers have always found it.
__all__ = [
    "MAX_LINE_CHARS",
    "MAX_MATCHES",
    "DiffRefusal",
    "DiffSource",
    "FileSpan",
    "LineKind",
    "PatchIndex",
    "PatchLines",
    "PatchPage",
    "PatchSearch",
    "diff_files",
    "finding_files",
    "index_patch",
    "iter_patch_lines",
    "line_kind",
    "patch_page",
    "run_diff_source",
    "search_patch",
    "shown_line",
]

#: Characters of a line handed out; a longer line is cut here and marked.
MAX_LINE_CHARS = 1000
#: Bytes of a line read at most (the rest is counted and dropped): room for `MAX_LINE_CHARS`
#: characters of UTF-8, and for a secret that starts before the cut to be recognised whole.
WINDOW_BYTES = 8192
#: Columns of a tab in `shown_line`.
TAB_SIZE = 8
#: Matches `search_patch` keeps; past this it says there are more.
MAX_MATCHES = 10_000

Stop = Callable[[], bool]
"""Asked between lines of a long pass: True abandons it (the console closed the diff)."""

LineKind = Literal["file", "meta", "hunk", "added", "removed", "context", "note"]

_HUNK_HEAD = re.compile(r"@@@? [^@]*@@@?")
#: How a file's ``---``/``+++`` lines start with the prefixes git is told to use.
_FILE_LINES = ("--- a/", "+++ b/", "--- /dev/null", "+++ /dev/null", '--- "a/', '+++ "b/')


# -- reading the patch ----------------------------------------------------------------------------


def _patch_args(base: str, head: str, paths: Iterable[str] | None) -> list[str]:
    return [
        "diff", *PATCH_OPTIONS, "--end-of-options", base, head, "--",
        *(f":(literal){path}" for path in paths or ()),
    ]  # fmt: skip


class _Masker:
    """`mask_secrets` line by line, and a private key's body by the markers around it (each of
    its lines alone looks like any other base64). Starts afresh at every file's header, so a
    page read from the start of its file masks as a read of the whole patch does."""

    def __init__(self) -> None:
        self.in_key = False

    def mask(self, line: str) -> str:
        if line.startswith("diff --git "):
            self.in_key = False
        elif self.in_key:
            if line.startswith("@@"):
                head = _HUNK_HEAD.match(line)
                if head is not None:
                    # git's own line; what it quotes after the header is the file's.
                    rest = line[head.end() :]
                    return head.group() + (" " + MASK if rest.strip() else rest)
            end = PEM_END.search(line)
            if end is None:
                return line[:1] + MASK if len(line) > 1 else line
            self.in_key = False
            if line[1 : end.start()].strip():
                return line[:1] + MASK + line[end.start() :]
            return mask_secrets(line)
        masked = mask_secrets(line)
        begins = [m.end() for m in PEM_BEGIN.finditer(line)]
        if begins and PEM_END.search(line, begins[-1]) is None:
            self.in_key = True  # a key starts here and goes on past the line
        return masked


class PatchLines(Iterator[str]):
    """The lines of ``git diff base head`` as git writes them (see `iter_patch_lines`).

    git starts at the first line asked for and is ended by `close` (or the end of a ``with``
    block) if its output was not read to the end; a reader that stops early leaves git blocked
    on a full pipe, never writing the rest.
    """

    def __init__(
        self, repo: Path, base: str, head: str, paths: Sequence[str] | None = None
    ) -> None:
        self.repo = repo
        self._args = _patch_args(base, head, paths)
        self._stream: GitStream | None = None
        self._masker = _Masker()
        self._ended = False
        self.lines_read = 0
        """Lines handed out so far."""
        self.bytes_read = 0
        """Bytes of git's output consumed so far (a cut line's dropped part included)."""
        self.finished = False
        """git's output was read to its end and git ended well."""
        self.stopped = False
        """git was ended before it had written its whole output (the reader stopped early)."""

    def __iter__(self) -> PatchLines:
        return self

    def __next__(self) -> str:
        if self._ended:
            raise StopIteration
        if self._stream is None:
            self._stream = GitStream(self._args, cwd=self.repo)
        stream = self._stream
        raw = stream.readline(WINDOW_BYTES)
        if not raw:
            self._ended = True
            stream.finish()
            self.finished = True
            raise StopIteration
        size = len(raw)
        whole = raw.endswith(b"\n")
        while not whole:
            more = stream.readline(WINDOW_BYTES)
            if not more:
                break
            size += len(more)
            whole = more.endswith(b"\n")
        self.bytes_read += size
        self.lines_read += 1
        length = size - 1 if whole else size
        text = self._masker.mask(raw.rstrip(b"\n").decode("utf-8", "replace"))
        if size > len(raw) or len(text) > MAX_LINE_CHARS:
            text = f"{text[:MAX_LINE_CHARS]} … [line cut: {length:,} bytes]"
        return text

    def close(self) -> None:
        """End git now if it still runs; the iterator yields nothing more."""
        self._ended = True
        if self._stream is not None and not self.finished:
            self._stream.stop()
            self.stopped = self._stream.stopped

    def __enter__(self) -> PatchLines:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # at collection time there is no one left to tell
            pass


def iter_patch_lines(
    repo: Path, base: str, head: str, paths: Sequence[str] | None = None
) -> PatchLines:
    """The unified patch from ``base`` to ``head`` in ``repo``, one line at a time.

    Lines come without their line feed, secrets masked, at most `MAX_LINE_CHARS` characters (a
    longer line is cut and marked); they are not yet inert (see `shown_line`). Close the
    iterator (or use it in a ``with``) when stopping before the end: that ends git.

    Args:
        paths: only these files (paths from the repository's root, taken literally).

    Raises:
        GitError: while iterating, git could not be started or failed.
    """
    return PatchLines(repo, base, head, paths)


@dataclass(frozen=True)
class FileSpan:
    """Where one file's part of the patch starts."""

    path: str | None
    """The file, or None when its header did not read back as one of the diff's files (a quoted
    or cut name): pages in it are read from the start of the patch."""
    start: int
    """The 0-based line of its ``diff --git`` header."""
    first_hunk: int | None
    """The line of its first ``@@`` hunk header (None for a binary or mode-only change)."""


@dataclass(frozen=True)
class PatchIndex:
    """How long a patch is and where each file's part starts: one pass, a few numbers a file."""

    lines: int
    spans: tuple[FileSpan, ...]

    def span_at(self, line: int) -> int:
        """The index of the span ``line`` falls in (-1 before the first)."""
        return bisect.bisect_right([span.start for span in self.spans], line) - 1

    def first_hunk(self, path: str) -> int | None:
        """The line of ``path``'s first hunk (else its header), or None when not in the patch."""
        for span in self.spans:
            if span.path == path:
                return span.first_hunk if span.first_hunk is not None else span.start
        return None

    @property
    def narrowable(self) -> bool:
        """Every span names its file, each file once: a page can be read from its files alone."""
        paths = [span.path for span in self.spans]
        return None not in paths and len(set(paths)) == len(paths)


def _header_path(line: str, known: set[str] | None) -> str | None:
    # ``diff --git a/P b/P`` with the same P twice (no renames): P's length follows from the
    # line's, so a name holding " b/" still reads back whole.
    rest = line[len("diff --git ") :]
    if not rest.startswith("a/") or (len(rest) - 5) % 2:
        return None
    size = (len(rest) - 5) // 2
    path = rest[2 : 2 + size]
    if rest[2 + size :] != f" b/{path}":
        return None
    return path if known is None or path in known else None


def index_patch(
    repo: Path,
    base: str,
    head: str,
    *,
    files: Iterable[str] | None = None,
    stop: Stop | None = None,
) -> PatchIndex | None:
    """Count the patch's lines and note where each file starts, in one pass that keeps nothing
    else; None when ``stop`` said to give up.

    Args:
        files: the diff's paths (`diff_files`); a header names a file only if it is one of them.

    Raises:
        GitError: git could not be started or failed.
    """
    known = set(files) if files is not None else None
    spans: list[FileSpan] = []
    count = 0
    with iter_patch_lines(repo, base, head) as lines:
        for line in lines:
            if stop is not None and count % 1024 == 0 and stop():
                return None
            if line.startswith("diff --git "):
                path = _header_path(line, known)
                # A type change is two parts for one path (deleted, then added): one span.
                if not (spans and path is not None and spans[-1].path == path):
                    spans.append(FileSpan(path, count, None))
            elif line.startswith("@@") and spans and spans[-1].first_hunk is None:
                last = spans[-1]
                spans[-1] = FileSpan(last.path, last.start, count)
            count += 1
    return PatchIndex(count, tuple(spans))


@dataclass(frozen=True)
class PatchPage:
    """Lines ``start`` to ``start + len(lines)`` of a patch."""

    start: int
    lines: list[str]
    more: bool
    """The patch goes on after this page."""
    lines_read: int
    """Lines git was read for, the page's own and those skipped before it."""


def patch_page(
    repo: Path,
    base: str,
    head: str,
    start_line: int,
    count: int,
    *,
    index: PatchIndex | None = None,
) -> PatchPage:
    """Lines ``start_line`` (0-based) to ``start_line + count`` of the patch, and whether more
    follow; git is ended once the page is read.

    With an ``index``, git is asked only for the files the page falls in, so a page deep in a
    large patch costs its own files, not everything before them.

    Raises:
        GitError: git could not be started or failed.
    """
    start_line, count = max(0, start_line), max(0, count)
    paths: list[str] | None = None
    skip = start_line
    end = start_line + count
    if index is not None and index.narrowable and 0 <= index.span_at(start_line):
        first = index.span_at(start_line)
        spans = [s for s in index.spans[first:] if s.start < end]
        paths = [s.path for s in spans if s.path is not None]
        skip = start_line - spans[0].start
    with iter_patch_lines(repo, base, head, paths) as lines:
        for _ in islice(lines, skip):
            pass
        got = list(islice(lines, count + 1))
        read = lines.lines_read
    if paths is not None and index is not None:
        more = end < index.lines
    else:
        more = len(got) > count
    return PatchPage(start_line, got[:count], more, read)


@dataclass(frozen=True)
class PatchSearch:
    """Where a text occurs in a patch as shown."""

    needle: str
    matches: list[int]
    """0-based lines, in order, at most `MAX_MATCHES`."""
    more: bool
    """There are matches past the last one kept."""


def search_patch(
    repo: Path,
    base: str,
    head: str,
    needle: str,
    *,
    limit: int = MAX_MATCHES,
    stop: Stop | None = None,
) -> PatchSearch | None:
    """The lines of the patch whose shown text (`shown_line`: masked, inert) holds ``needle``,
    ignoring case; None when ``stop`` said to give up. Searching what is shown means a masked
    secret cannot be found, or guessed at, by its value.

    Raises:
        GitError: git could not be started or failed.
    """
    wanted = needle.casefold()
    matches: list[int] = []
    if not wanted:
        return PatchSearch(needle, matches, False)
    with iter_patch_lines(repo, base, head) as lines:
        for number, line in enumerate(lines):
            if stop is not None and number % 1024 == 0 and stop():
                return None
            if wanted in shown_line(line).casefold():
                if len(matches) >= limit:
                    return PatchSearch(needle, matches, True)
                matches.append(number)
    return PatchSearch(needle, matches, False)


# -- showing it -----------------------------------------------------------------------------------


def shown_line(line: str) -> str:
    """A patch line as a terminal may show it on one line: every control character a visible
    escape (`inert`), tabs expanded to spaces."""
    return inert(line, keep_lines=False, keep_tabs=True).expandtabs(TAB_SIZE)


def line_kind(line: str) -> LineKind:
    """What a patch line is, for its colour: a file's header (``diff --git``, ``---``, ``+++``),
    other header lines (``index``, modes, binary), a hunk header, an added, removed or context
    line, or git's note that a file ends without a line feed."""
    if line.startswith("diff --git "):
        return "file"
    if line.startswith(_FILE_LINES):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    first = line[:1]
    if first == "+":
        return "added"
    if first == "-":
        return "removed"
    if first == " " or not line:
        return "context"
    if first == "\\":
        return "note"
    return "meta"
