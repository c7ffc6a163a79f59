"""The worker's completion: find the ``<completion>`` block in free output and gate it.

A run moves to ``review_requested`` only when every gate passes, else to ``failed_contract``. The
verdict lists every gate with pass/fail and a one-line detail, in a fixed order, because the
console's gate panel shows exactly this list.

Extraction rules (see docs/contracts.md):
- tags match in any case, with optional white space inside the angle brackets;
- when several blocks are present, the last one whose body is a strict JSON object wins (a worker
  may echo its prompt's example block before its real one);
- no block, or no block whose body is strict JSON, fails the first gate with a reason saying
  which; there is no bare-JSON fallback;
- output is decoded as UTF-8 with invalid bytes replaced (logs may hold binary noise; the block
  itself must still be strict JSON), and output beyond `MAX_OUTPUT_BYTES` is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from core.contracts.dispatch import P0_COMPLETION_FIELDS, PR_FIELDS, evidence_required
from core.contracts.errors import FieldError, is_blank, join_path, preview, sorted_errors, type_name
from core.contracts.jsondoc import loads_strict
from core.contracts.screenshot_ban import screenshot_errors

#: Larger worker output is refused rather than scanned; the host keeps bounded logs anyway.
MAX_OUTPUT_BYTES = 16 * 1024 * 1024

TargetState = Literal["review_requested", "failed_contract"]

GATES = (
    "parseable",
    "required_artifacts",
    "run_id_matches",
    "branch_matches",
    "commit_sha_format",
    "files_changed_format",
    "test_result_and_risk",
    "pr_reference",
    "browser_evidence",
)
"""Every gate, in the order the gate panel shows them."""

_TAG = re.compile(r"<\s*(/?)\s*completion\s*>", re.IGNORECASE)
_SHA = re.compile(r"[0-9a-fA-F]{6,40}")
_NOT_EVALUATED = "not evaluated: there is no parseable completion"


@dataclass(frozen=True, slots=True)
class GateResult:
    name: str
    passed: bool
    detail: str
    """One line for the gate panel: what passed, or what is wrong."""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Extraction:
    """What was found in the worker's output."""

    completion: dict[str, Any] | None
    blocks_found: int
    errors: tuple[FieldError, ...]
    chosen: int = 0
    """1-based position of the block that won, 0 when none did."""


@dataclass(slots=True)
class CompletionVerdict:
    state: TargetState
    gates: list[GateResult]
    errors: list[FieldError] = field(default_factory=list)
    completion: dict[str, Any] | None = None
    blocks_found: int = 0

    @property
    def passed(self) -> bool:
        return self.state == "review_requested"

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "gates": [g.to_json() for g in self.gates],
            "errors": [e.to_json() for e in self.errors],
            "completion": self.completion,
            "blocks_found": self.blocks_found,
        }


def _blocks(text: str) -> Iterator[str]:
    """Each block body, pairing every closing tag with the nearest opening tag before it."""
    open_end: int | None = None
    for match in _TAG.finditer(text):
        if match.group(1):  # a closing tag
            if open_end is not None:
                yield text[open_end : match.start()]
            open_end = None
        else:
            open_end = match.end()


def extract_completion(output: bytes | str) -> Extraction:
    """Find the completion object in a worker's output.

    Returns:
        The last block whose body is a strict JSON object, with the number of blocks seen, or the
        errors that explain why there is none.
    """
    size = len(output) if isinstance(output, bytes) else len(output.encode("utf-8", "replace"))
    if size > MAX_OUTPUT_BYTES:
        return Extraction(
            None,
            0,
            (
                FieldError(
                    "completion",
                    "output_too_large",
                    f"The worker output is over the {MAX_OUTPUT_BYTES:,}-byte limit.",
                ),
            ),
        )
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
    bodies = list(_blocks(text))
    if not bodies:
        return Extraction(
            None,
            0,
            (
                FieldError(
                    "completion",
                    "no_completion_block",
                    "The worker output has no <completion>…</completion> block.",
                ),
            ),
        )
    last_problem: FieldError | None = None
    for position in range(len(bodies), 0, -1):
        loaded = loads_strict(bodies[position - 1], limit=MAX_OUTPUT_BYTES)
        if loaded.ok and isinstance(loaded.value, dict):
            return Extraction(loaded.value, len(bodies), (), position)
        if last_problem is None:
            reason = (
                loaded.errors[0].message
                if loaded.errors
                else f"its body is {type_name(loaded.value)}, not an object."
            )
            last_problem = FieldError(
                "completion",
                "completion_not_json",
                f"Found {len(bodies)} completion block(s) but none is a strict JSON object; "
                f"the last one: {reason}",
            )
    assert last_problem is not None
    return Extraction(None, len(bodies), (last_problem,))


def _required_fields(dispatch: Mapping[str, Any]) -> list[str]:
    contract = dispatch.get("output_contract")
    listed = contract.get("required_fields") if isinstance(contract, dict) else None
    names = list(P0_COMPLETION_FIELDS)
    if isinstance(listed, list):
        names += [f for f in listed if isinstance(f, str) and f not in names]
    return names


def _present(completion: Mapping[str, Any], name: str) -> bool:
    value = completion.get(name)
    if is_blank(value):
        return False
    return not (isinstance(value, list | dict) and not value and name != "files_changed")


class _Gates:
    """Evaluates each gate against one completion, collecting errors as it goes."""

    def __init__(self, dispatch: Mapping[str, Any], completion: dict[str, Any]) -> None:
        self.dispatch = dispatch
        self.c = completion
        self.errors: list[FieldError] = []

    def _fail(self, name: str, errors: list[FieldError], detail: str | None = None) -> GateResult:
        self.errors.extend(errors)
        return GateResult(name, False, detail or " ".join(e.message for e in errors))

    def required_artifacts(self) -> GateResult:
        missing = [
            n
            for n in _required_fields(self.dispatch)
            if n not in PR_FIELDS and not _present(self.c, n)
        ]
        if not any(_present(self.c, n) for n in PR_FIELDS):
            missing.append("pr_url or pr_skipped_reason")
        if missing:
            errors = [
                FieldError(n, "required", f"{n} is required and must not be blank.")
                for n in missing
                if " " not in n
            ]
            return self._fail(
                "required_artifacts", errors, f"missing or blank: {', '.join(missing)}"
            )
        return GateResult("required_artifacts", True, "every required field is present")

    def _matches(self, name: str, gate: str) -> GateResult:
        expected = self.dispatch.get(name)
        got = self.c.get(name)
        if is_blank(got):
            return GateResult(gate, False, f"{name} is missing")
        if got != expected:
            return self._fail(
                gate,
                [
                    FieldError(
                        name,
                        f"{name}_mismatch",
                        f"{name} {preview(got)} does not match the dispatch's {preview(expected)}.",
                    )
                ],
            )
        return GateResult(gate, True, f"{name} matches the dispatch")

    def run_id_matches(self) -> GateResult:
        return self._matches("run_id", "run_id_matches")

    def branch_matches(self) -> GateResult:
        return self._matches("branch", "branch_matches")

    def commit_sha_format(self) -> GateResult:
        sha = self.c.get("commit_sha")
        if is_blank(sha):
            return GateResult("commit_sha_format", False, "commit_sha is missing")
        if not isinstance(sha, str) or not _SHA.fullmatch(sha):
            return self._fail(
                "commit_sha_format",
                [
                    FieldError(
                        "commit_sha",
                        "commit_sha_format",
                        f"commit_sha {preview(sha)} must be 6 to 40 hexadecimal characters.",
                    )
                ],
            )
        return GateResult("commit_sha_format", True, f"commit {sha}")

    def files_changed_format(self) -> GateResult:
        files = self.c.get("files_changed")
        if files is None:
            return GateResult("files_changed_format", False, "files_changed is missing")
        if not isinstance(files, list):
            return self._fail(
                "files_changed_format",
                [
                    FieldError(
                        "files_changed",
                        "wrong_type",
                        f"files_changed must be an array of strings, not {type_name(files)}.",
                    )
                ],
            )
        bad = [
            FieldError(
                join_path("files_changed", i),
                "wrong_type" if not isinstance(f, str) else "empty",
                f"files_changed.{i} must be a non-blank string.",
            )
            for i, f in enumerate(files)
            if not isinstance(f, str) or not f.strip()
        ]
        if bad:
            return self._fail("files_changed_format", bad)
        count = len(files)
        return GateResult(
            "files_changed_format", True, f"{count} file{'s' if count != 1 else ''} changed"
        )

    def test_result_and_risk(self) -> GateResult:
        errors = []
        for name in ("test_result", "risk"):
            value = self.c.get(name)
            if value is None:
                continue  # reported by required_artifacts
            if not isinstance(value, str) or not value.strip():
                errors.append(FieldError(name, "empty", f"{name} must be a non-blank string."))
        missing = [n for n in ("test_result", "risk") if self.c.get(n) is None]
        if errors:
            return self._fail("test_result_and_risk", errors)
        if missing:
            return GateResult("test_result_and_risk", False, f"{' and '.join(missing)} missing")
        return GateResult("test_result_and_risk", True, "test result and risk are stated")

    def pr_reference(self) -> GateResult:
        url = self.c.get("pr_url")
        reason = self.c.get("pr_skipped_reason")
        if not is_blank(url):
            if not isinstance(url, str) or not _is_web_url(url):
                return self._fail(
                    "pr_reference",
                    [
                        FieldError(
                            "pr_url",
                            "pr_url_format",
                            f"pr_url {preview(url)} must be an http(s) URL.",
                        )
                    ],
                )
            return GateResult("pr_reference", True, f"pull request {url}")
        if not is_blank(reason):
            if not isinstance(reason, str):
                return self._fail(
                    "pr_reference",
                    [
                        FieldError(
                            "pr_skipped_reason",
                            "wrong_type",
                            "pr_skipped_reason must be a string.",
                        )
                    ],
                )
            return GateResult("pr_reference", True, f"no pull request: {reason}")
        return self._fail(
            "pr_reference",
            [
                FieldError(
                    "pr_url",
                    "pr_reference_required",
                    "Either pr_url or a non-blank pr_skipped_reason is required.",
                )
            ],
        )

    def browser_evidence(self) -> GateResult:
        required = evidence_required(self.dispatch)
        evidence = self.c.get("browser_evidence")
        if evidence is None:
            if required:
                return self._fail(
                    "browser_evidence",
                    [
                        FieldError(
                            "browser_evidence",
                            "required",
                            "browser_evidence is required by this dispatch.",
                        )
                    ],
                )
            return GateResult("browser_evidence", True, "not required by this dispatch")
        # The screenshot ban covers evidence whether or not it was required.
        errors = list(screenshot_errors(evidence, "browser_evidence", subject="browser evidence"))
        if required:
            errors.extend(_evidence_errors(evidence))
        if errors:
            return self._fail("browser_evidence", sorted_errors(errors))
        if not required:
            return GateResult("browser_evidence", True, "not required; given evidence is clean")
        assert isinstance(evidence, dict)
        return GateResult(
            "browser_evidence",
            True,
            f"{len(evidence['execute_tool_evidence'])} tool step(s) against {evidence['base_url']}",
        )


def _is_web_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def base_url_problem(url: str) -> str | None:
    """Why ``url`` is not an ``http(s)://127.0.0.1:<port>/...`` base URL, or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "is not a valid URL"
    if parts.scheme not in ("http", "https"):
        return "must use http or https"
    if parts.hostname != "127.0.0.1":
        return "must point at 127.0.0.1 (the worker's own loopback server)"
    if port is None or port == 0:
        return "must name a port"
    if parts.path not in ("",) and not parts.path.startswith("/"):
        return "has a malformed path"
    return None


def _evidence_errors(evidence: Any) -> Iterator[FieldError]:
    if not isinstance(evidence, dict):
        yield FieldError(
            "browser_evidence",
            "wrong_type",
            f"browser_evidence must be an object, not {type_name(evidence)}.",
        )
        return
    base_url = evidence.get("base_url")
    if is_blank(base_url):
        yield FieldError(
            "browser_evidence.base_url", "required", "browser_evidence.base_url is required."
        )
    elif not isinstance(base_url, str):
        yield FieldError(
            "browser_evidence.base_url", "wrong_type", "browser_evidence.base_url must be a string."
        )
    else:
        problem = base_url_problem(base_url)
        if problem:
            yield FieldError(
                "browser_evidence.base_url",
                "base_url_format",
                f"browser_evidence.base_url {preview(base_url)} {problem}.",
            )
    for name in ("tools_listed", "execute_tool_evidence"):
        path = f"browser_evidence.{name}"
        value = evidence.get(name)
        if value is None:
            yield FieldError(path, "required", f"{path} is required.")
        elif not isinstance(value, list):
            yield FieldError(path, "wrong_type", f"{path} must be an array of strings.")
        elif not value:
            yield FieldError(path, "empty", f"{path} must not be empty.")
        else:
            for i, item in enumerate(value):
                if not isinstance(item, str) or not item.strip():
                    yield FieldError(
                        join_path(path, i), "empty", f"{path}.{i} must be a non-blank string."
                    )


def evaluate_completion(dispatch: Mapping[str, Any], output: bytes | str) -> CompletionVerdict:
    """Run every completion gate for one worker output against its (valid) dispatch.

    Args:
        dispatch: the dispatch the worker was given, as a parsed object. It should already be
            valid (see `core.contracts.dispatch.validate_dispatch`); gates read it defensively.
        output: the worker's whole output, in which the completion block is found.

    Returns:
        The target state, every gate's result in `GATES` order, and all errors.
    """
    found = extract_completion(output)
    if found.completion is None:
        detail = found.errors[0].message if found.errors else "no completion"
        gates = [GateResult("parseable", False, detail)] + [
            GateResult(name, False, _NOT_EVALUATED) for name in GATES[1:]
        ]
        return CompletionVerdict(
            "failed_contract", gates, list(found.errors), None, found.blocks_found
        )
    checks = _Gates(dispatch, found.completion)
    gates = [
        GateResult(
            "parseable",
            True,
            f"completion block {found.chosen} of {found.blocks_found} parsed"
            if found.blocks_found > 1
            else "completion block parsed",
        ),
        checks.required_artifacts(),
        checks.run_id_matches(),
        checks.branch_matches(),
        checks.commit_sha_format(),
        checks.files_changed_format(),
        checks.test_result_and_risk(),
        checks.pr_reference(),
        checks.browser_evidence(),
    ]
    state: TargetState = "review_requested" if all(g.passed for g in gates) else "failed_contract"
    return CompletionVerdict(
        state, gates, sorted_errors(checks.errors), found.completion, found.blocks_found
    )
