"""Identifier formats shared by several contracts: run ids, repositories, branches, paths.

A run id is what the dispatch contract says — at most 64 characters, no white space — which
NanoClaw's own ids use freely (``nc:run:a8``). It also names a folder and files in the IPC tree
(``progress/<run_id>/``, ``steer/<run_id>.json``) and is shown to operators, so a few things
are refused beyond the contract: anything that could name a file outside its folder (``/``,
``\\``, ``.`` or ``..``), a hidden name (a leading ``.``, which readers skip), a leading
``-`` (read as an option by a program it is passed to), and characters that are not text
(control and format characters, which could act on a terminal).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath
from urllib.parse import quote

from core.contracts.errors import preview
from core.contracts.repositories import repo_name_problem

RUN_ID_MAX = 64
#: The ids most dispatchers use, decided by one regex before any character is looked at.
_PLAIN_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+=,~-]*")
# ``steer/<run_id>.acked.json`` is the worker's acknowledgement file; a run id ending in
# ``.acked`` would make another run's steer file look like an acknowledgement.
_RESERVED_SUFFIX = ".acked"

_BRANCH = re.compile(r"jarvis-[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9._-]+)*")


def run_id_problem(value: str) -> tuple[str, str] | None:
    """Why ``value`` is not a valid run id, as (code, message), or None when it is."""
    if (
        len(value) <= RUN_ID_MAX
        and _PLAIN_RUN_ID.fullmatch(value)
        and not value.endswith(_RESERVED_SUFFIX)
    ):
        return None  # the common case, decided by one regex
    if not value:
        return "empty", "run_id must not be empty."
    if len(value) > RUN_ID_MAX:
        return "run_id_too_long", f"run_id is {len(value)} characters; the limit is {RUN_ID_MAX}."
    if any(ch.isspace() for ch in value):
        return "run_id_whitespace", "run_id must not contain white space."
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") for ch in value):
        return "run_id_unsafe", "run_id must not contain control or invisible characters."
    if "/" in value or "\\" in value or value in (".", ".."):
        return (
            "run_id_unsafe",
            "run_id must not contain '/' or '\\' or be '.' or '..' (it names a folder).",
        )
    if value.startswith((".", "-")):
        return "run_id_unsafe", "run_id must not start with '.' or '-'."
    if value.endswith(_RESERVED_SUFFIX):
        return (
            "run_id_unsafe",
            "run_id must not end in '.acked' (that names a steer's acknowledgement).",
        )
    return None


def run_ref_part(run_id: str) -> str:
    """``run_id`` as one part of a git ref name (``refs/jarvis/<part>/…``): as it is when git
    takes it, else with every character but letters, digits, ``_`` and ``-`` percent-encoded
    (``nc:run:a8`` → ``nc%3Arun%3Aa8``), so two run ids never share a ref."""
    if re.fullmatch(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*", run_id) and not run_id.endswith(
        ".lock"
    ):
        return run_id
    return quote(run_id, safe="").replace(".", "%2E")


def repo_problem(value: str) -> tuple[str, str] | None:
    """Why ``value`` is not an ``owner/repo`` name, or None: the rules `jarvis.toml` and
    ``jarvis repo`` use too (`core.contracts.repositories`), so a dispatch can name every
    configured repository and nothing else."""
    problem = repo_name_problem(value)
    return None if problem is None else ("repo_format", problem)


def branch_problem(value: str) -> tuple[str, str] | None:
    """Why ``value`` is not a ``jarvis-<feature>`` branch that git would accept, or None."""
    if (
        not _BRANCH.fullmatch(value)
        or ".." in value
        or value.endswith((".lock", "."))
        or "/." in value
    ):
        return (
            "branch_format",
            "branch must be 'jarvis-<feature>' and a valid git branch name "
            "(letters, digits, '.', '_', '-', '/').",
        )
    return None


def relative_path_problem(value: str) -> tuple[str, str] | None:
    """Why ``value`` is not a relative path that stays inside its root, or None."""
    if not value.strip():
        return "empty", "the path must not be empty."
    if "\x00" in value:
        return "unsafe_path", "the path must not contain a NUL character."
    path = PurePosixPath(value.replace("\\", "/"))
    if path.is_absolute() or (value[1:3] == ":/" or value[1:3] == ":\\"):
        return "unsafe_path", "the path must be relative to the repository, not absolute."
    if ".." in path.parts:
        return "unsafe_path", "the path must not climb out of the repository with '..'."
    return None


_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


def ref_problem(ref: str) -> str | None:
    """Why ``ref`` is not a safe git ref name (a branch, tag or remote name), or None.

    git's own rules (``git check-ref-format``), and no leading ``-``, so the name can never be
    read as an option of a git command it is passed to.
    """
    checks = (
        (not ref, "it is empty"),
        (ref.startswith("-"), "it starts with '-'"),
        (_REF_FORBIDDEN.search(ref) is not None,
         "it holds a space, a control character or one of ~ ^ : ? * [ \\"),
        (".." in ref, "it holds '..'"),
        ("@{" in ref or ref == "@", "it holds '@{' or is '@'"),
        (ref.startswith("/") or ref.endswith("/") or "//" in ref,
         "it starts or ends with '/', or holds '//'"),
        (ref.endswith("."), "it ends with '.'"),
        (any(p.startswith(".") or p.endswith(".lock") for p in ref.split("/")),
         "a part of it starts with '.' or ends with '.lock'"),
    )  # fmt: skip
    for failed, why in checks:
        if failed:
            return f"{preview(ref)} is not a usable git ref name: {why}."
    return None
