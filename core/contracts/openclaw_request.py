"""The OpenClaw worker request (v0): what a supervisor hands a worker, and whether it is sound.

A request names one task, the repository and branch to work on, the scope the worker may touch
(allowed and denied globs plus size limits), the goal, and the stop conditions under which the
worker must give up instead of editing. `validate_request` checks all of it and reports every
problem at once; `load_request` also returns the typed model for the risk gate.

Globs are shell-style with ``**`` (wcmatch GLOBSTAR|DOTGLOB semantics): ``*`` and ``?`` never
cross ``/``, ``**`` as a whole segment spans any number of directories, and dotfiles are matched
like any other name. `GlobSet` is the matcher the risk gate uses for them; see its docstring for
why it walks path segments itself instead of handing whole paths to a regular expression.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError
from wcmatch import fnmatch as wc_fnmatch

from core.contracts import jsondoc
from core.contracts.errors import (
    ROOT,
    FieldError,
    ValidationReport,
    join_path,
    preview,
    sorted_errors,
)
from core.contracts.names import ref_problem
from core.contracts.pydantic_errors import from_validation_error
from core.contracts.repositories import repo_path_problem

KIND: Final = "openclaw_request"

#: Stop conditions the contract names. Others are accepted (the contract is v0 and supervisors
#: may add their own) but draw a warning, because a typo here silently disables a safety stop.
KNOWN_STOP_CONDITIONS: Final = (
    "security-sensitive",
    "architecture-change",
    "secrets-required",
    "cannot-run-tests",
)

#: A task id becomes a folder name (``work/results/<task_id>/``), so it must be a single, inert
#: path segment on every filesystem the console runs on.
_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

#: Limits that keep gate time bounded; real requests use a handful of globs of a few dozen chars.
MAX_GLOBS: Final = 256
MAX_GLOB_CHARS: Final = 512

# Codes raised by the custom validators below; their messages get the field path prefixed.
_CUSTOM_CODES: Final = frozenset({"empty", "unsafe_name", "bad_glob", "glob_never_matches"})

_GLOB_MAGIC = re.compile(r"[*?\[]")
_BRACE_LIST = re.compile(r"\{[^{}]*,[^{}]*\}")


# --------------------------------------------------------------------------------------------
# Glob matching
# --------------------------------------------------------------------------------------------

_GLOBSTAR: Final = "**"

# Segment kinds of a compiled glob.
_STAR2, _ANY, _LITERAL, _PATTERN = 0, 1, 2, 3


def _glob_parts(pattern: str) -> list[str]:
    parts: list[str] = []
    for part in pattern.split("/"):
        # wcmatch collapses repeated slashes, and "**/**" means the same as "**".
        if part and not (part == _GLOBSTAR and parts and parts[-1] == _GLOBSTAR):
            parts.append(part)
    return parts


def _compile_quietly(regex: str) -> re.Pattern[str]:
    # A '[' inside a class ("[[a]") makes re warn about possible future nested-set syntax; the
    # meaning today is the glob's meaning, and the warning would only be noise for operators.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(regex)


def _translate_segment(part: str, flags: int) -> re.Pattern[str]:
    try:
        translated, _ = wc_fnmatch.translate(part, flags=flags)
        return _compile_quietly(translated[0])
    except (ValueError, IndexError, re.error):
        # glob_problem refuses such globs up front; matching nothing is the safe fallback.
        return re.compile("(?!)")


class _Glob:
    """One compiled glob: per-segment tests plus cheap necessary conditions checked first."""

    __slots__ = ("kinds", "texts", "regexes", "end", "eps", "fixed", "exact", "literals")

    def __init__(self, pattern: str, *, ignore_case: bool) -> None:
        flags = wc_fnmatch.DOTMATCH | wc_fnmatch.FORCEUNIX
        if ignore_case:
            flags |= wc_fnmatch.IGNORECASE
        parts = _glob_parts(pattern)
        kinds: list[int] = []
        texts: list[str] = []
        regexes: list[re.Pattern[str] | None] = []
        for index, part in enumerate(parts):
            if part == _GLOBSTAR:
                if index == len(parts) - 1:
                    # A trailing "**" needs at least one more segment ("src/**" does not match
                    # "src"): that is exactly a "*" followed by a globstar that may match nothing.
                    kinds.append(_ANY)
                    texts.append("*")
                    regexes.append(None)
                kinds.append(_STAR2)
                texts.append(part)
                regexes.append(None)
            elif part == "*":
                kinds.append(_ANY)
                texts.append(part)
                regexes.append(None)
            elif _GLOB_MAGIC.search(part):
                kinds.append(_PATTERN)
                texts.append(part)
                regexes.append(_translate_segment(part, flags))
            else:
                kinds.append(_LITERAL)
                texts.append(part.casefold() if ignore_case else part)
                regexes.append(None)
        self.kinds = tuple(kinds)
        self.texts = tuple(texts)
        self.regexes = tuple(regexes)
        self.end = len(kinds)
        # eps[i]: the states reachable from i without consuming a segment (a globstar may
        # match nothing, so reaching it also reaches what follows it).
        eps: list[frozenset[int]] = []
        for i in range(self.end + 1):
            reach = {i}
            j = i
            while j < self.end and kinds[j] == _STAR2:
                j += 1
                reach.add(j)
            eps.append(frozenset(reach))
        self.eps = tuple(eps)
        self.fixed = sum(1 for k in kinds if k != _STAR2)
        self.exact = _STAR2 not in kinds
        self.literals = frozenset(t for k, t in zip(kinds, texts, strict=True) if k == _LITERAL)

    def _segment(self, i: int, part: str, key: str) -> bool:
        kind = self.kinds[i]
        if kind == _ANY:
            return True
        if kind == _LITERAL:
            return self.texts[i] == key
        regex = self.regexes[i]
        return regex is not None and regex.fullmatch(part) is not None

    def match(self, parts: Sequence[str], keys: Sequence[str], key_set: frozenset[str]) -> bool:
        n = len(parts)
        end = self.end
        if n < self.fixed or (self.exact and n != self.fixed):
            return False
        if not self.literals <= key_set:
            return False
        if end == 0:
            return False
        if self.kinds[0] != _STAR2 and not self._segment(0, parts[0], keys[0]):
            return False
        if self.kinds[-1] != _STAR2 and not self._segment(end - 1, parts[-1], keys[-1]):
            return False
        # Walk the path one segment at a time over the set of reachable glob positions.
        states: frozenset[int] | set[int] = self.eps[0]
        for part, key in zip(parts, keys, strict=True):
            nxt: set[int] = set()
            for i in states:
                if i == end:
                    continue
                if self.kinds[i] == _STAR2:
                    nxt |= self.eps[i]
                elif self._segment(i, part, key):
                    nxt |= self.eps[i + 1]
            if not nxt:
                return False
            states = nxt
        return end in states


class GlobSet:
    """A set of globs matched against repository-relative paths, linear in the path's length.

    The semantics are those of ``wcmatch.glob.globmatch(path, glob, flags=GLOBSTAR|DOTGLOB)``
    (single segments are translated by wcmatch itself, and a property test holds the two equal),
    but whole-path matching is done here by walking the path one segment at a time over the set
    of reachable glob positions. wcmatch's single regular expression backtracks over every way
    to split a path between several ``**``; with a deep, worker-chosen path that takes seconds
    per match, and the paths in a patch are exactly what a hostile worker controls.
    """

    def __init__(self, patterns: Iterable[str], *, ignore_case: bool = False) -> None:
        self.patterns: tuple[str, ...] = tuple(patterns)
        self._ignore_case = ignore_case
        self._globs = tuple(_Glob(p, ignore_case=ignore_case) for p in self.patterns)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def match(self, path: str) -> bool:
        """True when any glob matches the path."""
        return self.first_index(path) is not None

    def first_match(self, path: str) -> str | None:
        """The first glob (in the order given) that matches the path, or None."""
        index = self.first_index(path)
        return None if index is None else self.patterns[index]

    def first_index(self, path: str) -> int | None:
        """The index of the first glob that matches the path, or None."""
        if not path or path.startswith("/"):
            return None
        parts = [p for p in path.split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            return None  # globs never match '.' or '..' segments, as in wcmatch
        keys = [p.casefold() for p in parts] if self._ignore_case else parts
        key_set = frozenset(keys)
        for index, glob in enumerate(self._globs):
            if glob.match(parts, keys, key_set):
                return index
        return None


def glob_problem(pattern: str) -> tuple[str, str] | None:
    """Why a glob can never match a repository path or is malformed, or None when it is fine.

    Returns:
        ``(code, message)`` with code ``empty`` (blank), ``bad_glob`` (malformed or using
        unsupported syntax) or ``glob_never_matches`` (well formed, but no repository-relative
        file path can match); the message continues a sentence that starts with the field.
    """
    if not pattern.strip():
        return "empty", "must not be blank."
    if len(pattern) > MAX_GLOB_CHARS:
        return "bad_glob", f"is longer than {MAX_GLOB_CHARS} characters."
    if any(ord(c) < 0x20 or c == "\x7f" for c in pattern):
        return "bad_glob", "contains a control character."
    if "\\" in pattern:
        # A backslash is an escape in glob syntax but a separator to Windows users; refusing it
        # removes the ambiguity (no real scope needs a literal '*' in a file name).
        return "bad_glob", "contains a backslash; use '/' between directories."
    if pattern.startswith("!"):
        return "bad_glob", "starts with '!'; negation is not supported, use deny_globs."
    if _BRACE_LIST.search(pattern):
        return "bad_glob", "uses {a,b} brace expansion, which is not supported; list each glob."
    if pattern.startswith("/"):
        return "glob_never_matches", "is absolute; changed paths are relative to the repo root."
    if pattern.endswith("/"):
        return "glob_never_matches", "ends with '/', so it can only match directories, not files."
    parts = [p for p in pattern.split("/") if p]
    if any(p in (".", "..") for p in parts):
        return "glob_never_matches", "has a '.' or '..' segment, which no changed path has."
    flags = wc_fnmatch.DOTMATCH | wc_fnmatch.FORCEUNIX
    for part in parts:
        if part == _GLOBSTAR or not _GLOB_MAGIC.search(part):
            continue
        try:
            regexes, _ = wc_fnmatch.translate(part, flags=flags)
            _compile_quietly(regexes[0])
        except (ValueError, IndexError, re.error):
            return "bad_glob", f"has a segment {preview(part)} that is not a valid pattern."
        if "(?!)" in regexes[0]:
            # wcmatch compiles an impossible character range such as [z-a] to "never".
            return "glob_never_matches", f"has a segment {preview(part)} that matches nothing."
    return None


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


def _non_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("empty", "must not be blank.")
    return value


def _task_id(value: str) -> str:
    if not _TASK_ID.fullmatch(value) or ".." in value:
        raise PydanticCustomError(
            "unsafe_name",
            "must be 1-128 letters, digits, '.', '_' or '-', start with a letter or digit and "
            "not contain '..', because it names the results folder.",
        )
    return value


def _glob(value: str) -> str:
    problem = glob_problem(value)
    if problem is not None:
        code, message = problem
        raise PydanticCustomError(code, message)
    return value


NonBlank = Annotated[str, AfterValidator(_non_blank)]
TaskId = Annotated[str, AfterValidator(_task_id)]
Glob = Annotated[str, AfterValidator(_glob)]

_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)


def _repo_path(value: str) -> str:
    _non_blank(value)
    problem = repo_path_problem(value)
    if problem:
        raise PydanticCustomError("bad_repo_path", problem)
    return value


def _ref(value: str) -> str:
    _non_blank(value)
    problem = ref_problem(value)
    if problem:
        raise PydanticCustomError("bad_ref", problem)
    return value


class RepoSpec(BaseModel):
    """Where the worker works. Its path and refs reach git (`core.host.checkouts`), so they obey
    the rules a configured repository's do."""

    model_config = _STRICT

    path: Annotated[str, AfterValidator(_repo_path)]
    """Path of the repository checkout the worker runs in."""
    base_ref: Annotated[str, AfterValidator(_ref)]
    """The ref the worker's branch starts from, e.g. ``main``."""
    target_branch: Annotated[str, AfterValidator(_ref)]
    """The branch the worker commits to, e.g. ``worker/<task_id>``."""


class ScopeSpec(BaseModel):
    """What the worker may change; enforced by the supervisor's risk gate."""

    model_config = _STRICT

    allowed_globs: list[Glob] = Field(min_length=1, max_length=MAX_GLOBS)
    """Every changed path must match one of these."""
    deny_globs: list[Glob] = Field(max_length=MAX_GLOBS)
    """No changed path may match any of these (matched ignoring case); deny beats allow."""
    max_files_changed: int = Field(ge=0)
    """Most files the patch may touch."""
    max_additions: int = Field(ge=0)
    """Most added lines the patch may have."""
    max_deletions: int = Field(ge=0)
    """Most deleted lines the patch may have."""


class GoalSpec(BaseModel):
    """What the worker is asked to achieve and how to check it."""

    model_config = _STRICT

    title: NonBlank
    """One-line summary of the task."""
    description: NonBlank
    """The full task description."""
    acceptance_criteria: list[str]
    """Statements that must be true when the task is done."""
    test_plan: list[str]
    """Commands or steps that verify the change."""


class OpenClawRequest(BaseModel):
    """One worker request, as written to ``work/requests/<task_id>.json``."""

    model_config = _STRICT

    task_id: TaskId
    """Identifier of the task; also the results folder name, so it must be a safe name."""
    role: Literal["worker"]
    """Always ``worker`` in v0."""
    canonical_language: NonBlank
    """The language of ``report.md``, e.g. ``en``."""
    bilingual_summary_languages: list[NonBlank] | None = None
    """Optional extra languages for a summary."""
    repo: RepoSpec
    """Repository, base ref and target branch."""
    scope: ScopeSpec
    """Allowed and denied paths and size limits."""
    goal: GoalSpec
    """What to do and how to test it."""
    stop_conditions: list[NonBlank]
    """Conditions under which the worker must stop and report ``blocked``."""


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _errors_from(exc: ValidationError) -> list[FieldError]:
    out: list[FieldError] = []
    for err in from_validation_error(exc):
        if (
            err.code in _CUSTOM_CODES
            and err.field != ROOT
            and not err.message.startswith(err.field)
        ):
            err = FieldError(err.field, err.code, f"{err.field} {err.message}")
        out.append(err)
    return out


def _stop_condition_warnings(doc: dict[str, Any]) -> list[FieldError]:
    conditions = doc.get("stop_conditions")
    if not isinstance(conditions, list):
        return []
    warnings: list[FieldError] = []
    for index, value in enumerate(conditions):
        if isinstance(value, str) and value.strip() and value not in KNOWN_STOP_CONDITIONS:
            field = join_path("stop_conditions", index)
            warnings.append(
                FieldError(
                    field,
                    "unknown_stop_condition",
                    f"{field} {preview(value)} is not one of {', '.join(KNOWN_STOP_CONDITIONS)}; "
                    "the gate does not act on it.",
                )
            )
    return warnings


def load_request(
    data: bytes | str | dict[str, Any],
) -> tuple[ValidationReport, OpenClawRequest | None]:
    """Validate a request and also return the typed model when it is valid.

    Args:
        data: The request as JSON bytes or text, or an already-parsed object.

    Returns:
        The report (never raises on bad input) and the model, which is None unless the report is
        valid.
    """
    report = ValidationReport(kind=KIND)
    if isinstance(data, dict):
        doc: Any = data
    elif isinstance(data, bytes | str):
        loaded = jsondoc.load_object(data)
        if not loaded.ok:
            report.errors = list(loaded.errors)
            return report, None
        doc = loaded.value
    else:
        report.errors = [FieldError(ROOT, "not_object", "The request must be a JSON object.")]
        return report, None
    report.document = doc
    model: OpenClawRequest | None = None
    try:
        model = OpenClawRequest.model_validate(doc)
    except ValidationError as exc:
        report.errors = sorted_errors(_errors_from(exc))
    except (RecursionError, ValueError, TypeError) as exc:  # defensive: never raise
        report.errors = [
            FieldError(ROOT, "not_object", f"The request could not be read: {preview(str(exc))}.")
        ]
    report.warnings = sorted_errors(_stop_condition_warnings(doc))
    return report, model


def validate_request(data: bytes | str | dict[str, Any]) -> ValidationReport:
    """Validate an OpenClaw worker request (v0), collecting every problem.

    Args:
        data: The request as JSON bytes or text, or an already-parsed object.

    Returns:
        A `ValidationReport` of kind ``openclaw_request``; ``document`` holds the parsed object
        when the input was one. Unknown stop conditions are warnings, not errors.
    """
    report, _ = load_request(data)
    return report
