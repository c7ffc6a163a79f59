"""``[store]``'s retention policy: each table's days, else ``keep_days``, else nothing removed;
bad values refused with a sentence naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.host.config import ConfigError, load_config
from core.store.location import store_location
from core.store.retention import RetentionPolicy


def test_no_policy_removes_nothing(tmp_path: Path) -> None:
    policy = load_config(tmp_path).store.policy()
    assert policy == RetentionPolicy(None, None, None) and not policy.removes_anything


def test_each_table_takes_its_own_days_else_keep_days(tmp_path: Path) -> None:
    (tmp_path / "jarvis.toml").write_text(
        '[store]\nurl = "other.db"\nkeep_days = 30\nprogress_keep_days = 7\n'
        "receipts_keep_days = 2\n"
    )
    config = load_config(tmp_path)
    assert config.store.policy() == RetentionPolicy(
        progress_days=7, journal_days=30, receipts_days=2
    )
    # The store's location still reads its url from the same table.
    assert store_location(tmp_path) == tmp_path / "other.db"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("keep_days = -1", "keep_days"),
        ("keep_days = 2.5", "keep_days"),
        ('keep_days = "7"', "keep_days"),
        ("journal_keep_days = 100000", "journal_keep_days"),
        ("keep_day = 7", "keep_day"),
    ],
)
def test_a_bad_value_is_refused_with_a_sentence(tmp_path: Path, line: str, says: str) -> None:
    (tmp_path / "jarvis.toml").write_text(f"[store]\n{line}\n")
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert says in str(refused.value) and "Traceback" not in str(refused.value)
