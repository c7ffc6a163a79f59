"""The engine's rules for showing what it holds, for the front ends: worker text made inert,
secrets masked, usage in words. One rule each, shared with the engine's own output."""

from __future__ import annotations

from core.contracts.secrets_scan import mask_secrets
from core.run_secrets import found_kinds
from core.text import JSON_UNSAFE, escaped, inert, unsafe
from core.usage_text import usage_brief, usage_line

__all__ = [
    "JSON_UNSAFE",
    "escaped",
    "found_kinds",
    "inert",
    "mask_secrets",
    "unsafe",
    "usage_brief",
    "usage_line",
]
