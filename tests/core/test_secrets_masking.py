"""Masking as the engine applies it to stored worker text, and as readers apply it again."""

from __future__ import annotations

import pytest

from core.contracts.secrets_scan import mask_secrets

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
