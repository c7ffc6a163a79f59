"""Starting a NanoClaw runner: the stdin task in NanoClaw's key order, the worker prompt laid out
as NanoClaw's host lays it out, the container's mounts, a plain process's IPC folder, and the
``input/_close`` sentinel written without following links."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.nanoclaw.container_input import container_input, encode, resolve_secrets
from core.nanoclaw.launch import (
    CLOSE,
    INPUT,
    LaunchError,
    build_launch,
    container_options,
    git_dir_of,
    looks_like_container,
    request_close,
)
from core.nanoclaw.prompt import worker_prompt
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo, run_git

KEYS = [
    "prompt", "runId", "groupFolder", "chatJid", "isMain", "assistantName", "opsExtended",
    "schedulerEnabled", "workerSteeringEnabled", "dynamicGroupRegistrationEnabled",
]  # fmt: skip
DOCKER = ["docker", "run", "-i", "--rm", "--network=none", "nanoclaw-agent:latest"]


def launch_of(tmp_path: Path, command: list[str], *, container: bool, **kw: object):  # type: ignore[no-untyped-def]
    ipc, checkout = tmp_path / "ipc" / "jarvis-worker-1", tmp_path / "checkout"
    ipc.mkdir(parents=True, exist_ok=True)
    checkout.mkdir(exist_ok=True)
    args: dict[str, object] = {
        "container": container, "run_id": "r1", "lane": "jarvis-worker-1",
        "dispatch": dispatch_doc("r1"), "criteria": [], "ipc_dir": ipc, "checkout": checkout,
        "profile_env": {}, "host_env": {},
    }  # fmt: skip
    args.update(kw)
    return build_launch(command, **args)  # type: ignore[arg-type]


def test_stdin_holds_the_fields_in_nanoclaws_order_compact(tmp_path: Path) -> None:
    launch = launch_of(tmp_path, ["node", "runner.js"], container=False)
    assert not launch.stdin.endswith(b"\n") and b'", "' not in launch.stdin
    doc = json.loads(launch.stdin)
    assert list(doc) == KEYS
    assert doc["runId"] == "r1" and doc["groupFolder"] == "jarvis-worker-1"
    assert doc["chatJid"] == "jarvis-worker-1@nanoclaw"
    assert doc["workerSteeringEnabled"] is True and doc["isMain"] is False
    assert doc["assistantName"] == "Andy"
    assert (doc["opsExtended"], doc["schedulerEnabled"]) == (False, False)
    assert doc["dynamicGroupRegistrationEnabled"] is False


def test_a_continued_session_and_resolved_secrets_take_their_places(tmp_path: Path) -> None:
    dispatch = dispatch_doc("r1", context_intent="continue", session_id="sess-1")
    launch = launch_of(
        tmp_path, ["node", "runner.js"], container=False, dispatch=dispatch,
        secret_names=["GITHUB_TOKEN", "UNSET_ONE", "OPENROUTER_API_KEY"],
        profile_env={"GITHUB_TOKEN": "ghp_fromprofile"},
        host_env={"GITHUB_TOKEN": "ghp_fromhost", "OPENROUTER_API_KEY": "sk-or-1"},
        assistant_name="Jarvis",
    )  # fmt: skip
    doc = json.loads(launch.stdin)
    assert list(doc) == [KEYS[0], "sessionId", *KEYS[1:], "secrets"]
    assert doc["sessionId"] == "sess-1" and doc["assistantName"] == "Jarvis"
    assert doc["secrets"] == {"GITHUB_TOKEN": "ghp_fromprofile", "OPENROUTER_API_KEY": "sk-or-1"}
    assert list(doc["secrets"]) == ["GITHUB_TOKEN", "OPENROUTER_API_KEY"]


def test_no_secret_with_a_value_means_no_secrets_key() -> None:
    assert resolve_secrets(["A", "B"], {"A": ""}, {}) == {}
    doc = container_input(prompt="p", run_id="r", lane="main", secrets={})
    assert "secrets" not in doc and doc["isMain"] is True


def test_the_stdin_text_is_what_json_stringify_writes() -> None:
    doc = container_input(prompt="é ✓ \n \x1b", run_id="r", lane="l")
    assert encode(doc).decode() == json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    lone = container_input(prompt="\ud800", run_id="r", lane="l")
    assert json.loads(encode(lone))["prompt"] == "\ud800"  # escaped, still the same text


def test_the_prompt_is_laid_out_as_nanoclaws_host_lays_it_out() -> None:
    doc = dispatch_doc("r1", request_id="req-7", priority="high", ui_impacting=False)
    prompt = worker_prompt(doc, [{"type": "file_exists", "description": "src/x.py exists"}],
                           "r1", workdir="/workspace/group")  # fmt: skip
    lines = prompt.split("\n")
    assert lines[:10] == [
        "You are a Jarvis worker.",
        "Execute exactly one dispatch task and return a strict completion contract.",
        "Run ID: r1",
        "Request ID: req-7",
        "Task Type: fix",
        "Repository: acme-labs/fleet-engine",
        "Branch: jarvis-retry-counter",
        "Priority: high",
        "UI impacting: false",
        "Browser evidence required: false",
    ]
    at = lines.index("Acceptance tests (all required):")
    assert lines[at + 1 : at + 3] == ["1. pytest tests/test_retry.py", "2. ruff check ."]
    assert lines[lines.index("Task instructions:") + 1] == doc["input"]
    assert "- src/x.py exists" in lines
    assert '- completion.run_id must exactly equal "r1".' in lines
    fields = lines[lines.index("Required completion fields:") + 1 :]
    assert fields == [f"- {f}" for f in doc["output_contract"]["required_fields"]]
    assert "/workspace/group is a git checkout" in prompt


def test_absent_optional_fields_read_as_nanoclaw_prints_them() -> None:
    doc = dispatch_doc("r1")
    doc.pop("priority", None)
    prompt = worker_prompt(doc, [], "r1", workdir="/w")
    assert "Request ID: n/a" in prompt and "Priority: normal" in prompt
    assert '- OPTIONAL: include "session_id"' in prompt


def test_a_plain_process_is_told_its_ipc_folder_and_keeps_its_command(tmp_path: Path) -> None:
    launch = launch_of(tmp_path, ["node", "runner.js"], container=False)
    assert launch.argv == ["node", "runner.js"]
    assert launch.env == {"NANOCLAW_IPC_DIR": str(tmp_path / "ipc" / "jarvis-worker-1")}
    assert str(tmp_path / "checkout") in json.loads(launch.stdin)["prompt"]


def test_a_container_gets_its_mounts_after_run(tmp_path: Path) -> None:
    launch = launch_of(tmp_path, DOCKER, container=True, profile_env={"TZ": "UTC", "A_KEY": "x"})
    ipc, checkout = tmp_path / "ipc" / "jarvis-worker-1", tmp_path / "checkout"
    assert launch.argv[:2] == ["docker", "run"]
    assert launch.argv[2:6] == ["-v", f"{ipc}:/workspace/ipc", "-v", f"{checkout}:/workspace/group"]
    assert launch.argv[-4:] == DOCKER[-4:]  # the profile's own options come after, and win
    assert "-e" in launch.argv and "A_KEY" in launch.argv and "x" not in launch.argv
    assert launch.env == {}
    assert "/workspace/group is a git checkout" in json.loads(launch.stdin)["prompt"]


def test_a_container_runs_as_the_hosts_user_unless_root_or_the_images() -> None:
    kw = {"ipc_dir": Path("/i"), "checkout": Path("/c"), "env_names": [], "gid": 7}
    assert "--user" not in container_options("docker", uid=1000, **kw)  # type: ignore[arg-type]
    assert "--user" not in container_options("docker", uid=0, **kw)  # type: ignore[arg-type]
    mine = container_options("podman", uid=4242, **kw)  # type: ignore[arg-type]
    assert mine[-4:] == ["--user", "4242:7", "-e", "HOME=/home/node"]
    assert "--user" not in container_options("container", uid=4242, **kw)  # type: ignore[arg-type]


def test_a_linked_worktree_brings_its_git_dir_along(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    checkout = tmp_path / "checkouts" / "r1"
    run_git(repo, "worktree", "add", "--quiet", "-b", "jarvis-x", str(checkout))
    assert git_dir_of(checkout) == (repo / ".git").resolve()
    assert git_dir_of(repo) is None  # a clone's own .git folder: nothing outside to mount
    kw = {"ipc_dir": tmp_path, "env_names": [], "uid": 0, "gid": 0}
    options = container_options("docker", checkout=checkout, **kw)  # type: ignore[arg-type]
    git_dir = (repo / ".git").resolve()
    assert options[4:6] == ["-v", f"{git_dir}:{git_dir}"]


def test_what_cannot_be_mounted_or_has_no_run_word_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="'run' word"):
        launch_of(tmp_path, ["docker", "compose", "up"], container=True)
    odd = tmp_path / "a:b"
    with pytest.raises(LaunchError, match="holds a ':'"):
        launch_of(odd, DOCKER, container=True)


def test_a_run_id_holding_a_colon_is_mounted_from_a_name_the_container_takes(
    tmp_path: Path,
) -> None:
    checkout = tmp_path / "checkouts" / "nc:run:a8"
    checkout.mkdir(parents=True)
    mounts = tmp_path / "mounts"
    kw = {"run_id": "nc:run:a8", "checkout": checkout, "mounts_dir": mounts}
    launch = launch_of(tmp_path, DOCKER, container=True, **kw)
    alias = mounts / "nc%3Arun%3Aa8"
    ipc = tmp_path / "ipc" / "jarvis-worker-1"
    assert launch.argv[2:6] == ["-v", f"{ipc}:/workspace/ipc", "-v", f"{alias}:/workspace/group"]
    assert alias.resolve() == checkout.resolve()
    # The run id itself is unchanged wherever it is named: the runner's task, its prompt.
    task = json.loads(launch.stdin)
    assert task["runId"] == "nc:run:a8" and "Run ID: nc:run:a8" in task["prompt"]
    # Stable: the next attempt mounts the same path, whatever was left there.
    again = launch_of(tmp_path, DOCKER, container=True, **kw)
    assert again.argv[2:6] == launch.argv[2:6] and alias.resolve() == checkout.resolve()
    # Collision-free: an id that reads like the encoded one has a path of its own.
    other = tmp_path / "checkouts" / "nc%3Arun%3Aa8:"
    other.mkdir()
    third = launch_of(tmp_path, DOCKER, container=True, run_id=other.name, checkout=other,
                      mounts_dir=mounts)  # fmt: skip
    assert third.argv[5] == f"{mounts / 'nc%253Arun%253Aa8%3A'}:/workspace/group"
    assert alias.resolve() == checkout.resolve()
    # A path without a ':' is mounted as it is.
    plain = launch_of(tmp_path, DOCKER, container=True, mounts_dir=mounts)
    assert plain.argv[5] == f"{tmp_path / 'checkout'}:/workspace/group"


def test_containers_are_recognised_by_runtime_and_run_word() -> None:
    assert looks_like_container(DOCKER)
    assert looks_like_container(["/usr/bin/podman", "run", "img"])
    assert not looks_like_container(["docker", "ps"])
    assert not looks_like_container(["node", "run"])


def test_close_is_written_empty_in_input(tmp_path: Path) -> None:
    request_close(tmp_path)
    assert (tmp_path / INPUT / CLOSE).read_bytes() == b""
    request_close(tmp_path)  # twice is no fault


def test_close_never_follows_a_link(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    lane = tmp_path / "lane"
    lane.mkdir()
    os.symlink(elsewhere, lane / INPUT)
    with pytest.raises(OSError):
        request_close(lane)
    (lane / INPUT).unlink()
    (lane / INPUT).mkdir()
    os.symlink(elsewhere / "target", lane / INPUT / CLOSE)
    with pytest.raises(OSError):
        request_close(lane)
    assert list(elsewhere.iterdir()) == []


def test_the_object_stores_a_runs_repository_borrows_are_mounted_read_only(
    tmp_path: Path,
) -> None:
    checkout, objects = tmp_path / "checkout", tmp_path / "origin.git" / "objects"
    options = container_options("docker", ipc_dir=tmp_path / "ipc", checkout=checkout,
                                env_names=[], uid=0, gid=0, shared=[objects])  # fmt: skip
    assert options[4:6] == ["-v", f"{objects}:{objects}:ro"]
