"""The store's one WHERE builder: only the conditions that apply, their parameters in order."""

from __future__ import annotations

from core.store.statements import Where


def test_no_condition_makes_no_clause() -> None:
    where = Where().among("state", ())
    assert str(where) == "" and where.params == []


def test_conditions_are_anded_with_their_parameters_in_order() -> None:
    where = Where().add("lane LIKE ?", "w-%").among("state", ["queued", "running"])
    where.add("seq < ?", 9)
    assert str(where) == " WHERE lane LIKE ? AND state IN (?, ?) AND seq < ?"
    assert where.params == ["w-%", "queued", "running", 9]
