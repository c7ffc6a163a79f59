"""Secret scan: one test per rule and per placeholder kind, masking, and never-raise checks.

Fake secrets are assembled from pieces so that this file itself does not look like a leak to
other scanners.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.contracts import secrets_scan
from core.contracts.diffparse import AddedLine, parse_diff
from core.contracts.secrets_scan import (
    MASK,
    is_placeholder,
    mask_secrets,
    scan_diff,
    scan_lines,
    scan_text,
)

AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GH_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopq"
GLPAT = "glpat-" + "x1Y2z3W4v5U6t7S8r9Q0"
SLACK = "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKl"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
GOOGLE = "AIza" + "SyA1234567890abcdefghijklmnopqrstuv"
PEM_BEGIN = "-----BEGIN RSA " + "PRIVATE KEY-----"
PEM_END = "-----END RSA " + "PRIVATE KEY-----"


def found(text: str) -> list[str]:
    return [f.code for f in scan_text(text, "report.md")]


@pytest.mark.parametrize(
    ("line", "code", "secret"),
    [
        (PEM_BEGIN, "secret_private_key", None),
        ("-----BEGIN OPENSSH " + "PRIVATE KEY-----", "secret_private_key", None),
        ("-----BEGIN " + "PRIVATE KEY-----", "secret_private_key", None),
        (f"key id {AWS_ID} in config", "secret_aws_key", AWS_ID),
        ("ASIA" + "Y34FZKBOKMUTVV7A", "secret_aws_key", "ASIAY34FZKBOKMUTVV7A"),
        (f'aws_secret_access_key = "{AWS_SECRET}"', "secret_aws_key", AWS_SECRET),
        (f"secretAccessKey: {AWS_SECRET}", "secret_aws_key", AWS_SECRET),
        (
            '"private_key": "' + "-----BEGIN " + 'PRIVATE KEY-----\\nMIIEvQIBADANBg\\n"',
            "secret_gcp_service_account",
            "-----BEGIN " + "PRIVATE KEY-----\\nMIIEvQIBADANBg\\n",
        ),
        (f"key={GOOGLE}", "secret_google_api_key", GOOGLE),
        (f"export GH={GHP}", "secret_forge_token", GHP),
        (f"token {GH_PAT}", "secret_forge_token", GH_PAT),
        (f"GITLAB {GLPAT}", "secret_forge_token", GLPAT),
        (f"slack: {SLACK}", "secret_slack_token", SLACK),
        (f"stripe.api_key_value {STRIPE}", "secret_stripe_key", STRIPE),
        ('password = "s3cr3t-Value-9"', "secret_assignment", "s3cr3t-Value-9"),
        ("DB_PASSWORD=hunter22", "secret_assignment", "hunter22"),
        ("api_key: 'abcd1234efgh'", "secret_assignment", "abcd1234efgh"),
        ('"token": "tok_9f8e7d6c5b4a"', "secret_assignment", "tok_9f8e7d6c5b4a"),
        ('password: str = "Tr0ub4dor&3"', "secret_assignment", "Tr0ub4dor&3"),
        ("client_secret => 'q1w2e3r4t5'", "secret_assignment", "q1w2e3r4t5"),
        ("connect(passwd='pa55word!')", "secret_assignment", "pa55word!"),
        ("SECRET_KEY = 'django-insecure-8f7d6'", "secret_assignment", "django-insecure-8f7d6"),
    ],
)
def test_each_rule_finds_its_secret_and_masks_it(line: str, code: str, secret: str | None) -> None:
    (finding,) = scan_text(f"intro\n{line}\n", "report.md")
    assert finding.code == code
    assert (finding.path, finding.line) == ("report.md", 2)
    if secret is not None:
        assert secret not in finding.excerpt
        assert secret[5:] not in finding.excerpt
        assert secret[: min(4, len(secret) // 3)] + MASK in finding.excerpt
    assert finding.to_json()["code"] == code


@pytest.mark.parametrize(
    "line",
    [
        'password = ""',
        "password = ''",
        'password = "***"',
        'password = "********"',
        "token = <redacted>",
        'api_key = "<your-api-key>"',
        'secret = "${VAR}"',
        "token: ${{ secrets.GITHUB_TOKEN }}",
        'password = "{{ vault_password }}"',
        "PASSWORD=$DB_PASSWORD",
        'password = "%(password)s"',
        'token = "%TOKEN%"',
        "password = os.environ['DB_PASSWORD']",
        'password = os.getenv("DB_PASSWORD")',
        "apiKey: process.env.API_KEY",
        'password = "changeme"',
        'password = "CHANGE_ME_PLEASE"',
        'api_key = "example-key-123"',
        'token = "dummy-token-1"',
        'secret = "placeholder"',
        'password = "your_password_here"',
        'password = "xxxxxxxx"',
        'password = "password"',
        "password = None",
        "secret: true",
        "token = get_token()",
        "password = new_password",
        "secret_key = settings.SECRET_KEY",
        "csrf_token = request.POST['csrf']",
        "password: !vault |",
        "def login(password: str) -> None:",
        "token_type = 'bearer'",
        "max_tokens = 4096",
        "passwordless = 'enabled1'",
        "if password == 'literal123':",
        "See the password: reset flow",
    ],
)
def test_placeholders_and_code_are_not_findings(line: str) -> None:
    assert found(line) == []
    assert mask_secrets(line) == line


@pytest.mark.parametrize(
    ("value", "quoted", "expected"),
    [
        ("", True, True),
        ("abc", True, True),
        ("abcd", True, False),
        ("hunter", False, True),
        ("hunter2", False, False),
        ("AbCdEfGhIjKlMnOpQrStUv", False, False),
        ("•••••", True, True),
        ("{password}", True, True),
    ],
)
def test_is_placeholder(value: str, quoted: bool, expected: bool) -> None:
    assert is_placeholder(value, quoted=quoted) is expected


def test_structured_tokens_are_findings_even_when_they_look_like_examples() -> None:
    # AKIAIOSFODNN7EXAMPLE is AWS's documented example, but a real key could contain EXAMPLE.
    assert found(f"aws_access_key_id = {AWS_ID}") == ["secret_aws_key"]


def test_mask_keeps_at_most_four_characters() -> None:
    masked = mask_secrets(f"a {GHP} b")
    assert masked == f"a ghp_{MASK} b"
    short = mask_secrets('password = "abcdefg"')
    assert short == f'password = "ab{MASK}"'


def test_mask_private_key_block_keeps_markers_and_lines() -> None:
    text = f"before\n{PEM_BEGIN}\nMIIEpAIBAAKCAQEA\nz9y8x7w6\n{PEM_END}\nafter"
    masked = mask_secrets(text)
    assert masked == f"before\n{PEM_BEGIN}\n{MASK}\n{PEM_END}\nafter"


def test_mask_private_key_without_end_stops_at_blank_line() -> None:
    text = f"{PEM_BEGIN}\nMIIEpAIBAAKCAQEA\n\nkept"
    assert mask_secrets(text) == f"{PEM_BEGIN}\n{MASK}\n\nkept"


class _ScanCounter:
    """Stands in for a compiled pattern, counting the characters its searches start over."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.scanned = 0

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        self.scanned += len(text) - pos
        return self.pattern.search(text, pos)


def test_many_unterminated_key_blocks_are_searched_for_an_end_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Looking for an END marker after every BEGIN would scan the rest of the text each time:
    # quadratic in the number of blocks. Once one BEGIN has no END after it, none after it has,
    # so the search for an END covers the text once at most. Counted, not timed.
    end = _ScanCounter(secrets_scan._PEM_END)
    monkeypatch.setattr(secrets_scan, "_PEM_END", end)
    text = (PEM_BEGIN + " x\n\n") * 20_000
    masked = mask_secrets(text)
    assert masked.count(PEM_BEGIN) == 20_000 and " x" not in masked
    assert 0 < end.scanned <= len(text)


def test_one_finding_per_code_and_line_and_overlaps_resolved() -> None:
    line = '{"private_key": "' + "-----BEGIN " + 'PRIVATE KEY-----\\nMIIE\\n"}'
    assert found(line) == ["secret_gcp_service_account"]
    assert found(f"{AWS_ID} {AWS_ID}") == ["secret_aws_key"]


def test_excerpt_escapes_control_characters_and_is_short() -> None:
    (finding,) = scan_text("\x1b[31m" + "x" * 300 + f" {GHP}", "r")
    assert "\x1b" not in finding.excerpt and "\\x1b" in finding.excerpt
    assert len(finding.excerpt) <= 160
    assert GHP not in finding.excerpt


def test_scan_lines_uses_the_given_line_numbers() -> None:
    lines = [AddedLine(10, "ok"), AddedLine(42, f"key = {AWS_ID}")]
    (finding,) = scan_lines(lines, "src/x.py")
    assert (finding.path, finding.line) == ("src/x.py", 42)


def test_scan_diff_reads_added_lines_only() -> None:
    diff = parse_diff(
        "--- a/cfg.env\n+++ b/cfg.env\n@@ -1,2 +1,2 @@\n"
        f"-OLD_KEY={AWS_ID}\n+TOKEN={GHP}\n context\n"
    )
    findings = scan_diff(diff)
    assert [(f.code, f.path, f.line) for f in findings] == [("secret_forge_token", "cfg.env", 1)]


def test_findings_are_capped() -> None:
    assert len(scan_text(f"{AWS_ID}\n" * 2000, "r")) == 500


def test_large_ordinary_text_has_no_findings() -> None:
    # How fast a large text scans is a benchmark figure (tests/bench/bench_contracts.py).
    text = "ordinary line of prose with token words and a password mention\n" * 30_000
    assert scan_text(text, "r") == []


def test_many_lines_are_scanned_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # A patch's added lines are joined and scanned once, not once per line: the rules' patterns
    # run over the text a fixed number of times however many lines there are.
    passes: list[int] = []
    spans = secrets_scan._spans

    def counted(text: str) -> list[secrets_scan._Span]:
        passes.append(len(text))
        return spans(text)

    monkeypatch.setattr(secrets_scan, "_spans", counted)
    lines = [AddedLine(n, f"line {n} with a token word") for n in range(1, 10_001)]
    lines[5000] = AddedLine(5001, f"key = {AWS_ID}")
    (finding,) = [f for f in scan_lines(lines, "a.py") if f.code == "secret_aws_key"]
    assert finding.line == 5001
    assert len(passes) <= 2  # the joined text, and the finding's own line for its excerpt


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises_and_masking_is_idempotent(text: str) -> None:
    findings = scan_text(text, "r")
    masked = mask_secrets(text)
    assert mask_secrets(masked) == masked
    for f in findings:
        assert 1 <= f.line <= text.count("\n") + 1


_SECRETISH = st.lists(
    st.sampled_from([AWS_ID, GHP, SLACK, "password=", "token: ", '"', "'", " ", "\n", "x9"])
    | st.text(max_size=8),
    max_size=20,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(_SECRETISH)
def test_secretish_text_never_leaks_through_excerpts(text: str) -> None:
    for f in scan_text(text, "r"):
        for secret in (AWS_ID, GHP, SLACK):
            assert secret not in f.excerpt
