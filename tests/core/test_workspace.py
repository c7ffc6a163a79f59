from __future__ import annotations

from pathlib import Path

import pytest

from core.workspace import Workspace, WorkspaceError


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JARVIS_WORKSPACE", raising=False)
    assert Workspace.resolve().root == (tmp_path / ".jarvis").resolve()
    monkeypatch.setenv("JARVIS_WORKSPACE", str(tmp_path / "env"))
    assert Workspace.resolve().root == (tmp_path / "env").resolve()
    assert Workspace.resolve(tmp_path / "flag").root == (tmp_path / "flag").resolve()


def test_created_on_first_use(tmp_path: Path) -> None:
    ws = Workspace.resolve(tmp_path / "new" / "ws")
    assert ws.ipc_dir.is_dir()
    assert ws.db_path.parent == ws.root


@pytest.mark.parametrize("lane", ["../etc", "a/b", "", ".hidden", "x" * 65, "lane\x00", "ok lane"])
def test_lane_names_cannot_escape(tmp_path: Path, lane: str) -> None:
    with pytest.raises(WorkspaceError):
        Workspace.resolve(tmp_path).lane_dir(lane)


def test_good_lane_is_inside_the_ipc_tree(tmp_path: Path) -> None:
    ws = Workspace.resolve(tmp_path)
    assert ws.lane_dir("jarvis-worker-1").parent == ws.ipc_dir


def test_an_unusable_workspace_is_a_sentence(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(WorkspaceError, match="Cannot use"):
        Workspace.resolve(blocker / "ws")
