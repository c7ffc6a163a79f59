"""Masking as the engine applies it to stored worker text, and as readers apply it again."""

from __future__ import annotations

import base64
import random
import string

import pytest

from core.contracts.secrets_scan import mask_secrets, redact, scan_text

SECRETS = [
    "export GITHUB_TOKEN=ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8",
    'password = "hunter2-but-longer"',
    "AKIAIOSFODNN7EXAMPLE in the config",
]


@pytest.mark.parametrize("text", SECRETS)
def test_masking_twice_changes_nothing_more(text: str) -> None:
    # The engine masks worker text as it stores it and the console masks what it shows: a
    # masked value read back must stay as it was, not lose more of its prefix each time.
    once = mask_secrets(text)
    assert once != text
    assert mask_secrets(once) == once


# -- AI-provider keys and bearer tokens ---------------------------------------------------------

_RNG = random.Random(20261124)


def _token(alphabet: str, length: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(length))


_ALNUM = string.ascii_letters + string.digits
_URLSAFE = _ALNUM + "-_"
ANTHROPIC = "sk-ant-api03-" + _token(_URLSAFE, 93) + "AA"
ANTHROPIC_ADMIN = "sk-ant-admin01-" + _token(_URLSAFE, 80)
OPENAI_PROJECT = "sk-proj-" + _token(_URLSAFE, 156)
OPENAI_SERVICE = "sk-svcacct-" + _token(_URLSAFE, 120)
OPENAI_LEGACY = "sk-" + _token(_ALNUM, 20) + "T3BlbkFJ" + _token(_ALNUM, 20)
PROVIDER_PLAIN = "sk-" + _token(string.hexdigits.lower()[:16], 32)
JWT = ".".join(
    [
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUgRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ]
)
OPAQUE_BEARER = _token(_ALNUM, 40)


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        (f"export ANTHROPIC_KEY_VALUE {ANTHROPIC}", ANTHROPIC, "Anthropic API key"),
        (f"admin: {ANTHROPIC_ADMIN}", ANTHROPIC_ADMIN, "Anthropic API key"),
        (f"client = OpenAI({OPENAI_PROJECT!r})", OPENAI_PROJECT, "OpenAI API key"),
        (f"svc {OPENAI_SERVICE} used", OPENAI_SERVICE, "OpenAI API key"),
        (f"old key {OPENAI_LEGACY}", OPENAI_LEGACY, "OpenAI API key"),
        (f"deepseek {PROVIDER_PLAIN}", PROVIDER_PLAIN, "AI provider API key"),
        (f"Authorization: Bearer {JWT}", JWT, "JSON web token"),
        (f"token in a query: ?jwt={JWT}&x=1", JWT, "JSON web token"),
        (f"curl -H 'Authorization: Bearer {OPAQUE_BEARER}'", OPAQUE_BEARER, "bearer token"),
        (f"authorization: bearer {OPAQUE_BEARER}", OPAQUE_BEARER, "bearer token"),
    ],
)
def test_ai_provider_keys_and_bearer_tokens_are_masked(text: str, secret: str, kind: str) -> None:
    found = redact(text)
    assert secret not in found.text, found.text
    assert secret[:4] in found.text  # a prefix says which key it was
    assert kind in found.kinds, found.kinds
    assert [f.kind for f in scan_text(text, "r")], "the scanner reports it too"


# Things a worker prints all the time that look random and must be left alone.
_IMAGE = base64.b64encode(random.Random(7).randbytes(60_000)).decode()
NOT_SECRETS = [
    "HEAD is now at 3f9c0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b fix the retry counter",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "run id 123e4567-e89b-12d3-a456-426614174000 and trace 0b2f8c1e-7d4a-4f3b-9e6c-5a1d2b3c4d5e",
    f'<img src="data:image/png;base64,{_IMAGE}">',
    "pip install scikit-learn  # sk-learn, as everyone calls it",
    "task-20260222-014 on jarvis-worker-1, branch jarvis-retry-counter",
    "sha256:4bc453b53cb3d914b45f4b250294236adba2c0e09ff6f03793949e7e39fd4cc1",
    "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdB"
    "eoGlODJ6+SfaPg==",
    "Authorization: Bearer <token>",
    "Authorization: Bearer YOUR_API_TOKEN_HERE",
    "the bearer token is read from the environment",
    "eyJhbGciOiJIUzI1NiJ9 is just the header of a JWT, not a token",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_ordinary_worker_output_is_left_alone(text: str) -> None:
    found = redact(text)
    assert found.text == text
    assert found.kinds == ()


def test_redact_names_the_kinds_and_never_the_values() -> None:
    found = redact(f"{AWS} and {ANTHROPIC} and again {ANTHROPIC}")
    assert found.kinds == ("AWS access key id", "Anthropic API key")
    assert found.text == mask_secrets(f"{AWS} and {ANTHROPIC} and again {ANTHROPIC}")


AWS = "AKIA" + "IOSFODNN7EXAMPLE"
