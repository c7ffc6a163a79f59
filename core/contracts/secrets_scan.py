"""Find secrets in worker output (report text and a patch's added lines) and mask them.

Three kinds of rule, with different attitudes to look-alikes:

* Token formats with a distinctive shape (private key blocks, AWS key ids, GitHub/GitLab/Slack/
  Stripe/Google keys, Anthropic/OpenAI/other AI-provider keys, JSON web tokens) are always
  findings, even when they look like documentation examples (``AKIAIOSFODNN7EXAMPLE``): a real
  key can contain any letters, and a false alarm costs one look by a person while a missed key
  costs a rotation.
* The token of an ``Authorization: Bearer`` header, unless it is a placeholder.
* Generic assignments (``password = "..."``, ``api_key: ...``, ``token=...``) are findings only
  when the value is a literal that is not a placeholder; see `is_placeholder` for the exact list.

A finding never carries the secret: its excerpt is the line with every secret masked by
`mask_secrets`, which keeps at most the first four characters (fewer for short values).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from core.contracts.diffparse import AddedLine, ParsedDiff
from core.contracts.secret_placeholders import DUMMY_MARKERS, DUMMY_WORDS, MASK, is_placeholder
from core.text import as_read

__all__ = [
    "DUMMY_MARKERS",
    "DUMMY_WORDS",
    "MASK",
    "PEM_BEGIN",
    "PEM_END",
    "Redacted",
    "SecretFinding",
    "is_placeholder",
    "mask_secrets",
    "redact",
    "scan_diff",
    "scan_lines",
    "scan_text",
]

_EXCERPT_LIMIT: Final = 160
_FINDINGS_LIMIT: Final = 500
"""Per scanned text; a generated file full of keys needs a person either way."""

_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-+/=]*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One probable secret; the secret itself is never stored."""

    code: str
    """Stable snake_case identifier, e.g. ``secret_aws_key``."""
    kind: str
    """What was found, for people, e.g. ``AWS access key id``."""
    path: str
    """The file it is in (``report.md``, or a changed path in the patch)."""
    line: int
    """1-based line number (in the new version of the file for patch lines)."""
    excerpt: str
    """The line with every secret masked, control characters escaped, at most 160 chars."""

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "kind": self.kind,
            "path": self.path,
            "line": self.line,
            "excerpt": self.excerpt,
        }


@dataclass(frozen=True, slots=True)
class _Rule:
    code: str
    kind: str
    pattern: re.Pattern[str]
    group: int | str
    """Which group is the secret; 0 for the whole match."""
    mask: bool = True
    """False when the match is a marker, not the secret (a PEM body is masked separately)."""


_SEP = r"[ \t]*(?::=|=>|=(?!=)|:)[ \t]*"

#: PEM private key markers; "BEGIN ... PRIVATE KEY" alone is reported even without a body.
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
#: The same markers, for text masked line by line (a patch read as a stream), where a key's
#: body lines carry no marker of their own and only the lines around them say what they are.
PEM_BEGIN: Final = _PEM_BEGIN
PEM_END: Final = _PEM_END

#: Ordered: when two rules cover overlapping text, the earlier (more specific) one is reported.
#: Token rules have no word-boundary assertions on purpose: a token glued to other text is still
#: a token, and a boundary would let it through unmasked.
_FORMAT_RULES: Final = (
    _Rule(
        "secret_gcp_service_account",
        "GCP service-account private key",
        re.compile(r'"private_key"[ \t]*:[ \t]*"(-----BEGIN [^"\n]{0,20000})'),
        1,
    ),
    _Rule("secret_private_key", "private key block", _PEM_BEGIN, 0, mask=False),
    _Rule(
        "secret_aws_key",
        "AWS access key id",
        re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{16}"),
        0,
    ),
    _Rule(
        "secret_aws_key",
        "AWS secret access key",
        re.compile(
            r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?"
            + _SEP
            + r"[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        1,
    ),
    _Rule(
        "secret_google_api_key",
        "Google API key",
        re.compile(r"AIza[0-9A-Za-z_\-]{35}"),
        0,
    ),
    _Rule(
        "secret_forge_token",
        "GitHub token",
        re.compile(r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}"),
        0,
    ),
    _Rule(
        "secret_forge_token",
        "GitLab personal access token",
        re.compile(r"glpat-[A-Za-z0-9_\-]{20,255}"),
        0,
    ),
    _Rule(
        "secret_slack_token",
        "Slack token",
        re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,255}"),
        0,
    ),
    _Rule(
        "secret_stripe_key",
        "Stripe live secret key",
        re.compile(r"(?:sk|rk)_live_[0-9A-Za-z]{24,255}"),
        0,
    ),
    # AI providers' keys: what a coding agent's own environment holds, and so what it echoes.
    _Rule(
        "secret_ai_key",
        "Anthropic API key",
        re.compile(r"sk-ant-[A-Za-z0-9_\-]{20,255}"),
        0,
    ),
    _Rule(
        "secret_ai_key",
        "OpenAI API key",
        re.compile(
            r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,255}"
            r"|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
        ),
        0,
    ),
    _Rule(
        "secret_ai_key",
        "AI provider API key",
        # sk- and 32 or more letters and digits, both present (DeepSeek, Moonshot and others;
        # OpenAI's oldest keys). A word glued to sk- has no digits, a hash no letters past f.
        re.compile(
            r"sk-(?=[A-Za-z0-9]{0,254}[0-9])(?=[A-Za-z0-9]{0,254}[A-Za-z])[A-Za-z0-9]{32,255}"
        ),
        0,
    ),
    _Rule(
        "secret_bearer_token",
        "JSON web token",
        # Header and claims are base64url JSON objects, so both begin eyJ ('{"').
        re.compile(r"eyJ[A-Za-z0-9_\-]{8,4096}\.eyJ[A-Za-z0-9_\-]{8,8192}\.[A-Za-z0-9_\-]{0,4096}"),
        0,
    ),
)

#: Names that make an assignment a credential. The name must end there (``token_type`` and
#: ``max_tokens`` are not credentials); any prefix is fine (``DB_PASSWORD``, ``github_token``).
_ASSIGNMENT = re.compile(
    r"(?i:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|"
    r"secret[_-]?key|private[_-]?key|auth[_-]?key)"
    r"[\"']?"
    # An optional type annotation, so `password: str = "..."` is read as an assignment.
    r"(?:[ \t]*:[ \t]*[A-Za-z_][\w.\[\], |]{0,40}?(?=[ \t]*=))?"
    + _SEP
    + r"(?P<val>\"(?:[^\"\\\n]|\\.){0,2000}\"|'(?:[^'\\\n]|\\.){0,2000}'|`[^`\n]{0,2000}`"
    r"|[^\s'\"`,;]{1,2000})"
)


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    code: str
    kind: str
    mask: bool = True


#: ``Authorization: Bearer <token>`` and the like: the token after the scheme, when it is long
#: enough to be one and not a placeholder (``Bearer <token>``, ``Bearer YOUR_TOKEN``).
_BEARER = re.compile(r"(?i:\bbearer)[ \t]+(?P<val>[A-Za-z0-9\-._~+/]{20,4096}=*)")


def _bearer_spans(text: str) -> list[_Span]:
    spans: list[_Span] = []
    for m in _BEARER.finditer(text):
        if is_placeholder(m.group("val"), quoted=False):
            continue
        spans.append(_Span(m.start("val"), m.end("val"), "secret_bearer_token", "bearer token"))
    return spans


def _assignment_spans(text: str) -> list[_Span]:
    spans: list[_Span] = []
    for m in _ASSIGNMENT.finditer(text):
        raw = m.group("val")
        quoted = raw[:1] in ("'", '"', "`")
        value = raw[1:-1] if quoted else raw
        if is_placeholder(value, quoted=quoted):
            continue
        start = m.start("val") + (1 if quoted else 0)
        spans.append(_Span(start, start + len(value), "secret_assignment", "credential assignment"))
    return spans


def _spans(text: str) -> list[_Span]:
    """Every secret span in ``text`` in order, overlaps resolved in favour of earlier rules."""
    found: list[tuple[int, int, _Span]] = []
    for priority, rule in enumerate(_FORMAT_RULES):
        for m in rule.pattern.finditer(text):
            span = _Span(m.start(rule.group), m.end(rule.group), rule.code, rule.kind, rule.mask)
            found.append((span.start, priority, span))
    found.extend((span.start, len(_FORMAT_RULES), span) for span in _bearer_spans(text))
    found.extend((span.start, len(_FORMAT_RULES) + 1, span) for span in _assignment_spans(text))
    # Spans that start together (a GCP key's value and the PEM marker inside it) go to the more
    # specific rule; a span that starts inside one already kept is part of the same secret.
    found.sort(key=lambda item: (item[0], item[1]))
    kept: list[_Span] = []
    for _, _, span in found:
        end = span.end
        if span.mask:
            # Mask to the end of the run of token characters: a longer or glued-on token must not
            # show past the part a rule happened to match.
            run = _TOKEN_RUN.match(text, end)
            if run is not None:
                end = run.end()
        if kept and span.start < kept[-1].end:
            last = kept[-1]
            if end > last.end and last.mask:
                kept[-1] = _Span(last.start, end, last.code, last.kind, last.mask)
            elif end > last.end:
                # A masked secret that starts inside an unmasked marker: keep both, clipped.
                kept.append(_Span(last.end, end, span.code, span.kind, span.mask))
            continue
        kept.append(_Span(span.start, end, span.code, span.kind, span.mask))
    return kept


def _mask_one(secret: str) -> str:
    # At most four characters survive, and never more than a third of the value, so a short
    # password is not half revealed. The mask has a fixed length so it does not leak the length.
    keep = min(4, len(secret) // 3)
    return secret[:keep] + MASK


def _mask_pem_bodies(text: str) -> str:
    out: list[str] = []
    pos = 0
    no_end_after = len(text) + 1  # once END is missing after some offset, it is missing later
    for m in _PEM_BEGIN.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos : m.end()])
        end_match = _PEM_END.search(text, m.end()) if m.end() < no_end_after else None
        if end_match is None:
            no_end_after = min(no_end_after, m.end())
            # No END marker: mask up to the next blank line, where a pasted key would stop.
            blank = text.find("\n\n", m.end())
            stop = len(text) if blank < 0 else blank
        else:
            stop = end_match.start()
        body = text[m.end() : stop]
        if body:
            # Keep the line structure around the key so the rest of the text still lines up.
            lead = "\n" if body.startswith("\n") else ""
            trail = "\n" if body.endswith("\n") and len(body) > 1 else ""
            out.append(lead + MASK + trail)
        pos = stop
    out.append(text[pos:])
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Redacted:
    """Text with its secrets masked, and what kinds of secret were in it (never the values)."""

    text: str
    kinds: tuple[str, ...]
    """Sorted, each once, e.g. ``("AWS access key id", "Anthropic API key")``."""


#: Something every rule needs somewhere in the text. Most worker text has none of these, and
#: one search for them is what lets the host mask every progress event without slowing ingest.
#: Searched in the lowercased text: a case-blind alternation is several times slower.
_TRIGGER = re.compile(
    r"private key|akia|asia|aiza|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|_live_|sk-|eyj"
    r"|bearer|passw|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|auth[_-]?key"
)


def redact(text: str) -> Redacted:
    """Mask every secret the scanner recognises in ``text`` as a person reads it, saying which
    kinds it found.

    A person reads the text with its escape sequences, controls and invisible characters taken
    out (`core.text.as_read`): a terminal acts on them, and a reader of their visible escapes
    skips them. So a key a worker split with a colour code (``AKIAIOSF\\x1b[0mODNN7EXAMPLE``)
    is masked like the key it shows. The text keeps those characters, for the console and the
    CLI to show escaped, unless a secret hid behind them: then it is returned as read, masked.

    The engine calls this once, on worker text as it is stored (progress, completions, stderr),
    so that every reader shows the same masked text and the run can be flagged; readers call it
    again on display for rows stored by an older engine. `mask_secrets` is the same without the
    kinds. Safe to call on any text; linear in its length.
    """
    read = as_read(text)
    as_written = _redact_as_written(text)
    if read is text:
        return as_written
    seen = _redact_as_written(read)
    if not seen.kinds:
        return as_written
    kinds = tuple(sorted({*as_written.kinds, *seen.kinds}))
    if as_read(as_written.text) == seen.text:
        return Redacted(as_written.text, kinds)  # nothing hid inside a secret
    return Redacted(seen.text, kinds)


def _redact_as_written(text: str) -> Redacted:
    if not _TRIGGER.search(text.lower()):
        return Redacted(text, ())
    text = _mask_pem_bodies(text)
    spans = _spans(text)
    if not spans:
        return Redacted(text, ())
    out: list[str] = []
    pos = 0
    for span in spans:
        if not span.mask:
            continue
        out.append(text[pos : span.start])
        out.append(_mask_one(text[span.start : span.end]))
        pos = span.end
    out.append(text[pos:])
    return Redacted("".join(out), tuple(sorted({span.kind for span in spans})))


def mask_secrets(text: str) -> str:
    """Return ``text`` with every secret the scanner recognises masked.

    Private key blocks keep their BEGIN/END markers and lose their body; every other secret
    keeps at most its first four characters followed by ``****``. Placeholders are left alone,
    and so is a value masked already, so masking twice changes nothing more. Safe to call on any
    text; linear in its length.
    """
    return redact(text).text


def _excerpt(line: str) -> str:
    # Mask the whole line before cutting it, so a secret cut in half is still recognised.
    masked = mask_secrets(line).strip()
    masked = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", masked)
    if len(masked) > _EXCERPT_LIMIT:
        masked = masked[: _EXCERPT_LIMIT - 1] + "…"
    return masked


def _scan_joined(text: str, path: str, line_numbers: Sequence[int] | None) -> list[SecretFinding]:
    """Scan text whose lines are numbered 1.. (or by ``line_numbers`` when given), as written
    and as a person reads it (`redact`): taking out what a reader never sees keeps every line
    where it was, so both scans number lines alike."""
    findings = _scan_as_written(text, path, line_numbers)
    read = as_read(text)
    if read == text:
        return findings
    have = {(found.code, found.line) for found in findings}
    more = [f for f in _scan_as_written(read, path, line_numbers) if (f.code, f.line) not in have]
    return (
        sorted(findings + more, key=lambda found: found.line)[:_FINDINGS_LIMIT]
        if more
        else findings
    )


def _scan_as_written(
    text: str, path: str, line_numbers: Sequence[int] | None
) -> list[SecretFinding]:
    spans = _spans(text)
    if not spans:
        return []
    newlines = [m.start() for m in re.finditer("\n", text)]
    findings: list[SecretFinding] = []
    seen: set[tuple[str, int]] = set()
    for span in spans:
        index = bisect.bisect_left(newlines, span.start)
        number = line_numbers[index] if line_numbers is not None else index + 1
        if (span.code, number) in seen:
            continue
        seen.add((span.code, number))
        line_start = newlines[index - 1] + 1 if index > 0 else 0
        line_end = newlines[index] if index < len(newlines) else len(text)
        findings.append(
            SecretFinding(
                code=span.code,
                kind=span.kind,
                path=path,
                line=number,
                excerpt=_excerpt(text[line_start:line_end]),
            )
        )
        if len(findings) >= _FINDINGS_LIMIT:
            break
    return findings


def scan_text(text: str, path: str) -> list[SecretFinding]:
    """Scan a whole text (e.g. report.md) for secrets.

    Args:
        text: The text; lines are split on ``\\n`` only.
        path: The name to put in findings.

    Returns:
        Findings in text order, at most one per code and line, at most 500.
    """
    return _scan_joined(text, path, None)


def scan_lines(lines: Iterable[AddedLine], path: str) -> list[SecretFinding]:
    """Scan numbered lines (e.g. a file's added lines), reporting their own line numbers."""
    items = list(lines)
    if not items:
        return []
    # One joined scan instead of one per line keeps a 20 MB patch to a few regex passes.
    text = "\n".join(item.text.replace("\n", " ") for item in items)
    return _scan_joined(text, path, [item.line for item in items])


def scan_diff(diff: ParsedDiff) -> list[SecretFinding]:
    """Scan the added lines of every file in a parsed patch (removed lines are not scanned)."""
    findings: list[SecretFinding] = []
    for file in diff.files:
        findings.extend(scan_lines(file.added_lines, file.path))
        if len(findings) >= _FINDINGS_LIMIT:
            return findings[:_FINDINGS_LIMIT]
    return findings
