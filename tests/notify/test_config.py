"""``[notify]`` of ``jarvis.toml``: the host's webhook and a console's channels, bad values
refused with a sentence naming the key (and never repeating a webhook's URL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.host.config import ConfigError, load_config
from core.notify.webhook import WebhookSettings, shown_url
from core.service.notify import ConsoleChannels, console_channels

HOOK = "https://hooks.example.com/services/T000/B000/s3cr3tpath"


def test_no_section_posts_nothing_and_the_console_rings_and_notifies(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.notify.webhook_settings() is None
    assert console_channels(tmp_path) == ConsoleChannels(bell=True, desktop="osc777", gap_s=30)


def test_every_key_is_read(tmp_path: Path) -> None:
    (tmp_path / "jarvis.toml").write_text(
        f'[notify]\nwebhook = "{HOOK}"\ntimeout_s = 2.5\nretries = 5\nretry_after_s = 0.5\n'
        'gap_s = 10\nbell = false\ndesktop = "osc9"\n'
    )
    config = load_config(tmp_path)
    assert config.notify.webhook_settings() == WebhookSettings(HOOK, 2.5, 5, 0.5)
    assert config.notify.policy().gap_s == 10
    assert console_channels(tmp_path) == ConsoleChannels(bell=False, desktop="osc9", gap_s=10)
    assert not ConsoleChannels(bell=False, desktop="off").any


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('webhook = "ftp://hooks.example.com/x"', "webhook must be an http:// or https:// URL"),
        ('webhook = "https:///no-host"', "webhook must be an http:// or https:// URL"),
        ('webhook = "https://hooks.example.com/a b"', "webhook must not hold spaces"),
        ("timeout_s = 0", "timeout_s"),
        ("retries = 1.5", "retries"),
        ("retries = 11", "retries"),
        ("retry_after_s = -1", "retry_after_s"),
        ('desktop = "osc99"', "desktop"),
        ("bell = 3", "bell"),
        ('hook = "x"', "hook"),
    ],
)
def test_a_bad_value_is_refused_with_a_sentence(tmp_path: Path, line: str, says: str) -> None:
    (tmp_path / "jarvis.toml").write_text(f"[notify]\n{line}\n")
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert says in str(refused.value) and "Traceback" not in str(refused.value)
    # The console goes on with its defaults; the host refuses the file and says why.
    assert console_channels(tmp_path) == ConsoleChannels()


def test_a_webhook_url_is_neither_repeated_in_an_error_nor_logged_whole(tmp_path: Path) -> None:
    (tmp_path / "jarvis.toml").write_text('[notify]\nwebhook = "gopher://x/s3cr3tpath"\n')
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert "s3cr3tpath" not in str(refused.value)
    assert shown_url(HOOK) == "https://hooks.example.com/…"
    assert shown_url("http://127.0.0.1:8080/hook/abc") == "http://127.0.0.1:8080/…"


@pytest.mark.parametrize(
    "text",
    ["[notify\n", '[notify]\nbell = "yes"\ndesktop = 9\ngap_s = -1\n', "notify = 3\n", "\xff"],
)
def test_a_console_takes_the_defaults_for_what_the_host_would_refuse(
    tmp_path: Path, text: str
) -> None:
    (tmp_path / "jarvis.toml").write_text(text, "latin-1")
    assert console_channels(tmp_path) == ConsoleChannels()
