"""Adding and removing repositories in ``jarvis.toml`` (`core.host.repo_config`), with real git:
the file keeps what it had, is checked before it is written, and is never half written."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from core.host.config import ConfigError, RepoConfig, load_config
from core.host.repo_config import RepoRefused, add_repo, remove_repo, repository_problem
from tests.gitrepo import make_repo


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def test_clones_and_bare_repositories_count_other_folders_do_not(tmp_path: Path) -> None:
    clone = make_repo(tmp_path / "clone")
    bare = make_repo(tmp_path / "site.git", bare=True)
    (clone / "sub").mkdir()
    (tmp_path / "plain").mkdir()
    (tmp_path / "file").write_text("x")
    assert repository_problem(clone) is None
    assert repository_problem(bare) is None
    problems = {
        "plain": repository_problem(tmp_path / "plain"),
        "file": repository_problem(tmp_path / "file"),
        "missing": repository_problem(tmp_path / "missing"),
        "sub": repository_problem(clone / "sub"),
        "inside_bare": repository_problem(bare / "objects"),
    }
    assert problems["plain"] == f"'{tmp_path / 'plain'}' is not a git repository."
    assert problems["file"] == f"'{tmp_path / 'file'}' is not a folder."
    assert problems["missing"] == f"'{tmp_path / 'missing'}' does not exist."
    assert "inside" in str(problems["sub"]) and str(clone) in str(problems["sub"])
    assert "inside the bare repository" in str(problems["inside_bare"])


def test_git_in_the_environment_does_not_decide_which_repository_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = make_repo(tmp_path / "clone")
    (tmp_path / "plain").mkdir()
    monkeypatch.setenv("GIT_DIR", str(clone / ".git"))
    assert repository_problem(tmp_path / "plain") is not None


def test_a_relative_path_is_the_workspaces_and_is_checked_there(ws: Path) -> None:
    make_repo(ws.parent / "clone")
    assert add_repo(ws, "acme/site", RepoConfig(path="../clone")) is False
    assert load_config(ws).repos["acme/site"].resolved_path(ws) == ws.parent / "clone"
    with pytest.raises(RepoRefused) as refused:
        add_repo(ws, "acme/other", RepoConfig(path="clone"))
    assert refused.value.code == "not_a_repository"


def test_an_invalid_file_is_not_touched(ws: Path) -> None:
    make_repo(ws / "clone")
    text = "# keep me\n[workers]\nconcurency = 2\n"
    (ws / "jarvis.toml").write_text(text)
    with pytest.raises(ConfigError, match="workers.concurency is not a field"):
        add_repo(ws, "acme/site", RepoConfig(path="clone"))
    assert (ws / "jarvis.toml").read_text() == text
    assert sorted(p.name for p in ws.iterdir()) == ["clone", "jarvis.toml"]  # no temporary left


def test_the_files_mode_is_kept_and_a_link_is_written_through(tmp_path: Path, ws: Path) -> None:
    make_repo(ws / "clone")
    real = tmp_path / "shared.toml"
    real.write_text("# shared settings\n")
    real.chmod(0o640)
    (ws / "jarvis.toml").symlink_to(real)
    add_repo(ws, "acme/site", RepoConfig(path="clone"))
    assert (ws / "jarvis.toml").is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert real.read_text().startswith("# shared settings\n")
    assert "acme/site" in load_config(ws).repos


def test_a_failed_write_leaves_the_file_as_it_was(tmp_path: Path, ws: Path) -> None:
    make_repo(ws / "clone")
    # A link into a folder that is not there: read as no file, and impossible to write.
    (ws / "jarvis.toml").symlink_to(tmp_path / "gone" / "jarvis.toml")
    with pytest.raises(ConfigError, match="cannot be written: No such file or directory; it is"):
        add_repo(ws, "acme/site", RepoConfig(path="clone"))
    assert not (tmp_path / "gone").exists() and (ws / "jarvis.toml").is_symlink()
    if os.geteuid() == 0:
        return  # root writes into a read-only folder
    (ws / "jarvis.toml").unlink()
    (ws / "jarvis.toml").write_text("# as it was\n")
    ws.chmod(0o555)
    try:
        with pytest.raises(ConfigError, match="cannot be written: Permission denied; it is"):
            add_repo(ws, "acme/site", RepoConfig(path="clone"))
    finally:
        ws.chmod(0o755)
    assert (ws / "jarvis.toml").read_text() == "# as it was\n"


def test_adds_at_the_same_time_all_land(ws: Path) -> None:
    make_repo(ws / "clone")
    names = [f"acme/repo{i}" for i in range(8)]
    errors: list[BaseException] = []

    def add(name: str) -> None:
        try:
            add_repo(ws, name, RepoConfig(path="clone"))
        except BaseException as exc:  # reported below: a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(load_config(ws).repos) == names


def test_removing_the_last_repository_removes_the_section(ws: Path) -> None:
    (ws / "jarvis.toml").write_text('# top\n[repos."acme/site"]\nurl = "file:///x"\n')
    removed = remove_repo(ws, "acme/site")
    assert removed == RepoConfig(url="file:///x")
    assert (ws / "jarvis.toml").read_text() == "# top\n"
    with pytest.raises(RepoRefused) as refused:
        remove_repo(ws, "acme/site")
    assert refused.value.code == "unknown_repo"
