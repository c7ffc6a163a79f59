"""Repository names, URLs and paths: the one validator every door uses, row by row.

The doors themselves are tested where they are: the CLI (tests/cli/test_repo_cli.py), loading
``jarvis.toml`` (tests/host/test_repos_config.py), the dispatch and the OpenClaw request
(below), and the clone (tests/repos/test_clone_rules.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.contracts.dispatch import validate_dispatch
from core.contracts.openclaw_request import validate_request
from core.contracts.repositories import (
    looks_like_url,
    repo_name_problem,
    repo_path_problem,
    repo_url_problem,
)
from tests.core.store_helpers import dispatch_doc

ROOT = Path(__file__).resolve().parents[2]

GOOD_NAMES = ["acme/site", "a/b", "acme/site.js", "acme/.github", "my_org/x", "a-b/c_d.e",
              "x" * 100 + "/y", "0/0"]  # fmt: skip
BAD_NAMES = ["-x/y", "acme/-x", "--upload-pack=x/y", "acme", "a/b/c", "/site", "acme/", "a/..",
             "../x", ".", "a b/c", "acme/si te", "acme/$x", "acme\\site", "", "acme/\u00e9",
             "x" * 101 + "/y", "a/\x1b]0;t\x07", "a/b\u202e"]  # fmt: skip


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_good_names(name: str) -> None:
    assert repo_name_problem(name) is None


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_say_why_inertly(name: str) -> None:
    problem = repo_name_problem(name)
    assert problem is not None and "is not a repository name: write it as owner/name" in problem
    assert "not starting with '-'" in problem
    assert not any(ch in problem for ch in "\x1b\x07\n")


GOOD_URLS = [
    "https://example.com/acme/site.git",
    "http://example.com/acme/site.git",
    "https://user:token@example.com/acme/site.git",
    "ssh://git@example.com:2222/acme/site.git",
    "ssh://example.com/acme/site.git",
    "git+ssh://git@example.com/acme/site.git",
    "ssh+git://git@example.com/acme/site.git",
    "ssh://git@[::1]:22/acme/site.git",
    "git://example.com/acme/site.git",
    "file:///srv/git/site.git",
    "file://localhost/srv/git/site.git",
    "file:///srv/my repos/site.git",
    "git@example.com:acme/site.git",
    "deploy-bot@example.com:acme/site-2.git",
    "git@example.com:/srv/site.git",
]


@pytest.mark.parametrize("url", GOOD_URLS)
def test_good_urls(url: str) -> None:
    assert looks_like_url(url)
    assert repo_url_problem(url) is None


# (url, what the sentence says)
BAD_URLS = [
    ("ssh://-oProxyCommand=touch /tmp/x/foo", "its host starts with '-'"),
    ("ssh://-oProxyCommand=x@example.com/acme/site", "its user starts with '-'"),
    ("ssh://git@-oProxyCommand=x/acme/site", "its host starts with '-'"),
    ("ssh://%2DoProxyCommand=x/acme/site", "its host starts with '-'"),
    ("ssh://%2doProxyCommand=x@host/acme/site", "its user starts with '-'"),
    ("ssh://example.com/-x/site", "its path starts with '-'"),
    ("ssh://example.com/acme/-x", "a folder of its path starts with '-'"),
    ("https://example.com/%2Dx/site", "its path starts with '-'"),
    ("-oProxyCommand=x@example.com:acme/site", "its user starts with '-'"),
    ("git@-oProxyCommand=x:acme/site", "its host starts with '-'"),
    ("git@example.com:-u/site", "its path starts with '-'"),
    ("git@example.com:acme/--upload-pack=x", "a folder of its path starts with '-'"),
    ("git@example.com:", "its path is empty"),
    ("ext::sh -c touch% /tmp/pwned", "it names a git remote helper"),
    ("fd::17", "it names a git remote helper"),
    ("testgit::/srv/x", "it names a git remote helper"),
    ("foo://example.com/acme/site", "git would hand the scheme foo:// to a helper program"),
    ("ext://example.com/x", "git would hand the scheme ext:// to a helper program"),
    ("file://example.com/srv/site.git", "a file:// URL names no host"),
    ("https://example.com", "its path is empty"),
    ("https://example.com:port/x", "it is not a well-formed URL"),
    ("https://exa mple.com/x", "its host is not a name or an address"),
    ("https://us er@example.com/x", "its user is not letters"),
    ("https://example.com/x\ny", "holds a control character"),
    ("https://example.com/x\u202egit", "holds a control character"),
    ("https://example.com/" + "x" * 2100, "is over 2048 characters"),
    ("/srv/git/site.git", "is not a URL (scheme://… or user@host:path)"),
    ("", "The repository URL is empty."),
]


@pytest.mark.parametrize(("url", "why"), BAD_URLS)
def test_bad_urls_say_why(url: str, why: str) -> None:
    problem = repo_url_problem(url)
    assert problem is not None and why in problem, problem
    assert "\n" not in problem and "\u202e" not in problem


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/srv/git/site", None),
        ("../site", None),
        ("~/src/site", None),
        ("/srv/-x/site", None),  # git runs in the folder, it is never one of its arguments
        ("-x", "it starts with '-'"),
        ("--upload-pack=x", "it starts with '-'"),
        ("/srv/\x1b]0;t\x07", "holds a control character"),
        ("/" + "x" * 4100, "is over 4096 characters"),
        ("", "The repository path is empty."),
    ],
)
def test_paths(path: str, why: str | None) -> None:
    problem = repo_path_problem(path)
    assert (problem is None) if why is None else (problem is not None and why in problem)


# -- the dispatch and the OpenClaw request use the same rules -----------------------------------


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_dispatch_refuses_every_name_the_config_refuses(name: str) -> None:
    report = validate_dispatch(dispatch_doc("run-1", repo=name))
    assert ("repo", "repo_format") in [(e.field, e.code) for e in report.errors]


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_a_dispatch_takes_every_name_the_config_takes(name: str) -> None:
    report = validate_dispatch(dispatch_doc("run-1", repo=name))
    assert report.valid, report.errors


REQUEST = json.loads((ROOT / "sample_runs" / "openclaw" / "request-valid.json").read_text())


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("path", "-x", "bad_repo_path"),
        ("path", "/srv/\x1b[2J", "bad_repo_path"),
        ("base_ref", "--upload-pack=x", "bad_ref"),
        ("target_branch", "-b", "bad_ref"),
        ("target_branch", "a..b", "bad_ref"),
    ],
)
def test_an_openclaw_request_refuses_a_repo_path_or_ref_git_would_misread(
    field: str, value: str, code: str
) -> None:
    good = validate_request(REQUEST)
    assert good.valid, good.errors
    doc = {**REQUEST, "repo": {**REQUEST["repo"], field: value}}
    report = validate_request(doc)
    assert (f"repo.{field}", code) in [(e.field, e.code) for e in report.errors], report.errors
