"""`jarvis repo add|list|remove` as a script would use them, on real git repositories (run in
process, see tests/jarvis_cli.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.host.config import load_config
from tests.cli.conftest import jarvis
from tests.gitrepo import make_repo

CONFIG = """\
# The fleet's settings. Keep this comment.
[workers]
concurrency = 2  # two at a time

[timeouts]
no_output_s = 60
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "jarvis.toml").write_text(CONFIG)
    return root


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "clone")


def test_add_a_path_keeps_the_files_comments_and_the_file_loads(ws: Path, clone: Path) -> None:
    result = jarvis("repo", "add", "acme/site", clone, "--workspace", ws, "--json")
    assert result.code == 0, result.stderr
    assert result.json() == {
        "ok": True,
        "repo": {"name": "acme/site", "path": str(clone), "url": None, "base_ref": "main",
                 "remote": None, "merge": "auto-merge"},
        "replaced": False, "config_path": str(ws / "jarvis.toml"), "refusal": None,
        "restart_needed": False, "host_pid": None,
    }  # fmt: skip
    text = (ws / "jarvis.toml").read_text()
    assert text.startswith(CONFIG)  # every comment, key and blank line as it was
    assert text.endswith(f'\n[repos."acme/site"]\npath = "{clone}"\nbase_ref = "main"\n')
    config = load_config(ws)
    assert config.workers.concurrency == 2 and config.timeouts.no_output_s == 60
    assert config.repos["acme/site"].resolved_path(ws) == clone


def test_add_in_readable_form_and_a_path_relative_to_where_one_stands(
    tmp_path: Path, ws: Path, clone: Path
) -> None:
    result = jarvis("repo", "add", "acme/site", "clone", "--workspace", ws, cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert result.stdout == (
        f"Added acme/site to {ws / 'jarvis.toml'}: path {clone}, base ref main.\n"
    )
    # Stored absolute: the host reads it from the workspace, not from where it was typed.
    assert load_config(ws).repos["acme/site"].path == str(clone)


def test_add_a_url_and_a_bare_repository(tmp_path: Path, ws: Path) -> None:
    bare = make_repo(tmp_path / "api.git", bare=True)
    url = bare.as_uri()
    result = jarvis("repo", "add", "acme/api", url, "--base-ref", "release/2", "--remote",
                    "origin", "--workspace", ws, "--json")  # fmt: skip
    assert result.code == 0, result.stderr
    assert result.json()["repo"] == {"name": "acme/api", "path": None, "url": url,
                                     "base_ref": "release/2", "remote": "origin",
                                     "merge": "auto-merge"}  # fmt: skip
    ssh = jarvis("repo", "add", "acme/ssh", "git@example.com:acme/ssh.git", "--workspace", ws)
    assert ssh.code == 0, ssh.stderr
    local_bare = jarvis("repo", "add", "acme/bare", bare, "--workspace", ws, "--json")
    assert local_bare.code == 0 and local_bare.json()["repo"]["path"] == str(bare)
    repos = load_config(ws).repos
    assert repos["acme/api"].url == url and repos["acme/ssh"].url == "git@example.com:acme/ssh.git"


def test_add_makes_the_file_when_there_is_none(tmp_path: Path, clone: Path) -> None:
    ws = tmp_path / "fresh"
    ws.mkdir()
    assert jarvis("repo", "add", "acme/site", clone, "--workspace", ws).code == 0
    assert (ws / "jarvis.toml").read_text() == (
        f'[repos."acme/site"]\npath = "{clone}"\nbase_ref = "main"\n'
    )


def test_a_name_already_there_is_refused_unless_replaced(ws: Path, clone: Path) -> None:
    assert jarvis("repo", "add", "acme/site", clone, "--workspace", ws).code == 0
    with (ws / "jarvis.toml").open("a") as handle:
        handle.write("# about acme/site\n")
    before = (ws / "jarvis.toml").read_text()
    again = jarvis("repo", "add", "acme/site", clone, "--workspace", ws, "--json")
    assert again.code == 1
    assert again.json()["refusal"] == {
        "code": "repo_exists",
        "message": f"acme/site is in {ws / 'jarvis.toml'} already; --replace changes it.",
    }
    readable = jarvis("repo", "add", "acme/site", clone, "--workspace", ws)
    assert readable.code == 1 and readable.stdout == ""
    assert readable.stderr == f"jarvis: {again.json()['refusal']['message']}\n"
    assert (ws / "jarvis.toml").read_text() == before

    replaced = jarvis("repo", "add", "acme/site", "file:///srv/git/site.git", "--base-ref",
                      "dev", "--replace", "--workspace", ws, "--json")  # fmt: skip
    assert replaced.code == 0 and replaced.json()["replaced"] is True
    back = jarvis("repo", "add", "acme/site", clone, "--replace", "--workspace", ws)
    assert (
        back.stdout == f"Replaced acme/site in {ws / 'jarvis.toml'}: path {clone}, base ref main.\n"
    )
    replaced = jarvis("repo", "add", "acme/site", "file:///srv/git/site.git", "--base-ref",
                      "dev", "--replace", "--workspace", ws, "--json")  # fmt: skip
    text = (ws / "jarvis.toml").read_text()
    assert text.startswith(CONFIG) and "# about acme/site" in text and "path =" not in text
    site = load_config(ws).repos["acme/site"]
    assert (site.path, site.url, site.base_ref) == (None, "file:///srv/git/site.git", "dev")


def test_a_folder_that_is_no_repository_is_refused(tmp_path: Path, ws: Path, clone: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    cases = {
        plain: f"'{plain}' is not a git repository.",
        tmp_path / "missing": f"'{tmp_path / 'missing'}' does not exist.",
        clone / "src": f"'{clone / 'src'}' is a folder inside '{clone}', not the top of a "
        "repository.",
    }
    for path, message in cases.items():
        result = jarvis("repo", "add", "acme/site", path, "--workspace", ws, "--json")
        assert result.code == 1, result.stdout
        assert result.json()["refusal"] == {"code": "not_a_repository", "message": message}
        readable = jarvis("repo", "add", "acme/site", path, "--workspace", ws)
        assert (readable.code, readable.stderr) == (1, f"jarvis: {message}\n")
    assert (ws / "jarvis.toml").read_text() == CONFIG


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (["repo", "add", "acme", "."], "bad_repo_name", "'acme' is not a repository name"),
        (["repo", "add", "acme/..", "."], "bad_repo_name", "neither part '.' or '..'"),
        (["repo", "remove", "a/b/c"], "bad_repo_name", "write it as owner/name"),
        (["repo", "add", "acme/site", ".", "--base-ref=-f"], "bad_ref",
         "--base-ref: '-f' is not a usable git ref name: it starts with '-'."),
        (["repo", "add", "acme/site", ".", "--base-ref", "a..b"], "bad_ref", "it holds '..'"),
        (["repo", "add", "acme/site", ".", "--remote", "x y"], "bad_ref", "--remote: 'x y'"),
        (["repo", "add", "acme/site"], "usage", "PATH|URL"),
        (["repo", "frobnicate"], "usage", "invalid choice"),
    ],
)  # fmt: skip
def test_malformed_arguments_are_usage_errors(
    ws: Path, args: list[str], code: str, fragment: str
) -> None:
    result = jarvis(*args, "--workspace", ws, "--json")
    assert result.code == 2
    assert result.json()["error"]["code"] == code and fragment in result.json()["error"]["message"]
    assert (ws / "jarvis.toml").read_text() == CONFIG


def test_no_workspace_is_created_and_a_broken_file_is_named(tmp_path: Path, clone: Path) -> None:
    missing = tmp_path / "nowhere"
    for args in (["add", "acme/site", clone], ["list"], ["remove", "acme/site"]):
        result = jarvis("repo", *args, "--workspace", missing, "--json")
        assert result.code == 2 and result.json()["error"]["code"] == "no_workspace"
    assert not missing.exists()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "jarvis.toml").write_text("[workers\n")
    for args in (["add", "acme/site", clone], ["list"], ["remove", "acme/site"]):
        result = jarvis("repo", *args, "--workspace", broken, "--json")
        assert result.code == 2 and result.json()["error"]["code"] == "config_unusable"
        assert "is not valid TOML" in result.json()["error"]["message"]
    assert (broken / "jarvis.toml").read_text() == "[workers\n"


def test_list_shows_each_source_and_whether_it_is_here(tmp_path: Path, ws: Path) -> None:
    empty = jarvis("repo", "list", "--workspace", ws)
    assert empty.code == 0 and "No repositories in" in empty.stdout
    assert jarvis("repo", "list", "--workspace", ws, "--json").json()["repos"] == []

    site = make_repo(tmp_path / "site")
    origin = make_repo(tmp_path / "api.git", bare=True)
    assert jarvis("repo", "add", "acme/site", site, "--workspace", ws).code == 0
    assert jarvis("repo", "add", "acme/api", origin.as_uri(), "--workspace", ws).code == 0
    with (ws / "jarvis.toml").open("a") as handle:  # one added by hand, since moved away
        handle.write('\n[repos."acme/gone"]\npath = "../gone"\nbase_ref = "v1"\n')

    listed = jarvis("repo", "list", "--workspace", ws, "--json")
    assert listed.code == 0
    assert listed.json() == {
        "repos": [
            {"name": "acme/api", "path": None, "url": origin.as_uri(), "base_ref": "main",
             "remote": None, "merge": "auto-merge", "reachable": False},
            {"name": "acme/gone", "path": "../gone", "url": None, "base_ref": "v1",
             "remote": None, "merge": "auto-merge", "reachable": False},
            {"name": "acme/site", "path": str(site), "url": None, "base_ref": "main",
             "remote": None, "merge": "auto-merge", "reachable": True},
        ],
        "config_path": str(ws / "jarvis.toml"),
    }  # fmt: skip
    readable = jarvis("repo", "list", "--workspace", ws).stdout.splitlines()
    assert readable == [
        f"3 repositories in {ws / 'jarvis.toml'}",
        "  name       base ref  reachable       source",
        f"  acme/api   main      not cloned yet  url {origin.as_uri()}",
        "  acme/gone  v1        missing         ../gone",
        f"  acme/site  main      yes             {site}",
    ]

    # Once the URL's repository is cloned under <workspace>/repos/, it is here.
    clone_to = ws / "repos" / "acme" / "api"
    subprocess.run(
        ["git", "clone", "-q", "--bare", origin.as_uri(), str(clone_to)],
        check=True,
        capture_output=True,
    )
    rows = jarvis("repo", "list", "--workspace", ws, "--json").json()["repos"]
    assert [row["reachable"] for row in rows] == [True, False, True]
    readable = jarvis("repo", "list", "--workspace", ws).stdout.splitlines()
    assert readable[2] == f"  acme/api   main      cloned     url {origin.as_uri()}"


def test_remove_takes_the_entry_out_and_keeps_the_rest(ws: Path, clone: Path) -> None:
    assert jarvis("repo", "add", "acme/site", clone, "--workspace", ws).code == 0
    assert jarvis("repo", "add", "acme/api", "file:///srv/api.git", "--workspace", ws).code == 0
    removed = jarvis("repo", "remove", "acme/site", "--workspace", ws, "--json")
    assert removed.code == 0
    assert removed.json() == {
        "ok": True,
        "repo": {"name": "acme/site", "path": str(clone), "url": None, "base_ref": "main",
                 "remote": None, "merge": "auto-merge"},
        "config_path": str(ws / "jarvis.toml"), "refusal": None,
        "restart_needed": False, "host_pid": None,
    }  # fmt: skip
    assert list(load_config(ws).repos) == ["acme/api"]
    readable = jarvis("repo", "remove", "acme/api", "--workspace", ws)
    assert readable.code == 0
    assert readable.stdout == (
        f"Removed acme/api from {ws / 'jarvis.toml'} (it was url file:///srv/api.git, "
        "base ref main).\n"
    )
    assert (ws / "jarvis.toml").read_text() == CONFIG  # back to what it was, comments and all
    gone = jarvis("repo", "remove", "acme/api", "--workspace", ws, "--json")
    assert gone.code == 1 and gone.json()["refusal"]["code"] == "unknown_repo"
    gone_readable = jarvis("repo", "remove", "acme/api", "--workspace", ws)
    assert gone_readable.stderr == (
        f"jarvis: acme/api is not a repository in {ws / 'jarvis.toml'}.\n"
    )


def test_add_with_recommend_only_writes_the_merge_mode(ws: Path, clone: Path) -> None:
    result = jarvis("repo", "add", "acme/site", clone, "--merge", "recommend-only",
                    "--workspace", ws)  # fmt: skip
    assert result.code == 0, result.stderr
    assert "recommend-only" in result.stdout
    assert (ws / "jarvis.toml").read_text().endswith('merge = "recommend-only"\n')
    assert load_config(ws).repos["acme/site"].merge == "recommend-only"


# Names and sources the dispatch refuses, or git would read as options: refused at the door
# with one sentence, exit 2 (a malformed argument), and the file left as it was.
@pytest.mark.parametrize(
    ("words", "code", "fragment"),
    [
        (["add", "--", "-x/y", "."], "bad_repo_name", "'-x/y' is not a repository name"),
        (["add", "--", "acme/-x", "."], "bad_repo_name", "not starting with '-'"),
        (["add", "--", "--upload-pack=x/y", "."], "bad_repo_name", "is not a repository name"),
        (["remove", "--", "-x/y"], "bad_repo_name", "'-x/y' is not a repository name"),
        (["add", "acme/site", "ssh://-oProxyCommand=touch /tmp/pwned/x"], "bad_repo_url",
         "its host starts with '-', which git would pass on as an option"),
        (["add", "acme/site", "ssh://-oProxyCommand=x@example.com/a/b"], "bad_repo_url",
         "its user starts with '-'"),
        (["add", "acme/site", "ssh://%2DoProxyCommand=x/a/b"], "bad_repo_url",
         "its host starts with '-'"),
        (["add", "acme/site", "git@-oProxyCommand=x:a/b"], "bad_repo_url",
         "its host starts with '-'"),
        (["add", "acme/site", "git@example.com:--upload-pack=x"], "bad_repo_url",
         "its path starts with '-'"),
        (["add", "acme/site", "ext::sh -c touch% /tmp/pwned"], "bad_repo_url",
         "it names a git remote helper"),
        (["add", "acme/site", "fd::3"], "bad_repo_url", "it names a git remote helper"),
        (["add", "acme/site", "foo://example.com/a/b"], "bad_repo_url",
         "git would hand the scheme foo:// to a helper program"),
        (["add", "acme/site", "https://example.com/a\x1b]0;t\x07"], "bad_repo_url",
         "holds a control character"),
        (["add", "--", "acme/site", "-x"], "bad_repo_path", "'-x' is not a usable repository path"),
        (["add", "acme/site", "/srv/\x1b[2Jx"], "bad_repo_path", "holds a control character"),
    ],
)  # fmt: skip
def test_names_and_sources_git_would_misread_are_refused(
    ws: Path, words: list[str], code: str, fragment: str
) -> None:
    result = jarvis("repo", words[0], "--workspace", ws, "--json", *words[1:])
    assert result.code == 2, result.stdout + result.stderr
    error = result.json()["error"]
    assert error["code"] == code and fragment in error["message"], error
    readable = jarvis("repo", words[0], "--workspace", ws, *words[1:])
    assert readable.code == 2 and readable.stdout == ""
    assert fragment in readable.stderr and "Traceback" not in readable.stderr
    assert "\x1b" not in readable.stderr and "\x07" not in readable.stderr
    assert (ws / "jarvis.toml").read_text() == CONFIG


def test_a_change_while_a_host_runs_says_the_host_must_restart(ws: Path, clone: Path) -> None:
    # The host reads jarvis.toml when it starts: a repository added while it ran had no
    # effect until it restarted, and nothing said so.
    from tests.host.hostkit import running_host

    quiet = jarvis("repo", "add", "acme/quiet", clone, "--workspace", ws, "--json")
    assert quiet.json()["restart_needed"] is False and quiet.json()["host_pid"] is None
    with running_host(ws) as host:
        added = jarvis("repo", "add", "acme/site", clone, "--workspace", ws, "--json")
        assert added.code == 0 and added.json()["restart_needed"] is True
        assert added.json()["host_pid"] == host.pid
        readable = jarvis("repo", "remove", "acme/site", "--workspace", ws)
        assert readable.code == 0
        assert f"The host running on this workspace (pid {host.pid}) reads jarvis.toml" in (
            readable.stdout.replace("\n", " ")
        )
        assert "jarvis host --stop" in readable.stdout
