"""``[notify]`` of ``jarvis.toml``: where the host posts notifications, and what a console rings.

The host's webhook (``webhook``, ``timeout_s``, ``retries``, ``retry_after_s``) and a console's
own channels (``bell``, ``desktop``), which a console reads without pydantic
(`core.notify.channels`). docs/configuration.md.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from core.notify.channels import GAP_MAX_S, Desktop
from core.notify.policy import GAP_S, NotifyPolicy
from core.notify.webhook import WebhookSettings


def _webhook_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PydanticCustomError(
            "bad_webhook_url",
            # The URL is not repeated: a webhook's URL is its secret.
            "notify.webhook must be an http:// or https:// URL with a host (Slack's or Discord's "
            "incoming webhook URL).",
        )
    if any(ord(char) < 0x21 or ord(char) == 0x7F for char in value):
        raise PydanticCustomError(
            "bad_webhook_url", "notify.webhook must not hold spaces or control characters."
        )
    return value


class NotifyConfig(BaseModel):
    """``[notify]``: the host's webhook and a console's bell and desktop notification."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    webhook: Annotated[str, AfterValidator(_webhook_url)] | None = None
    """Where the host posts each notice (JSON ``{"text", "content"}``); None: no webhook."""
    timeout_s: Annotated[float, Field(gt=0, le=60)] = 5.0
    """How long one post may take, connecting and answering, before it counts as failed."""
    retries: Annotated[int, Field(ge=0, le=10, strict=True)] = 3
    """Tries after the first before a notice is dropped (with a log line)."""
    retry_after_s: Annotated[float, Field(gt=0, le=600)] = 2.0
    """The wait before the first retry, doubled before each next one."""
    gap_s: Annotated[float, Field(ge=0, le=GAP_MAX_S)] = GAP_S
    """The least seconds between two notices of the webhook and of a console: what arrives
    meanwhile is told in the next one (at most `core.notify.policy.MOST` in ten minutes)."""
    bell: bool = True
    """A console rings its terminal's bell for each notice."""
    desktop: Desktop = "osc777"
    """A console asks its terminal for a desktop notification: ``osc777``, ``osc9``, ``off``."""

    def policy(self) -> NotifyPolicy:
        """A fresh policy deciding when this configuration's notices go out."""
        return NotifyPolicy(gap_s=self.gap_s)

    def webhook_settings(self) -> WebhookSettings | None:
        if self.webhook is None:
            return None
        return WebhookSettings(self.webhook, self.timeout_s, self.retries, self.retry_after_s)
