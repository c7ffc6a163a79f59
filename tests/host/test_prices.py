"""Prices: ``[prices."MODEL"]`` over the defaults, passed to a lane's worker as JARVIS_PRICE, read
back by the runner, and used to compute a cost only where the agent reported none."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from core.agents.events import Usage
from core.agents.spending import usage_doc
from core.host.config import ConfigError, HostConfig, load_config
from core.prices import DEFAULT_PRICES, Price, price_of, read_price

PROFILE = """\
[workers]
default = "codex"

[workers.codex]
agent = "codex"
model = "{model}"
"""


def env_of(text: str) -> dict[str, str]:
    return HostConfig.model_validate(tomllib.loads(text)).worker_env("jarvis-worker-1")


def test_a_configured_price_reaches_the_worker_as_json() -> None:
    text = PROFILE.format(model="local-model")
    text += '[prices."local-model"]\nin_per_mtok = 0.5\nout_per_mtok = 2\n'
    price = json.loads(env_of(text)["JARVIS_PRICE"])
    assert price == {"model": "local-model", "in_per_mtok": 0.5, "out_per_mtok": 2.0}
    assert read_price({"JARVIS_PRICE": env_of(text)["JARVIS_PRICE"]}) == Price(
        in_per_mtok=0.5, out_per_mtok=2.0
    )


def test_a_model_the_agents_name_has_a_default_and_a_configured_price_wins() -> None:
    assert json.loads(env_of(PROFILE.format(model="gpt-5.1"))["JARVIS_PRICE"])["out_per_mtok"] == 10
    text = (
        PROFILE.format(model="gpt-5.1") + '[prices."gpt-5.1"]\nin_per_mtok = 1\nout_per_mtok = 1\n'
    )
    assert json.loads(env_of(text)["JARVIS_PRICE"])["out_per_mtok"] == 1


def test_a_provider_slash_model_name_is_priced_by_its_model() -> None:
    # OpenCode and aider name models provider/model.
    assert price_of("anthropic/claude-sonnet-4-5", {}) == DEFAULT_PRICES["claude-sonnet-4-5"]
    mine = {"openrouter/x/y": Price(in_per_mtok=1, out_per_mtok=1)}
    assert price_of("openrouter/x/y", mine) == mine["openrouter/x/y"]


def test_no_model_or_an_unknown_one_passes_no_price() -> None:
    text = '[workers]\ndefault = "codex"\n[workers.codex]\nagent = "codex"\n'
    assert "JARVIS_PRICE" not in env_of(text)
    assert "JARVIS_PRICE" not in env_of(PROFILE.format(model="nobody-knows"))


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("in_per_mtok = -1\nout_per_mtok = 1\n", "prices.m.in_per_mtok"),
        ("in_per_mtok = 'cheap'\nout_per_mtok = 1\n", "prices.m.in_per_mtok"),
        ("in_per_mtok = 1\nout_per_mtok = 1e9\n", "prices.m.out_per_mtok"),
        ("in_per_mtok = 1\n", "prices.m.out_per_mtok"),
        ("in_per_mtok = 1\nout_per_mtok = 1\ncached = 0.1\n", "prices.m.cached"),
    ],
)
def test_a_bad_price_is_refused_with_a_sentence(tmp_path: Path, table: str, says: str) -> None:
    (tmp_path / "jarvis.toml").write_text(f'[prices."m"]\n{table}')
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert says in str(refused.value) and "Traceback" not in str(refused.value)


@pytest.mark.parametrize(
    "raw", ["", "not json", "[]", '{"in_per_mtok": -1, "out_per_mtok": 1}', '{"model": "m"}']
)
def test_a_price_that_cannot_be_read_computes_nothing(raw: str) -> None:
    assert read_price({"JARVIS_PRICE": raw}) is None


def test_a_cost_is_computed_only_when_the_agent_reported_none() -> None:
    price = Price(in_per_mtok=1.25, out_per_mtok=10)
    computed = usage_doc(Usage(6000, 360, None), price)
    assert computed == {
        "tokens_in": 6000, "tokens_out": 360, "cost_usd": pytest.approx(0.0111),
        "cost_computed": True,
    }  # fmt: skip
    # The agent's own cost is never replaced, and no price leaves no cost.
    assert usage_doc(Usage(6000, 360, 0.5), price) == {
        "tokens_in": 6000, "tokens_out": 360, "cost_usd": 0.5
    }  # fmt: skip
    assert usage_doc(Usage(6000, 360, None), None) == {
        "tokens_in": 6000, "tokens_out": 360, "cost_usd": 0.0
    }  # fmt: skip
    assert usage_doc(Usage(), price) is None
