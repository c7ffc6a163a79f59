"""What a model's tokens cost, for agents that report no cost of their own (Codex reports tokens
only): ``[prices."MODEL"]`` in ``jarvis.toml`` (US dollars per million tokens in and out), over
defaults for the models the agents name in their own documentation (docs/configuration.md says
where each figure comes from).

The host gives a run's worker its lane profile's price as ``JARVIS_PRICE`` (JSON: ``model``,
``in_per_mtok``, ``out_per_mtok``; absent when no price is known), and the agent runner prices
the attempt's tokens with it when the agent reported no cost, saying the cost was computed
(``cost_computed``). A cost the agent reported is never replaced.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: The variable the host sets in the worker's environment.
PRICE_ENV: Final = "JARVIS_PRICE"
#: No model's price comes near this; a larger figure is a typing slip, refused at load.
MAX_PER_MTOK: Final = 10_000.0

_PerMtok = Annotated[float, Field(ge=0, le=MAX_PER_MTOK, allow_inf_nan=False)]


class Price(BaseModel):
    """``[prices."MODEL"]``: US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    in_per_mtok: _PerMtok
    """Per million input tokens (every input token: cached ones are priced as the rest)."""
    out_per_mtok: _PerMtok
    """Per million output tokens."""

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """What ``tokens_in`` and ``tokens_out`` cost at this price, in US dollars."""
        return (tokens_in * self.in_per_mtok + tokens_out * self.out_per_mtok) / 1_000_000


def _price(in_per_mtok: float, out_per_mtok: float) -> Price:
    return Price(in_per_mtok=in_per_mtok, out_per_mtok=out_per_mtok)


#: The defaults, by the model name an agent is given; docs/configuration.md cites each source.
DEFAULT_PRICES: Final[Mapping[str, Price]] = {
    # Claude Code's model aliases resolve to these (Anthropic's pricing page).
    "claude-opus-4-6": _price(5.0, 25.0),
    "claude-opus-4-5": _price(5.0, 25.0),
    "claude-opus-4-1": _price(15.0, 75.0),
    "claude-sonnet-4-6": _price(3.0, 15.0),
    "claude-sonnet-4-5": _price(3.0, 15.0),
    "claude-haiku-4-5": _price(1.0, 5.0),
    # Codex's models (OpenAI's model pages).
    "gpt-5.1": _price(1.25, 10.0),
    "gpt-5.1-codex": _price(1.25, 10.0),
    "gpt-5-codex": _price(1.25, 10.0),
    "gpt-5": _price(1.25, 10.0),
}


def price_of(model: str | None, configured: Mapping[str, Price]) -> Price | None:
    """The price of ``model``: configured, else a default; a ``provider/model`` name (how
    OpenCode and aider name models) is looked up whole, then by its last part. None when
    there is no model or no price."""
    if not model:
        return None
    names = [model]
    if "/" in model:
        names.append(model.rsplit("/", 1)[1])
    for name in names:
        for table in (configured, DEFAULT_PRICES):
            if name in table:
                return table[name]
    return None


def price_env(model: str, price: Price) -> str:
    """The ``JARVIS_PRICE`` value for ``model`` at ``price``."""
    return json.dumps({"model": model, **price.model_dump()}, sort_keys=True)


def read_price(env: Mapping[str, str]) -> Price | None:
    """The price the host passed (``JARVIS_PRICE``), or None when there is none or it cannot be
    read (then no cost is computed: a wrong figure would be worse than none)."""
    raw = env.get(PRICE_ENV, "").strip()
    if not raw:
        return None
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    try:
        price = Price.model_validate({k: v for k, v in doc.items() if k != "model"})
    except ValidationError:
        return None
    return price if math.isfinite(price.cost(1, 1)) else None
