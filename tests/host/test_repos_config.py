"""``[repos."owner/name"]`` and ``[git]`` in ``jarvis.toml``: what loads, and the one sentence per
problem for what does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from core.contracts.names import ref_problem
from core.host.config import (
    ConfigError,
    HostConfig,
    RepoConfig,
    clone_dir,
    load_config,
    looks_like_url,
    repo_name_problem,
)
from core.host.worker_profiles import LaneConfig, WorkerProfile
from core.prices import Price
from tests.conftest import ROOT

GOOD = """\
[repos."acme/site"]
path = "../clones/site"
base_ref = "release/1.2"

[repos."acme/api.v2"]
url = "file:///srv/git/api.git"
remote = "origin"

[repos."Some_Org/x-y"]
url = "git@example.com:some/x-y.git"

[git]
worktree_grace_s = 0
unverified_may_review = false
"""


def problems(tmp_path: Path, text: str) -> str:
    (tmp_path / "jarvis.toml").write_text(text, "utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    return str(raised.value)


def test_repositories_and_the_git_section_load(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "jarvis.toml").write_text(GOOD)
    config = load_config(ws)
    assert set(config.repos) == {"acme/site", "acme/api.v2", "Some_Org/x-y"}
    site, api = config.repos["acme/site"], config.repos["acme/api.v2"]
    assert (site.path, site.url, site.base_ref, site.remote) == (
        "../clones/site", None, "release/1.2", None
    )  # fmt: skip
    assert (api.url, api.base_ref, api.remote) == ("file:///srv/git/api.git", "main", "origin")
    assert config.git.worktree_grace_s == 0 and config.git.unverified_may_review is False
    # A relative path is the workspace's; a URL's repository lives under <workspace>/repos/.
    assert site.resolved_path(ws) == tmp_path / "clones" / "site"
    assert site.source_dir(ws, "acme/site") == tmp_path / "clones" / "site"
    assert api.resolved_path(ws) is None
    assert api.source_dir(ws, "acme/api.v2") == ws / "repos" / "acme" / "api.v2"
    assert clone_dir(ws, "acme/api.v2") == ws / "repos" / "acme" / "api.v2"
    assert RepoConfig(path="/abs").resolved_path(ws) == Path("/abs")
    assert api.to_json("acme/api.v2") == {
        "name": "acme/api.v2", "path": None, "url": "file:///srv/git/api.git",
        "base_ref": "main", "remote": "origin", "merge": "auto-merge",
    }  # fmt: skip


def test_an_empty_file_has_no_repositories_and_the_git_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.repos == {}
    assert config.git.worktree_grace_s == 300 and config.git.unverified_may_review is True


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ('base_ref = "dev"', "repos.acme/site must set path (a repository on this host) or url"),
        ('path = "/x"\nurl = "file:///x"', "repos.acme/site must set path (a "),
        ('path = "/x"\nurl = "file:///x"', "(cloned on first use), not both."),
        ('path = "/x"\nbranch = "dev"', "repos.acme/site.branch is not a field"),
        ('path = ""', "repos.acme/site.path must not be empty"),
        ('path = "/x\\u001b[2J"', r"'/x\x1b[2J' holds a control character"),
        ('url = "/srv/git/site"', "'/srv/git/site' is not a URL"),
        ('url = "-oProxyCommand=x"', "is not a URL"),
        ('path = "/x"\nremote = "--mirror"', "repos.acme/site.remote: '--mirror' is not a"),
        ('path = "/x"\nbase_ref = 3', "repos.acme/site.base_ref must be a string"),
    ],
)
def test_a_bad_repository_entry_is_one_sentence_naming_it(
    tmp_path: Path, entry: str, fragment: str
) -> None:
    message = problems(tmp_path, f'[repos."acme/site"]\n{entry}\n')
    assert fragment in message
    assert message.startswith(f"{tmp_path / 'jarvis.toml'}: ") and "\n" not in message


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("-main", "starts with '-'"),
        ("a..b", "'..'"),
        ("my branch", "a space"),
        ("tab\there", "a control character"),
        ("x~1", "~ ^ :"),
        ("x^", "~ ^ :"),
        ("a:b", "~ ^ :"),
        ("wild*", "~ ^ :"),
        ("what?", "~ ^ :"),
        ("[x", "~ ^ :"),
        ("back\\slash", "~ ^ :"),
        ("topic.lock", "'.lock'"),
        ("topic/", "ends with '/'"),
        ("/topic", "starts or ends with '/'"),
        ("a//b", "'//'"),
        (".hidden", "starts with '.'"),
        ("a/.b", "starts with '.'"),
        ("end.", "ends with '.'"),
        ("@", "'@'"),
        ("a@{1}", "'@{'"),
        ("", "empty"),
    ],
)
def test_base_ref_must_be_a_safe_git_ref_name(tmp_path: Path, ref: str, why: str) -> None:
    problem = ref_problem(ref)
    assert problem is not None and why in problem
    escaped = ref.replace("\\", "\\\\").replace("\t", "\\t")
    message = problems(tmp_path, f'[repos."acme/site"]\npath = "/x"\nbase_ref = "{escaped}"\n')
    assert "repos.acme/site.base_ref: " in message and why in message


@pytest.mark.parametrize(
    "ref", ["main", "release/1.2", "v1.0.0", "feature/a-b_c", "refs/heads/main", "0123abcd"]
)
def test_ordinary_refs_are_accepted(ref: str) -> None:
    assert ref_problem(ref) is None
    assert RepoConfig(path="/x", base_ref=ref).base_ref == ref


@pytest.mark.parametrize(
    "name", ["acme", "acme/site/extra", "/site", "acme/", "a b/c", "acme/si te", "./x", "a/..",
             "../x", "acme/$x", "acme\\site", "", "acme/\u00e9"],
)  # fmt: skip
def test_repository_names_are_owner_slash_name(tmp_path: Path, name: str) -> None:
    assert repo_name_problem(name) is not None
    key = name.replace("\\", "\\\\")
    message = problems(tmp_path, f'[repos."{key}"]\npath = "/x"\n')
    assert "repos: " in message and "is not a repository name: write it as owner/name" in message


def test_every_bad_name_and_key_is_reported_at_once(tmp_path: Path) -> None:
    message = problems(
        tmp_path,
        '[repos."../x"]\npath = "/x"\n[repos."a/b"]\npath = "/x"\nurl = "file:///x"\n'
        "[git]\nworktree_grace_s = -1\nkeep = true\n",
    )
    assert len(message.split("; ")) == 4, message
    assert "'../x' is not a repository name" in message and "not both" in message
    assert "git.worktree_grace_s" in message and "git.keep is not a field" in message


def test_a_hostile_repository_name_is_quoted_inert(tmp_path: Path) -> None:
    message = problems(tmp_path, '[repos."\\u001b]0;owned\\u0007/x"]\npath = "/x"\n')
    assert "\x1b" not in message and "\x07" not in message
    assert r"'\x1b]0;owned\x07/x'" in message


@pytest.mark.parametrize(
    ("source", "is_url"),
    [
        ("https://example.com/acme/site.git", True),
        ("file:///srv/git/site.git", True),
        ("ssh://git@example.com:2222/acme/site.git", True),
        ("git@example.com:acme/site.git", True),
        ("/srv/git/site.git", False),
        ("../site", False),
        ("site", False),
        ("./a:b", False),
        ("C:/not-here", False),
    ],
)
def test_urls_are_told_from_paths(source: str, is_url: bool) -> None:
    assert looks_like_url(source) is is_url


def test_the_reference_documents_every_key_and_its_example_loads(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    # Sections whose tables are keyed by a name: what each table holds.
    tables: dict[str, type[BaseModel]] = {
        "repos": RepoConfig, "lanes": LaneConfig, "prices": Price
    }  # fmt: skip
    for section, field in HostConfig.model_fields.items():
        assert f"[{section}" in doc, section
        model = tables.get(section, field.annotation)
        assert isinstance(model, type) and issubclass(model, BaseModel)
        for key in model.model_fields:
            if (section, key) == ("workers", "profiles"):
                continue  # written as [workers.NAME] tables, documented below
            assert f"| `{key}` |" in doc, f"{section}.{key}"
    for key in WorkerProfile.model_fields:
        assert f"| `{key}` |" in doc, f"workers.NAME.{key}"
    example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "jarvis.toml").write_text(example, "utf-8")
    config = load_config(tmp_path)
    assert set(config.model_fields_set) == set(HostConfig.model_fields)  # every section shown
    assert config.repos["acme/api"].url and config.repos["acme/site"].path


# What the dispatch refuses, or git would read as an option, is refused as the file loads: one
# sentence naming the key, the same rules as `jarvis repo add` (core/contracts/repositories.py).
@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[repos."-x/y"]\npath = "/x"\n', "repos: '-x/y' is not a repository name"),
        ('[repos."acme/-x"]\npath = "/x"\n', "repos: 'acme/-x' is not a repository name"),
        ('[repos."acme/site"]\nurl = "ssh://-oProxyCommand=touch /tmp/pwned/x"\n',
         "repos.acme/site.url: 'ssh://-oProxyCommand=touch /tmp/pwned/x' is not a usable "
         "repository URL: its host starts with '-', which git would pass on as an option."),
        ('[repos."acme/site"]\nurl = "ssh://git@-oProxyCommand=x/a/b"\n',
         "its host starts with '-'"),
        ('[repos."acme/site"]\nurl = "-oProxyCommand=x@example.com:a/b"\n',
         "its user starts with '-'"),
        ('[repos."acme/site"]\nurl = "git@example.com:-b"\n', "its path starts with '-'"),
        ('[repos."acme/site"]\nurl = "ext::sh -c touch% /tmp/pwned"\n',
         "repos.acme/site.url: 'ext::sh -c touch% /tmp/pwned' is not a usable repository URL: "
         "it names a git remote helper"),
        ('[repos."acme/site"]\nurl = "foo://example.com/a/b"\n', "scheme foo://"),
        ('[repos."acme/site"]\npath = "-x"\n',
         "repos.acme/site.path: '-x' is not a usable repository path: it starts with '-'."),
    ],
)  # fmt: skip
def test_names_and_sources_git_would_misread_are_refused_as_the_file_loads(
    tmp_path: Path, text: str, fragment: str
) -> None:
    message = problems(tmp_path, text)
    assert fragment in message, message
    assert message.startswith(f"{tmp_path / 'jarvis.toml'}: ") and "\n" not in message


def test_the_host_and_the_cli_refuse_such_a_file_with_a_sentence(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.jarvis_cli import jarvis
    from tests.processes import HANG_GUARD_S

    ws = tmp_path / "ws"
    ws.mkdir()
    text = '[repos."acme/site"]\nurl = "ext::sh -c touch% /tmp/x"\n'
    (ws / "jarvis.toml").write_text(text)
    said = "repos.acme/site.url: 'ext::sh -c touch% /tmp/x' is not a usable repository URL"
    host = subprocess.run([sys.executable, "-m", "jarvis_cli", "host", "--workspace", str(ws)],
                          capture_output=True, text=True, timeout=HANG_GUARD_S)  # fmt: skip
    assert host.returncode == 2 and said in host.stderr and "Traceback" not in host.stderr
    listed = jarvis("repo", "list", "--workspace", ws, "--json")
    assert listed.code == 2 and listed.json()["error"]["code"] == "config_unusable"
    assert said in listed.json()["error"]["message"]
    assert (ws / "jarvis.toml").read_text() == text
