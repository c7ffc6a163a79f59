"""Reading a task's text for the extractor: blocks, quotes, web addresses and paths.

Task text comes from whoever dispatches, up to the dispatch contract's megabyte, and extraction
runs before every run is queued; so everything here is linear in the text's length *by
construction*, not merely fast on the texts tried:

* Lines, blocks and words are split with ``str`` methods, in one forward pass.
* Quotes are found in one forward scan; a quote that does not close on its line is remembered,
  so the rest of the line is not searched again for each later opening mark.
* Every regular expression has a bounded reach (no ``*`` or ``+`` without an upper limit) and
  is applied to one word or to a bounded window. A search over *n* characters is then at most
  *n* attempts of bounded cost; ``tests/criteria/test_extract_linear.py`` checks every pattern.

What the rules then read is a block's ``plain`` text: white space collapsed to single spaces,
each quote replaced by one `HIDDEN` character (its text is kept apart), and web addresses,
e-mail addresses and over-long words replaced by one `OPAQUE` character, so no phrase is ever
matched inside them. Positions in ``plain`` only grow with positions in the task, which keeps
criteria in reading order. Phrases are matched in ``lower``, the same text in lower case at the
same positions: patterns without ``re.IGNORECASE`` let the engine skip ahead to a possible first
letter, several times faster on long texts.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from core.contracts.names import relative_path_problem

__all__ = [
    "HIDDEN",
    "LOOK_BACK",
    "MAX_WORD",
    "OPAQUE",
    "PRODUCT_NAMES",
    "Block",
    "FoundPath",
    "Quote",
    "read_blocks",
]

#: A quote in ``plain``; its text is in `Quote.inner`.
HIDDEN = "\x01"
#: A web or e-mail address, or a word longer than `MAX_WORD`: never a path, never in a phrase.
OPAQUE = "\x02"
#: Longer runs without white space are data (a hash, a blob, a long address), not words.
MAX_WORD = 512
#: How far back a rule looks for the phrase before a path or a quote, in ``plain`` characters.
LOOK_BACK = 80

# Opening mark → closing mark. German „…“ and French «…» quote as often as "…" does.
_CLOSERS = {"`": "`", '"': '"', "“": "”", "„": "“", "«": "»", "'": "'"}
_OPENERS = re.compile("[" + re.escape("".join(_CLOSERS)) + "]")
_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])[ \t]")
_QUOTE_SEP = re.compile(r"\s?,\s?(?:and\s|et\s|und\s|y\s)?|\s(?:and|et|und|y)\s")

_SCHEME = re.compile(r"\b[a-z][a-z0-9+.-]{0,31}://", re.I)
_WWW = re.compile(r"\bwww\.", re.I)
_DOMAIN_PATH = re.compile(
    r"(?<![\w.-])(?:[a-z0-9-]{1,63}\.){1,8}(?:com|org|net|io|dev|app|ai|co|edu|gov|info)/", re.I
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")

# A path: segments joined by / or \, after an optional drive, ~/ or /; the whole run of path
# characters or nothing (the look-ahead), so a cut-off piece of a longer word is never a path.
_TOKEN = re.compile(
    r"(?<![\w@/\\.~:+-])(?:[A-Za-z]:[\\/]|~?/)?[\w.+-]{1,120}(?:[\\/][\w.+-]{1,120}){0,31}"
    r"[\\/]?(?![\w.+-]|[\\/][\w.+-])"
)
_NAME_CHAR = re.compile(r"\w")

_EXTENSIONS = frozenset(
    """py pyi ipynb md mdx markdown rst txt adoc json jsonc json5 toml yaml yml ini cfg conf env
    lock js mjs cjs jsx ts tsx mts cts vue svelte astro css scss sass less html htm xml svg png
    jpg jpeg gif webp ico pdf csv tsv sql sh bash zsh fish ps1 bat cmd rs go java kt kts scala c
    h cc cpp cxx hpp cs fs rb php swift lua pl dart ex exs erl hs ml clj elm zig nim tf tfvars
    hcl proto graphql gql gradle properties tmpl j2 jinja tpl gz tgz zip tar bz2 xz whl log
    patch diff wasm db sqlite pem crt csr service plist mk po pot mo""".split()
)
_KNOWN_NAMES = frozenset(
    """makefile gnumakefile dockerfile containerfile license licence copying procfile justfile
    gemfile rakefile jenkinsfile vagrantfile codeowners .gitignore .gitattributes .dockerignore
    .editorconfig .env .npmrc .nvmrc .prettierrc .eslintrc .flake8 .python-version""".split()
)
#: Product names that look like files; "Create a Node.js script" names no file called Node.js.
PRODUCT_NAMES = frozenset(
    """node.js vue.js next.js nuxt.js react.js express.js three.js d3.js chart.js ember.js
    backbone.js angular.js socket.io asp.net ado.net""".split()
)


@dataclass(frozen=True)
class Quote:
    """A quoted passage: one `HIDDEN` character at ``start`` in the block's ``plain`` text."""

    start: int
    end: int
    inner: str
    """The quoted text, stripped; never collapsed, so a quoted literal stays exact."""
    backtick: bool


@dataclass(frozen=True)
class FoundPath:
    """A file or folder named in a block, with where it is in ``plain``."""

    start: int
    end: int
    path: str
    problem: str | None
    """Why the path may not be used (absolute, climbs out), or None."""
    is_dir: bool
    quote: Quote | None = None


def _file_like(name: str) -> bool:
    lower = name.lower()
    if lower in PRODUCT_NAMES:
        return False
    if lower in _KNOWN_NAMES or lower.startswith(".env."):
        return True
    stem, dot, ext = lower.rpartition(".")
    if not dot or ext not in _EXTENSIONS or not _NAME_CHAR.search(stem):
        return False
    # One-letter extensions (.c, .h) are real, but "a.m." and "p.h." are not files.
    return len(ext) > 1 or len(stem.lstrip(".")) > 1


def _path_problem(path: str) -> str | None:
    if path.startswith("~"):
        return "the path must be relative to the repository, not to a home folder."
    problem = relative_path_problem(path)
    return problem[1] if problem else None


def _classify(token: str, *, quoted: bool) -> tuple[str, str | None, bool] | None:
    """``(path, problem, is_dir)`` if ``token`` names a file or folder, else None."""
    raw = token.replace("\\", "/")
    if not raw or "://" in raw or raw.split(maxsplit=1) != [raw]:
        return None
    is_dir = raw.endswith("/") and raw.strip("/") != ""
    base = raw.rstrip("/").rsplit("/", 1)[-1]
    if not is_dir and not (_file_like(base) or (quoted and "/" in raw and base)):
        return None
    if is_dir and not (quoted or any(ch.isalpha() for ch in base)):
        return None
    path = raw[2:] if raw.startswith("./") else raw
    return path, _path_problem(path), is_dir


def _lowered(text: str) -> str:
    """``text`` in lower case with its length kept (a few letters, such as "İ", grow)."""
    lower = text.lower()
    if len(lower) == len(text):
        return lower
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)


def _masked(word: str) -> str:
    """``word`` with any web or e-mail address in it replaced by `OPAQUE`."""
    if len(word) > MAX_WORD:
        return OPAQUE
    if "/" not in word and "@" not in word and "www." not in word.lower():
        return word  # every address has one of these: most words are done without a search
    cut = len(word)
    for address in (_SCHEME, _WWW, _DOMAIN_PATH):
        found = address.search(word)
        if found:
            cut = min(cut, found.start())
    head = _EMAIL.sub(OPAQUE, word[:cut])
    return head + OPAQUE if cut < len(word) else head


def _quotes(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each quote in ``text``, marks included, in one forward scan.

    A quote closes on its own line with the mark its opening calls for. A single quote opens
    only where no letter comes before it and closes only where none comes after, so
    apostrophes ("don't", "the user's") never quote.
    """
    resume = 0
    line_end = -1
    unclosed: dict[str, int] = {}  # closing mark → the end of the line it is known absent from
    for opening in _OPENERS.finditer(text):
        start = opening.start()
        if start < resume:
            continue
        if start > line_end:
            line_end = text.find("\n", start)
            line_end = len(text) if line_end < 0 else line_end
        mark = text[start]
        closer = _CLOSERS[mark]
        if mark == "'" and start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_'"):
            continue
        if unclosed.get(closer, -1) >= start:
            continue
        end = text.find(closer, start + 1, line_end)
        if end < 0:
            unclosed[closer] = line_end
            continue
        if end == start + 1:
            continue  # an empty pair is two marks, each of which may still open a quote
        after = text[end + 1 : end + 2]
        if mark == "'" and after and (after.isalnum() or after in "_'"):
            continue
        resume = end + 1
        yield start, end + 1


@dataclass
class Block:
    """One paragraph or list item, read: its ``plain`` text, quotes and paths."""

    offset: int
    """Where the block starts in the whole task text, to keep criteria in reading order."""
    plain: str = ""
    lower: str = ""
    """``plain`` in lower case, character for character: what phrase patterns are matched in."""
    quotes: dict[int, Quote] = field(default_factory=dict)
    paths: dict[int, FoundPath] = field(default_factory=dict)
    ends: dict[int, FoundPath] = field(default_factory=dict)
    used: set[int] = field(default_factory=set)
    """Starts of quotes already turned into a criterion, so no second rule reads them."""
    _starts: list[int] = field(default_factory=list)
    _file_ends: list[int] = field(default_factory=list)

    @classmethod
    def read(cls, text: str, offset: int) -> Block:
        """Read one block of raw task text that starts at ``offset`` in the task."""
        block = cls(offset)
        pieces: list[str] = []
        size = 0

        def words(segment: str) -> None:
            nonlocal size
            split = segment.split()
            joined = " ".join(_masked(word) for word in split)
            if segment[:1].isspace():
                joined = " " + joined
            if split and segment[-1:].isspace():
                joined += " "
            pieces.append(joined)
            size += len(joined)

        cursor = 0
        for start, end in _quotes(text):
            words(text[cursor:start])
            inner = text[start + 1 : end - 1].strip()
            if inner:
                block.quotes[size] = Quote(size, size + 1, inner, text[start] == "`")
                pieces.append(HIDDEN)
                size += 1
            else:
                words(text[start:end])
            cursor = end
        words(text[cursor:])
        block.plain = "".join(pieces)
        block.lower = _lowered(block.plain)
        block._find_paths()
        return block

    def _find_paths(self) -> None:
        for match in _TOKEN.finditer(self.plain):
            token = match.group().rstrip(".")
            found = _classify(token, quoted=False)
            if found:
                start = match.start()
                self.paths[start] = FoundPath(start, start + len(token), *found)
        for quote in self.quotes.values():
            found = _classify(quote.inner, quoted=True)
            if found:
                self.paths[quote.start] = FoundPath(quote.start, quote.end, *found, quote=quote)
        self.ends = {p.end: p for p in self.paths.values()}
        self._starts = sorted(self.paths)
        self._file_ends = sorted(p.end for p in self.paths.values() if not p.is_dir)

    def before(self, pos: int) -> str:
        """The text just before ``pos``, in lower case: enough for any phrase a rule looks back for.

        A bounded window keeps each look-back constant-time; searching the whole prefix made a
        long task quadratic.
        """
        return self.lower[max(0, pos - LOOK_BACK) : pos]

    def skip_space(self, pos: int) -> int:
        """``pos``, or the position after it if it is the (single) space between two words."""
        return pos + 1 if self.plain[pos : pos + 1] == " " else pos

    def path_at(self, pos: int) -> FoundPath | None:
        """The path starting at ``pos`` (after a space), unless its quote was already used."""
        hit = self.paths.get(self.skip_space(pos))
        if hit is None or (hit.quote is not None and hit.quote.start in self.used):
            return None
        return hit

    def quote_at(self, pos: int) -> Quote | None:
        """The unused quote starting at ``pos`` (after a space)."""
        quote = self.quotes.get(self.skip_space(pos))
        return None if quote is None or quote.start in self.used else quote

    def quote_list(self, pos: int) -> list[Quote]:
        """Unused quotes listed from ``pos`` on: "`a`", "`a`, `b` and `c`"."""
        found: list[Quote] = []
        while (quote := self.quote_at(pos)) is not None:
            found.append(quote)
            sep = _QUOTE_SEP.match(self.lower, quote.end)
            if sep is None or self.quote_at(sep.end()) is None:
                break
            pos = sep.end()
        return found

    def path_ending_at(self, pos: int) -> FoundPath | None:
        return self.ends.get(pos)

    def last_path_before(self, pos: int) -> FoundPath | None:
        """The last file (not folder) named before ``pos``."""
        index = bisect.bisect_right(self._file_ends, pos)
        return self.ends[self._file_ends[index - 1]] if index else None

    def paths_within(self, lo: int, hi: int) -> list[FoundPath]:
        """The paths that lie wholly between ``lo`` and ``hi``, in order."""
        first = bisect.bisect_left(self._starts, lo)
        last = bisect.bisect_right(self._starts, hi)
        hits = (self.paths[start] for start in self._starts[first:last])
        return [p for p in hits if p.end <= hi]

    def path_around(self, pos: int) -> FoundPath | None:
        """The path whose text covers ``pos``, if any."""
        index = bisect.bisect_right(self._starts, pos)
        if not index:
            return None
        hit = self.paths[self._starts[index - 1]]
        return hit if pos < hit.end else None


def read_blocks(text: str) -> tuple[list[Block], bool]:
    """The blocks of ``text``, and whether fenced code blocks were left out.

    Blocks are paragraphs and list items: no rule reads across two. A fenced code block
    (three or more backticks or tildes, closed by a line of at least as many) shows code, not
    requirements; it is left out, and one that never closes runs to the end of the text.
    """
    blocks: list[Block] = []
    fenced = False
    fence = ""
    start = 0
    pos = 0

    def close(end: int) -> None:
        if text[start:end].strip():
            blocks.append(Block.read(text[start:end], start))

    for line in text.splitlines(keepends=True):
        here, pos = pos, pos + len(line)
        stripped = line.strip()
        if fence:
            if len(stripped) >= len(fence) and stripped == fence[0] * len(stripped):
                fence, start = "", pos
            continue
        mark = stripped[:1]
        if mark in ("`", "~") and stripped.startswith(mark * 3):
            close(here)
            fenced = True
            fence = mark * (len(stripped) - len(stripped.lstrip(mark)))
            continue
        if not stripped:
            close(here)
            start = pos
        elif here > start and _LIST_ITEM.match(line.lstrip(" \t")):
            close(here)
            start = here
    if not fence:
        close(len(text))
    return blocks, fenced
