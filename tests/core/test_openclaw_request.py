"""OpenClaw worker request v0: one test per rule, plus never-raise properties."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wcmatch import glob as wc_glob

from core.contracts.openclaw_request import (
    KNOWN_STOP_CONDITIONS,
    GlobSet,
    glob_problem,
    load_request,
    validate_request,
)
from tests.strategies import json_values


def valid_request() -> dict[str, Any]:
    return {
        "task_id": "inv-142-rounding",
        "role": "worker",
        "canonical_language": "en",
        "bilingual_summary_languages": ["zh-hant"],
        "repo": {"path": "/workspace/repo", "base_ref": "main", "target_branch": "worker/x"},
        "scope": {
            "allowed_globs": ["src/**", "docs/**"],
            "deny_globs": [".github/workflows/**", "**/auth/**", "**/security/**"],
            "max_files_changed": 20,
            "max_additions": 500,
            "max_deletions": 500,
        },
        "goal": {
            "title": "Round totals",
            "description": "Round invoice totals half-up to cents.",
            "acceptance_criteria": ["totals have two decimals"],
            "test_plan": ["bash -lc 'pytest -q'"],
        },
        "stop_conditions": list(KNOWN_STOP_CONDITIONS),
    }


def with_change(path: str, value: Any) -> dict[str, Any]:
    """A valid request with one dotted path set to ``value`` (or removed when value is ...)."""
    doc = valid_request()
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    key: Any = int(last) if isinstance(node, list) else last
    if value is ...:
        del node[key]
    else:
        node[key] = value
    return doc


def codes(doc: Any) -> set[tuple[str, str]]:
    return {(e.field, e.code) for e in validate_request(doc).errors}


# --- the whole document ------------------------------------------------------------------


def test_valid_request_is_valid_and_document_is_returned() -> None:
    report = validate_request(valid_request())
    assert report.valid, report.to_json()
    assert report.kind == "openclaw_request"
    assert report.warnings == []
    assert report.document == valid_request()


def test_bytes_text_and_dict_give_the_same_verdict() -> None:
    doc = with_change("role", "boss")
    text = json.dumps(doc)
    as_dict = validate_request(doc).to_json()
    assert validate_request(text).to_json() == as_dict
    assert validate_request(text.encode()).to_json() == as_dict


def test_load_request_returns_model_only_when_valid() -> None:
    report, model = load_request(valid_request())
    assert report.valid and model is not None
    assert model.scope.max_additions == 500
    _, none = load_request(with_change("role", "boss"))
    assert none is None


def test_all_errors_are_collected_at_once() -> None:
    doc = valid_request()
    doc["task_id"] = "../x"
    doc["role"] = "boss"
    doc["scope"]["max_additions"] = -1
    doc["goal"]["title"] = " "
    found = codes(doc)
    assert {
        ("task_id", "unsafe_name"),
        ("role", "not_allowed"),
        ("scope.max_additions", "out_of_range"),
        ("goal.title", "empty"),
    } <= found


def test_unknown_fields_are_errors() -> None:
    assert ("extra", "unknown_field") in codes(with_change("extra", 1))
    assert ("scope.extra", "unknown_field") in codes(with_change("scope.extra", 1))


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "empty"),
        (b"\xff\xfe\x00garbage", "not_utf8"),
        (b"[1, 2]", "not_object"),
        ("{not json", "not_json"),
        ('{"task_id": "a", "task_id": "b"}', "duplicate_key"),
        ("[" * 5000 + "]" * 5000, "too_deep"),
        (b" " * (2 * 1024 * 1024), "too_large"),
    ],
)
def test_broken_documents_are_errors_not_exceptions(data: bytes | str, code: str) -> None:
    report = validate_request(data)
    assert not report.valid
    assert report.errors[0].code == code
    assert report.document is None


def test_non_dict_python_input_is_an_error() -> None:
    report = validate_request([1, 2])  # type: ignore[arg-type]
    assert [e.code for e in report.errors] == ["not_object"]


def test_huge_document_is_refused_cheaply() -> None:
    report = validate_request(b"{" + b" " * (50 * 1024 * 1024) + b"}")
    assert [e.code for e in report.errors] == ["too_large"]


# --- task_id -----------------------------------------------------------------------------


def test_task_id_is_required() -> None:
    assert ("task_id", "required") in codes(with_change("task_id", ...))


@pytest.mark.parametrize(
    "task_id",
    [
        "../x",
        "a/b",
        "a\\b",
        ".hidden",
        "-flag",
        "a..b",
        "",
        "x" * 129,
        "a b",
        "a\n",
        "é",
        "a\x00",
    ],
)
def test_unsafe_task_ids(task_id: str) -> None:
    assert ("task_id", "unsafe_name") in codes(with_change("task_id", task_id))


@pytest.mark.parametrize("task_id", ["a", "A-1.b_c", "x" * 128, "2026.01.task"])
def test_safe_task_ids(task_id: str) -> None:
    assert validate_request(with_change("task_id", task_id)).valid


def test_task_id_wrong_type() -> None:
    assert ("task_id", "wrong_type") in codes(with_change("task_id", 7))


# --- role and languages ------------------------------------------------------------------


def test_role_must_be_worker() -> None:
    assert ("role", "not_allowed") in codes(with_change("role", "supervisor"))


def test_canonical_language_non_blank() -> None:
    assert ("canonical_language", "empty") in codes(with_change("canonical_language", " "))
    assert ("canonical_language", "required") in codes(with_change("canonical_language", ...))


def test_bilingual_summary_languages_is_optional_list_of_strings() -> None:
    assert validate_request(with_change("bilingual_summary_languages", ...)).valid
    assert validate_request(with_change("bilingual_summary_languages", None)).valid
    assert validate_request(with_change("bilingual_summary_languages", [])).valid
    bad = codes(with_change("bilingual_summary_languages", [1]))
    assert ("bilingual_summary_languages.0", "wrong_type") in bad
    blank = codes(with_change("bilingual_summary_languages", [""]))
    assert ("bilingual_summary_languages.0", "empty") in blank


# --- repo --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["path", "base_ref", "target_branch"])
def test_repo_fields_required_and_non_blank(name: str) -> None:
    assert (f"repo.{name}", "required") in codes(with_change(f"repo.{name}", ...))
    assert (f"repo.{name}", "empty") in codes(with_change(f"repo.{name}", "  "))
    assert (f"repo.{name}", "wrong_type") in codes(with_change(f"repo.{name}", ["main"]))


# --- scope -------------------------------------------------------------------------------


def test_allowed_globs_non_empty() -> None:
    assert ("scope.allowed_globs", "empty") in codes(with_change("scope.allowed_globs", []))
    assert ("scope.allowed_globs.0", "empty") in codes(with_change("scope.allowed_globs", [" "]))


def test_deny_globs_may_be_empty_but_must_be_a_list() -> None:
    assert validate_request(with_change("scope.deny_globs", [])).valid
    assert ("scope.deny_globs", "wrong_type") in codes(with_change("scope.deny_globs", "x/**"))


@pytest.mark.parametrize("name", ["max_files_changed", "max_additions", "max_deletions"])
@pytest.mark.parametrize(
    ("value", "code"),
    [(-1, "out_of_range"), (True, "wrong_type"), (1.0, "wrong_type"), ("5", "wrong_type")],
)
def test_limits_are_non_negative_ints(name: str, value: Any, code: str) -> None:
    assert (f"scope.{name}", code) in codes(with_change(f"scope.{name}", value))


def test_zero_limits_are_fine() -> None:
    assert validate_request(with_change("scope.max_deletions", 0)).valid


@pytest.mark.parametrize(
    ("glob", "code"),
    [
        ("/abs/**", "glob_never_matches"),
        ("src/", "glob_never_matches"),
        ("src/../secrets/**", "glob_never_matches"),
        ("./src/**", "glob_never_matches"),
        ("src/[z-a].py", "glob_never_matches"),
        ("src/{a,b}/**", "bad_glob"),
        ("!src/**", "bad_glob"),
        ("src\\**", "bad_glob"),
        ("src/\x1b[31m", "bad_glob"),
        ("a" * 600, "bad_glob"),
    ],
)
def test_bad_globs(glob: str, code: str) -> None:
    assert ("scope.allowed_globs.1", code) in codes(with_change("scope.allowed_globs.1", glob))
    assert ("scope.deny_globs.0", code) in codes(with_change("scope.deny_globs.0", glob))


@pytest.mark.parametrize("glob", ["src/**", "**/*.py", "docs/*.md", "a//b", "[ab]/x", "**"])
def test_good_globs(glob: str) -> None:
    assert glob_problem(glob) is None


def test_too_many_globs() -> None:
    many = [f"src/{i}/**" for i in range(300)]
    assert ("scope.allowed_globs", "too_long") in codes(with_change("scope.allowed_globs", many))


# --- goal --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["title", "description"])
def test_goal_text_non_blank(name: str) -> None:
    assert (f"goal.{name}", "empty") in codes(with_change(f"goal.{name}", "\t"))
    assert (f"goal.{name}", "required") in codes(with_change(f"goal.{name}", ...))


@pytest.mark.parametrize("name", ["acceptance_criteria", "test_plan"])
def test_goal_lists_are_lists_of_strings(name: str) -> None:
    assert validate_request(with_change(f"goal.{name}", [])).valid
    assert (f"goal.{name}", "wrong_type") in codes(with_change(f"goal.{name}", "x"))
    assert (f"goal.{name}.0", "wrong_type") in codes(with_change(f"goal.{name}", [3]))


# --- stop conditions ---------------------------------------------------------------------


def test_stop_conditions_non_blank_strings() -> None:
    assert ("stop_conditions.0", "empty") in codes(with_change("stop_conditions", [""]))
    assert ("stop_conditions.0", "wrong_type") in codes(with_change("stop_conditions", [1]))
    assert ("stop_conditions", "required") in codes(with_change("stop_conditions", ...))


def test_unknown_stop_condition_is_a_warning() -> None:
    report = validate_request(with_change("stop_conditions", ["cannot-run-tests", "db-migration"]))
    assert report.valid
    assert [(w.field, w.code) for w in report.warnings] == [
        ("stop_conditions.1", "unknown_stop_condition")
    ]


def test_messages_name_the_field() -> None:
    report = validate_request(with_change("goal.title", " "))
    assert report.errors[0].message.startswith("goal.title ")


# --- glob semantics ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("src/**", "src/a/b.py", True),
        ("src/**", "src", False),
        ("src/*", "src/a/b.py", False),  # '*' never crosses '/'
        ("**/*.py", "x.py", True),
        ("**/auth/**", "auth/x", True),
        ("**/auth/**", "a/auth", False),
        ("a/**/b", "a/b", True),
        ("**", ".github/workflows/ci.yml", True),  # DOTGLOB
        ("docs/*.md", "docs/.hidden.md", True),
        ("{a,b}", "a", False),  # no brace expansion
        ("SRC/**", "src/a", False),
    ],
)
def test_glob_semantics(glob: str, path: str, expected: bool) -> None:
    assert GlobSet([glob]).match(path) is expected


def test_ignore_case_globs() -> None:
    assert GlobSet([".github/workflows/**"], ignore_case=True).match(".GitHub/Workflows/x.yml")


class _SegmentCounter:
    """Stands in for a glob segment's compiled pattern, noting every text it is asked about."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.asked: list[str] = []

    def fullmatch(self, text: str) -> re.Match[str] | None:
        self.asked.append(text)
        return self.pattern.fullmatch(text)


def test_glob_matching_walks_a_hostile_path_one_segment_at_a_time() -> None:
    # A backtracking matcher (wcmatch's one regular expression for the whole path) tries every
    # way to split this path between the `**`s: cubic, seconds at a few hundred segments. Ours
    # walks it once. Counted, not timed: each segment is matched on its own, at most once per
    # glob position, and the path is never handed whole to a regular expression.
    globs = GlobSet(["**/*a*/**/*a*/**/*b*/**/*c*"])
    (glob,) = globs._globs
    counters = [None if r is None else _SegmentCounter(r) for r in glob.regexes]
    glob.regexes = tuple(counters)  # type: ignore[arg-type]
    segments = ["aaa"] * 1000 + ["c"]
    assert not globs.match("/".join(segments))
    asked = [text for c in counters if c is not None for text in c.asked]
    positions = sum(1 for c in counters if c is not None)
    assert asked and set(asked) <= set(segments)
    assert len(asked) <= positions * len(segments)


def test_a_hostile_path_that_fails_on_its_last_segment_does_not_match() -> None:
    path = "/".join(["aaa"] * 1000) + "/y"
    assert not GlobSet(["**/*a*/**/*a*/**/*a*/**/*b*"]).match(path)


_SEGMENTS = st.sampled_from(["a", "b", ".a", "ab", "x.py", "ba", "A"])
_GLOB_TOKENS = st.sampled_from(
    ["*", "**", "a", "b", "?", "a*", "*.py", ".a", "[ab]", "[!a]", "*a*", "A", "[A-b]"]
)


@settings(max_examples=400, deadline=None)
@given(
    glob=st.lists(_GLOB_TOKENS, min_size=1, max_size=5).map("/".join),
    path=st.lists(_SEGMENTS, min_size=1, max_size=6).map("/".join),
    ignore_case=st.booleans(),
)
def test_globset_agrees_with_wcmatch(glob: str, path: str, ignore_case: bool) -> None:
    flags = wc_glob.GLOBSTAR | wc_glob.DOTGLOB | wc_glob.FORCEUNIX
    if ignore_case:
        flags |= wc_glob.IGNORECASE
    expected = wc_glob.globmatch(path, glob, flags=flags)
    assert GlobSet([glob], ignore_case=ignore_case).match(path) is expected


@settings(max_examples=300, deadline=None)
@given(glob=st.text(alphabet="ab/*?[]!^-.{},\\", max_size=12), path=st.text("ab/.", max_size=8))
def test_any_glob_text_is_judged_and_accepted_globs_compile(glob: str, path: str) -> None:
    problem = glob_problem(glob)
    if problem is None:
        GlobSet([glob]).match(path)
        GlobSet([glob], ignore_case=True).first_match(path)
    else:
        assert problem[0] in ("empty", "bad_glob", "glob_never_matches")


# --- never raises ------------------------------------------------------------------------

_JSON = json_values


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON)
def test_arbitrary_json_values_never_raise(value: Any) -> None:
    report = validate_request(json.dumps(value))
    assert isinstance(report.valid, bool)
    if isinstance(value, dict):
        assert validate_request(value).valid is report.valid


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200))
def test_arbitrary_bytes_and_text_never_raise(data: bytes | str) -> None:
    assert isinstance(validate_request(data).errors, list)


_FIELDS = [
    "task_id",
    "role",
    "canonical_language",
    "bilingual_summary_languages",
    "repo",
    "repo.path",
    "scope",
    "scope.allowed_globs",
    "scope.deny_globs",
    "scope.max_additions",
    "goal",
    "goal.test_plan",
    "stop_conditions",
]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_FIELDS), _JSON)
def test_any_field_replaced_by_any_value_never_raises(path: str, value: Any) -> None:
    doc = with_change(path, copy.deepcopy(value))
    report = validate_request(doc)
    assert report.document is doc
