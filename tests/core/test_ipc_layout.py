from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.ipc.layout import Event, IpcLayout, IpcPathError, Rejection

LANE = "jarvis-worker-1"
RUN = "task-7"


@pytest.fixture
def layout(tmp_path: Path) -> IpcLayout:
    return IpcLayout(tmp_path / "data" / "ipc")


def code_of(result: Event | Rejection | None) -> str | None:
    assert isinstance(result, Rejection), result
    return result.code


# --- naming -------------------------------------------------------------------------------------


def test_paths_follow_the_documented_layout(layout: IpcLayout) -> None:
    root = layout.root
    assert layout.lane_dir(LANE) == root / LANE
    assert layout.progress_dir(LANE, RUN) == root / LANE / "progress" / RUN
    assert layout.steer_file(LANE, RUN) == root / LANE / "steer" / f"{RUN}.json"
    assert layout.ack_file(LANE, RUN) == root / LANE / "steer" / f"{RUN}.acked.json"
    assert layout.tasks_dir(LANE) == root / LANE / "tasks"
    assert layout.messages_dir(LANE) == root / LANE / "messages"
    assert layout.errors_dir == root / "errors"


def test_a_relative_root_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert IpcLayout(Path("ipc")).root == tmp_path / "ipc"


@pytest.mark.parametrize("lane", ["", "..", ".", "a/b", "../x", "/etc", "a\x00b", "a\nb", "errors"])
def test_a_bad_lane_cannot_name_a_path(layout: IpcLayout, lane: str) -> None:
    with pytest.raises(IpcPathError) as caught:
        layout.lane_dir(lane)
    assert caught.value.code == "bad_lane"
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("run_id", ["", "..", "a/b", "../../x", "x y", "a\x00", "r.acked", "-r"])
def test_a_bad_run_id_cannot_name_a_path(layout: IpcLayout, run_id: str) -> None:
    for method in (layout.progress_dir, layout.steer_file, layout.ack_file):
        with pytest.raises(IpcPathError) as caught:
            method(LANE, run_id)
        assert caught.value.code == "bad_run_id"


def test_ensure_lane_creates_every_folder(layout: IpcLayout) -> None:
    lane_dir = layout.ensure_lane(LANE)
    for name in ("progress", "steer", "tasks", "messages"):
        assert (lane_dir / name).is_dir()
    assert layout.ensure_lane(LANE) == lane_dir  # idempotent


def test_ensure_lane_refuses_a_symlinked_lane(layout: IpcLayout, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    layout.root.mkdir(parents=True)
    (layout.root / LANE).symlink_to(elsewhere)
    with pytest.raises(IpcPathError) as caught:
        layout.ensure_lane(LANE)
    assert caught.value.code == "outside_tree"


# --- events -------------------------------------------------------------------------------------


def test_a_progress_file_is_a_progress_event(layout: IpcLayout) -> None:
    path = layout.progress_dir(LANE, RUN) / "1763782200120-12.json"
    assert layout.classify(path) == Event("progress", LANE, RUN, path)


def test_an_acknowledgement_is_an_ack_event(layout: IpcLayout) -> None:
    path = layout.ack_file(LANE, RUN)
    assert layout.classify(path) == Event("ack", LANE, RUN, path)


def test_tasks_and_messages_are_events_of_their_lane(layout: IpcLayout) -> None:
    task = layout.tasks_dir(LANE) / "t1.json"
    message = layout.messages_dir(LANE) / "m1.json"
    assert layout.classify(task) == Event("task", LANE, None, task)
    assert layout.classify(message) == Event("message", LANE, None, message)


def test_a_relative_path_is_read_from_the_current_directory(
    layout: IpcLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(layout.root.parent.parent)
    result = layout.classify(Path("data/ipc") / LANE / "tasks" / "t.json")
    assert result == Event("task", LANE, None, layout.tasks_dir(LANE) / "t.json")


def test_a_path_through_the_real_root_is_accepted(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "ipc").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(real)
    layout = IpcLayout(tmp_path / "alias" / "ipc")
    result = layout.classify(real / "ipc" / LANE / "tasks" / "t.json")
    assert isinstance(result, Event)


def test_redundant_separators_are_normalised(layout: IpcLayout) -> None:
    raw = Path(f"{layout.root}//{LANE}/./tasks//t.json")
    assert layout.classify(raw) == Event("task", LANE, None, layout.tasks_dir(LANE) / "t.json")


# --- not events ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "relative",
    [
        f"{LANE}/progress/{RUN}/.1-1.json.tmp",
        f"{LANE}/progress/{RUN}/.hidden.json",
        f"{LANE}/progress/{RUN}/notes.txt",
        f"{LANE}/tasks/.t.json.ab12.tmp",
        f"{LANE}/steer/{RUN}.json",  # the host's own steer file
        "errors/20261122T033000.000000Z-jarvis-worker-1-x.json",
        "errors/20261122T033000.000000Z-jarvis-worker-1-x.json.reason.json",
        "errors/deeper/anything.json",
        "errors/\x1b[31m.json",
        "",
    ],
)
def test_files_that_are_not_events_are_ignored(layout: IpcLayout, relative: str) -> None:
    assert layout.classify(layout.root / relative) is None


# --- rejections ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "code"),
    [
        (f"{LANE}/tasks/../../../etc/passwd.json", "outside_tree"),
        (f"{LANE}/progress/{RUN}/../{RUN}/x.json", "outside_tree"),
        (f"{LANE}/tasks/a\x00b.json", "bad_name"),
        (f"{LANE}/tasks/a\x1b[2Jb.json", "bad_name"),
        (f"{LANE}/tasks/a\nb.json", "bad_name"),
        (f"{LANE}/tasks/a\x9bb.json", "bad_name"),
        (f"{LANE}/tasks/a\udcffb.json", "bad_name"),
        ("x.json", "unexpected_path"),
        (f"{LANE}/x.json", "unexpected_path"),
        (f"{LANE}/other/x.json", "unexpected_path"),
        (f"{LANE}/tasks/deeper/x.json", "unexpected_path"),
        (f"{LANE}/messages/a/b/c/d/x.json", "unexpected_path"),
        (f"{LANE}/progress/x.json", "unexpected_path"),
        (f"{LANE}/progress/{RUN}/deeper/x.json", "unexpected_path"),
        (f"{LANE}/steer/deeper/{RUN}.acked.json", "unexpected_path"),
        (f"{LANE}/steer/not a run.json", "unexpected_path"),
        ("bad lane/tasks/x.json", "bad_lane"),
        ("-lane/tasks/x.json", "bad_lane"),
        (f"{LANE}/progress/bad run/x.json", "bad_run_id"),
        (f"{LANE}/progress/-r/x.json", "bad_run_id"),
        (f"{LANE}/steer/-r.acked.json", "bad_run_id"),
        (f"{LANE}/steer/r.acked.acked.json", "bad_run_id"),
    ],
)
def test_misplaced_or_unsafe_files_are_rejected(
    layout: IpcLayout, relative: str, code: str
) -> None:
    assert code_of(layout.classify(layout.root / relative)) == code


def test_a_path_outside_the_root_is_rejected(layout: IpcLayout, tmp_path: Path) -> None:
    assert code_of(layout.classify(tmp_path / "tasks" / "x.json")) == "outside_tree"
    assert code_of(layout.classify(Path("/etc/passwd.json"))) == "outside_tree"
    # A sibling whose name merely starts with the root's is not inside it.
    sibling = Path(str(layout.root) + "-other") / LANE / "tasks" / "x.json"
    assert code_of(layout.classify(sibling)) == "outside_tree"


def test_an_absolute_segment_cannot_escape(layout: IpcLayout) -> None:
    assert code_of(layout.classify(layout.root / LANE / "/etc/x.json")) == "outside_tree"


def test_rejections_name_a_valid_lane_and_only_a_valid_one(layout: IpcLayout) -> None:
    misplaced = layout.classify(layout.root / LANE / "other" / "x.json")
    assert isinstance(misplaced, Rejection) and misplaced.lane == LANE
    bad = layout.classify(layout.root / "bad lane" / "tasks" / "x.json")
    assert isinstance(bad, Rejection) and bad.lane is None


def test_rejection_messages_are_inert(layout: IpcLayout) -> None:
    result = layout.classify(layout.root / LANE / "tasks" / "\x1b]0;pwned\x07.json")
    assert isinstance(result, Rejection)
    assert "\x1b" not in result.message and "\x07" not in result.message


def test_a_symlinked_lane_folder_is_rejected(layout: IpcLayout, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "tasks").mkdir(parents=True)
    layout.root.mkdir(parents=True)
    (layout.root / LANE).symlink_to(outside)
    assert code_of(layout.classify(layout.root / LANE / "tasks" / "x.json")) == "outside_tree"


@pytest.mark.parametrize("linked", ["progress", f"progress/{RUN}"])
def test_a_symlinked_folder_inside_the_lane_is_rejected(
    layout: IpcLayout, tmp_path: Path, linked: str
) -> None:
    layout.ensure_lane(LANE)
    outside = tmp_path / "outside" / RUN
    outside.mkdir(parents=True)
    target = layout.lane_dir(LANE) / linked
    if target.exists():
        target.rmdir()
    target.symlink_to(outside if linked.endswith(RUN) else outside.parent)
    path = layout.progress_dir(LANE, RUN) / "1-1.json"
    result = layout.classify(path)
    assert isinstance(result, Rejection) and result.code == "outside_tree"
    assert result.lane == LANE


def test_a_symlinked_event_file_is_left_to_the_reader(layout: IpcLayout, tmp_path: Path) -> None:
    # classify judges the path; read_event refuses the link itself without following it.
    layout.ensure_lane(LANE)
    link = layout.tasks_dir(LANE) / "x.json"
    link.symlink_to(tmp_path / "secret")
    assert isinstance(layout.classify(link), Event)


def test_a_missing_folder_is_not_mistaken_for_a_link(layout: IpcLayout) -> None:
    path = layout.progress_dir(LANE, RUN) / "1-1.json"
    assert not path.parent.exists()
    assert isinstance(layout.classify(path), Event)


# --- properties ---------------------------------------------------------------------------------

_segments = st.lists(
    st.sampled_from(
        [
            LANE,
            "progress",
            "steer",
            "tasks",
            "messages",
            "errors",
            RUN,
            "..",
            ".",
            "",
            "/",
            "x.json",
        ]
    )
    | st.text(max_size=12).map(lambda s: s + ".json")
    | st.text(max_size=300),
    max_size=7,
)


@given(_segments)
def test_classify_never_raises_nor_places_an_event_outside_the_root(
    segments: list[str],
) -> None:
    layout = IpcLayout(Path("/nonexistent-ipc-root/data/ipc"))
    path = Path(str(layout.root) + "/" + "/".join(segments))
    result = layout.classify(path)
    assert result is None or isinstance(result, Event | Rejection)
    if isinstance(result, Event):
        relative = result.path.relative_to(layout.root)
        assert ".." not in relative.parts
        assert os.path.normpath(result.path) == str(result.path)
        assert result.lane == relative.parts[0]


@given(st.text(max_size=80))
def test_classify_never_raises_on_any_path_text(text: str) -> None:
    layout = IpcLayout(Path("/nonexistent-ipc-root/data/ipc"))
    result = layout.classify(Path(text))
    if isinstance(result, Event):
        assert str(result.path).startswith(str(layout.root) + os.sep)


# --- a batch's placed folders -------------------------------------------------------------------

_names_in_a_run_folder = st.lists(
    st.sampled_from(["1.json", ".tmp.json", "x.txt", "..json", ".json", "a\x00.json",
                     "a\x1b[2J.json", "a\u2028.json", "\udcff.json", "..", "sub/x.json",
                     "x.json/", "x.JSON", "steer.acked.json"])
    | st.text(max_size=12).map(lambda s: s + ".json")
    | st.text(max_size=20),
    min_size=1,
    max_size=8,
)  # fmt: skip


@given(_names_in_a_run_folder)
def test_a_placed_folder_judges_every_name_as_the_long_way_does(names: list[str]) -> None:
    layout = IpcLayout(Path("/nonexistent-ipc-root/data/ipc"))
    folder = str(layout.progress_dir(LANE, RUN))
    real: set[str] = set()
    placed: dict[str, tuple[str, str]] = {}
    # The first file places the folder; every later name is judged from the placement.
    assert isinstance(layout.classify(Path(folder, "0.json"), real, placed), Event)
    assert placed == {folder: (LANE, RUN)}
    for name in names:
        path = Path(folder + os.sep + name)
        assert layout.classify(path, real, placed) == layout.classify(path), name


def test_a_folder_swapped_for_a_link_is_seen_by_the_next_batch(
    layout: IpcLayout, tmp_path: Path
) -> None:
    folder = layout.progress_dir(LANE, RUN)
    folder.mkdir(parents=True)
    real: set[str] = set()
    placed: dict[str, tuple[str, str]] = {}
    assert isinstance(layout.classify(folder / "1.json", real, placed), Event)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder.rmdir()
    folder.symlink_to(elsewhere)
    # A batch's placement is its own: the next batch looks at the folders again.
    assert code_of(layout.classify(folder / "2.json", set(), {})) == "outside_tree"
