"""The clone of a configured URL is the last door a repository URL passes: it obeys the same
rules as ``jarvis.toml``, and git itself is held to plain transports, so a remote helper never
runs even where the host's own git configuration would allow it. Real git, real processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.repos.git import git
from core.repos.worktrees import TRANSPORTS, WorktreeRefused, repository
from tests.gitrepo import make_repo


@pytest.mark.parametrize(
    "url",
    ["ext::sh -c touch% {marker}", "ssh://-oProxyCommand=touch% {marker}/x/y",
     "git@-oProxyCommand=touch:{marker}"],
)  # fmt: skip
def test_a_url_the_rules_refuse_is_never_cloned(tmp_path: Path, url: str) -> None:
    marker = tmp_path / "pwned"
    clone_to = tmp_path / "repos" / "acme" / "site"
    with pytest.raises(WorktreeRefused) as refused:
        repository("acme/site", None, url.format(marker=marker), clone_to)
    assert refused.value.code == "repo_unreachable"
    assert "is not a usable repository URL" in str(refused.value)
    assert not marker.exists() and not clone_to.parent.exists()


def test_git_is_held_to_plain_transports_whatever_its_configuration(tmp_path: Path) -> None:
    # What the host's git configuration could say, given on the command line: ext allowed.
    allow_ext = ["-c", "protocol.ext.allow=always"]
    marker = tmp_path / "pwned"
    helper = f"ext::sh -c touch% {marker}"
    held = git([*allow_ext, "clone", "--bare", "--", helper, str(tmp_path / "held")],
               cwd=tmp_path, check=False, env=TRANSPORTS)  # fmt: skip
    assert held.code != 0 and "transport 'ext' not allowed" in held.err
    assert not marker.exists()
    # The same call without the restriction runs the helper's command: what it guards against.
    loose = git([*allow_ext, "clone", "--bare", "--", helper, str(tmp_path / "loose")],
                cwd=tmp_path, check=False)  # fmt: skip
    assert loose.code != 0 and marker.exists()


def test_a_file_url_still_clones(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin.git", bare=True)
    clone_to = tmp_path / "repos" / "acme" / "site"
    assert repository("acme/site", None, origin.as_uri(), clone_to) == clone_to
    assert git(["rev-parse", "--is-bare-repository"], cwd=clone_to).out.strip() == "true"
