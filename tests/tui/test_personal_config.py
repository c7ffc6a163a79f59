"""The operator's own config.toml: a theme chosen in the palette is written back (the rest of the
file kept) and used at the next start; a keymap entry moves an action to another key; a bad file
leaves the console on its defaults and says why in one sentence; `jarvis config check` prints
the same; every binding of the console has an id for a keymap to name."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from jarvis_tui.keymap_ids import binding_ids, console_bindings
from jarvis_tui.modals.fleet_screen import FleetScreen
from jarvis_tui.personal import config_path, load_personal
from tests.jarvis_cli import jarvis
from tests.tui.helpers import make_app, settle, wait_for, wait_for_palette_hit

KEPT = '# my console\n[keymap]\n"view.fleet" = "f2"   # F is taken by my terminal\n'


@pytest.fixture
def personal_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = config_path()
    assert path == tmp_path / "config" / "jarvis" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


async def test_a_theme_chosen_in_the_palette_is_remembered_for_the_next_start(
    store_db: Path, personal_file: Path
) -> None:
    personal_file.write_text(KEPT)
    app = make_app(store_db, personal=load_personal())
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.theme == "jarvis-dark"
        await pilot.press("ctrl+p", *"theme jarvis-light")
        await wait_for_palette_hit(pilot, "jarvis-light")
        await pilot.press("enter")
        await wait_for(pilot, lambda: 'theme = "jarvis-light"' in personal_file.read_text())
    text = personal_file.read_text()
    # The key goes where a top-level key must (before the first table); every line is kept.
    assert text == '# my console\ntheme = "jarvis-light"\n\n' + KEPT.split("\n", 1)[1]
    assert not list(personal_file.parent.glob(".*.tmp"))

    again = make_app(store_db, personal=load_personal())
    async with again.run_test() as pilot:
        await settle(pilot)
        assert again.theme == "jarvis-light"
    # A theme given on the command line wins over the remembered one.
    given = make_app(store_db, personal=load_personal(), theme="jarvis-high-contrast")
    assert given.theme == "jarvis-high-contrast"


async def test_a_keymap_entry_moves_an_action_to_another_key(
    store_db: Path, personal_file: Path
) -> None:
    personal_file.write_text(KEPT)
    app = make_app(store_db, personal=load_personal())
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("F")
        await settle(pilot)
        assert app.screen is app.main, "the key the keymap moved away still acts"
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen))
    assert not [note for note in app.notes if note[0] == "Personal config"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('theme = "nord', "is not valid TOML"),
        ("theme = 3\n[notify]\nbel = true\n", "theme must be a theme's name, not 3; "
         "notify.bel is not a setting"),
        ('[keymap]\n"view.fleet" = "f2 ;rm"\n', 'keymap: view.fleet = \'f2 ;rm\' is not a list'),
        ('[notify]\ndesktop = "loud"\n', "notify.desktop must be 'off', 'osc777' or 'osc9'"),
        ("[notify]\nmute_minutes = 0\n", "notify.mute_minutes must be a whole number"),
        ('colour = "red"\n', "colour is not a setting"),
    ],
)  # fmt: skip
async def test_a_bad_file_leaves_the_defaults_and_says_why_in_one_sentence(
    store_db: Path, personal_file: Path, text: str, said: str
) -> None:
    personal_file.write_text(text)
    app = make_app(store_db, personal=load_personal())
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.theme == "jarvis-dark"
        (note,) = [message for title, message, _ in app.notes if title == "Personal config"]
    assert said in note and note.endswith("the console starts with its defaults.")
    assert "\n" not in note and "Traceback" not in note
    done = jarvis("config", "check")
    assert done.code == 1 and said in " ".join(done.stdout.split()), done.stdout


async def test_unknown_names_are_said_and_the_rest_is_used(
    store_db: Path, personal_file: Path
) -> None:
    personal_file.write_text('theme = "no-such-theme"\n[keymap]\n"view.fleet" = "f2"\n'
                             '"run.no_such" = "f3"\n')  # fmt: skip
    app = make_app(store_db, personal=load_personal())
    async with app.run_test() as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: any(t == "Personal config" for t, _, _ in app.notes))
        assert app.theme == "jarvis-dark"
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen))
    (note,) = [message for title, message, _ in app.notes if title == "Personal config"]
    assert "theme 'no-such-theme' is not one of the console's themes" in note
    assert "keymap names run.no_such, which no binding has" in note


def test_config_check_says_a_good_file_and_a_missing_one_are_fine(personal_file: Path) -> None:
    done = jarvis("config", "check", "--json")
    assert done.code == 0 and done.json()["found"] is False
    personal_file.write_text('theme = "nord"\n[notify]\nbell = false\ndesktop = "osc9"\n')
    answer = jarvis("config", "check", "--json").json()
    assert answer["ok"] and answer["settings"]["notify"] == {
        "bell": False, "desktop": "osc9", "mute_minutes": 60,
    }  # fmt: skip


def test_every_binding_of_the_console_has_an_id_unique_in_its_class() -> None:
    missing = [f"{cls.__qualname__}: {b.key}" for cls, b in console_bindings() if not b.id]
    assert not missing
    per_class = Counter((cls, b.id) for cls, b in console_bindings())
    assert [key for key, n in per_class.items() if n > 1] == []


def test_config_keys_lists_every_binding_id_with_the_keys_the_keymap_gives(
    personal_file: Path,
) -> None:
    personal_file.write_text('[keymap]\n"view.fleet" = "f2"\n')
    listed = {row["id"]: row for row in jarvis("config", "keys", "--json").json()["bindings"]}
    assert set(listed) == binding_ids()
    assert (listed["view.fleet"]["keys"], listed["view.fleet"]["default_keys"]) == ("f2", "F")
    assert listed["run.retry"]["keys"] == listed["run.retry"]["default_keys"] == "r"
    text = jarvis("config", "keys")
    assert text.code == 0
    (line,) = [line for line in text.stdout.splitlines() if line.startswith("view.fleet ")]
    assert " f2 " in line and line.endswith("(was F)")
