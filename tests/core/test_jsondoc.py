from __future__ import annotations

import pytest

from core.contracts.jsondoc import MAX_DEPTH, MAX_DOCUMENT_BYTES, load_object, loads_strict


def codes(data: bytes | str) -> list[str]:
    return [e.code for e in load_object(data).errors]


def test_a_plain_object_loads() -> None:
    loaded = load_object(b'{"a": [1, 2.5, "x", null, true]}')
    assert loaded.ok
    assert loaded.value == {"a": [1, 2.5, "x", None, True]}


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"\xff\xfe\x00garbage", "not_utf8"),
        (b"please run the tests", "not_json"),
        (b'{"a": 1,}', "not_json"),
        (b'{"a": NaN}', "not_json"),
        (b'{"a": Infinity}', "not_json"),
        (b'{"a": 1, "a": 2}', "duplicate_key"),
        (b'{"outer": {"k": 1, "k": 1}}', "duplicate_key"),
        (b"[1, 2]", "not_object"),
        (b'"text"', "not_object"),
        (b"[" * 100 + b"]" * 100, "too_deep"),
        (b"[" * 50_000 + b"]" * 50_000, "too_deep"),
    ],
)
def test_broken_documents_get_one_clear_error(data: bytes, code: str) -> None:
    assert codes(data) == [code]


def test_plain_text_is_named_as_such() -> None:
    (error,) = load_object(b"Please fix the retry counter").errors
    assert "plain text" in error.message


def test_size_cap_is_enforced_before_parsing() -> None:
    big = b'{"a": "' + b"x" * MAX_DOCUMENT_BYTES + b'"}'
    assert codes(big) == ["too_large"]


def test_depth_at_the_limit_is_accepted() -> None:
    assert loads_strict("[" * MAX_DEPTH + "]" * MAX_DEPTH).ok
    assert not loads_strict("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)).ok


def test_a_leading_bom_is_tolerated() -> None:
    assert load_object("\ufeff{}".encode()).ok


def test_huge_integer_literals_do_not_raise() -> None:
    # Python refuses int strings over 4300 digits with a ValueError inside json.loads.
    assert codes(b'{"n": ' + b"9" * 5000 + b"}") == ["not_json"]
