from __future__ import annotations

import pytest

from core.authorization import dispatch_refusal

# (source, target, allowed) — the architecture's delegation rules, row by row.
MATRIX = [
    ("main", "jarvis-worker-1", True),
    ("main", "andy-developer", True),
    ("main", "some-group", True),
    ("andy-developer", "jarvis-worker-1", True),
    ("andy-developer", "jarvis-worker-17", True),
    ("andy-developer", "andy-bot", False),
    ("andy-developer", "main", False),
    ("andy-developer", "andy-developer", False),
    ("andy-bot", "jarvis-worker-1", False),
    ("andy-bot", "andy-bot", False),
    ("jarvis-worker-1", "jarvis-worker-2", False),
    ("jarvis-worker-1", "jarvis-worker-1", False),
    ("jarvis-worker-1", "main", False),
    ("team-a", "team-a", True),
    ("team-a", "team-b", False),
    ("team-a", "jarvis-worker-1", False),
]


@pytest.mark.parametrize(("source", "target", "allowed"), MATRIX)
def test_delegation_matrix(source: str, target: str, allowed: bool) -> None:
    refusal = dispatch_refusal(source, target)
    assert (refusal is None) is allowed
    if refusal:
        assert refusal[0].isupper() or refusal.startswith(source)
        assert refusal.endswith(".")
