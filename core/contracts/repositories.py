"""Repository names, URLs and paths: one set of rules for every door they come in by.

A repository name (``owner/name``) arrives in a dispatch (``repo``, NanoClaw's chat messages
too), in ``jarvis.toml`` (``[repos."owner/name"]``) and on ``jarvis repo add``; a URL or path in
``jarvis.toml`` and on ``jarvis repo add``; a path in an OpenClaw request (``repo.path``). Each
of them ends up as a folder name (``<workspace>/repos/owner/name``), in a git command line or in
front of an operator, so all of them obey these rules:

* **Names**: ``owner/name``, each part 1-100 of letters, digits, ``.``, ``_`` and ``-``, neither
  part ``.`` or ``..`` (a folder of its own) nor starting with ``-`` (read as an option).
* **URLs**: ``ssh://``, ``git+ssh://``, ``ssh+git://``, ``git://``, ``http://``, ``https://``,
  ``file://``, or git's scp-like ``user@host:path``. No remote helper (``ext::sh -c …``,
  ``fd::``, any other ``transport::address``, any other scheme, which git would hand to a
  ``git-remote-<scheme>`` program). No user, host or folder of the path that starts with ``-``,
  even percent-encoded: git hands host and user to ``ssh`` and the path to ``git-upload-pack``,
  which would read it as an option (``ssh://-oProxyCommand=…``). A host is a name or an address
  (letters, digits, ``.``, ``-``, ``_``, ``~``; ``[…]`` for IPv6), a port digits only.
* **Paths**: not starting with ``-``.
* **All**: no control or invisible formatting characters, at most `URL_MAX` (`PATH_MAX` for a
  path) characters.

Each check returns a sentence naming the value (quoted inert), or None.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final
from urllib.parse import unquote, urlsplit

from core.contracts.errors import preview

PART_MAX: Final = 100
"""Characters in each part of ``owner/name`` (GitHub's limit for a repository's name)."""
URL_MAX: Final = 2048
PATH_MAX: Final = 4096
#: Schemes git reaches a repository by itself; any other would run a remote helper.
SCHEMES: Final = frozenset({"ssh", "git+ssh", "ssh+git", "git", "http", "https", "file"})

_PART = re.compile(rf"[A-Za-z0-9._-]{{1,{PART_MAX}}}")
_SCHEME = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")
#: ``transport::address``: how git names a remote helper (``ext::``, ``fd::``).
_HELPER = re.compile(r"[A-Za-z0-9+.-]+::")
#: git's scp-like form: a colon before any slash, and here a user (as ``looks_like_url`` says).
_SCP = re.compile(r"(?P<user>[^\s/@:]+)@(?P<host>\[[^\]/]*\]|[^\s/:\[\]]+):(?P<path>.*)", re.S)
_HOST = re.compile(r"[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\]")
_USER = re.compile(r"[A-Za-z0-9._~+-]+")
#: What tells a URL from a path on this host (``jarvis repo add``, the ``url`` key): a scheme, a
#: remote helper (to be refused as one, not taken for a folder) or the scp-like form.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S|[A-Za-z0-9+.-]+::|[^\s/@:]+@[^\s/:]+:")


def _shown(value: str) -> str:
    """``value`` quoted and inert on one line: `preview` keeps tabs, new lines and invisible
    formatting characters (a right-to-left override would reorder the sentence)."""
    return "".join(
        (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        if unicodedata.category(ch) in ("Cc", "Cf")
        else ch
        for ch in preview(value)
    )


def _unprintable(value: str) -> bool:
    return any(unicodedata.category(ch) in ("Cc", "Cf") for ch in value)


def repo_name_problem(name: str) -> str | None:
    """Why ``name`` is not a repository name (``owner/name``), or None."""
    parts = name.split("/")
    if len(parts) == 2 and all(
        _PART.fullmatch(p) and p not in (".", "..") and not p.startswith("-") for p in parts
    ):
        return None
    return (
        f"{_shown(name)} is not a repository name: write it as owner/name, each part 1-"
        f"{PART_MAX} letters, digits, '.', '_' or '-', not starting with '-' (and neither part "
        "'.' or '..')."
    )


def looks_like_url(source: str) -> bool:
    """Whether ``source`` names a repository elsewhere (``scheme://…``, ``user@host:path``,
    ``transport::address``) rather than a path on this host."""
    return _URL.match(source) is not None


def _dashed(what: str, value: str) -> str | None:
    """Why ``value`` (a user, host or path of a URL) could be read as an option, or None."""
    for form in (value, unquote(value)):
        if form.startswith("-"):
            return f"its {what} starts with '-', which git would pass on as an option"
        if what == "path" and any(part.startswith("-") for part in form.split("/")):
            return "a folder of its path starts with '-', which git would pass on as an option"
    return None


def _authority_problem(user: str | None, host: str, port: str | None) -> str | None:
    if user is not None:
        problem = _dashed("user", user)
        if problem:
            return problem
        name = unquote(user).split(":", 1)[0]  # https://user:token@host: the name is checked
        if not _USER.fullmatch(name):
            return "its user is not letters, digits, '.', '_', '~', '+' or '-'"
    problem = _dashed("host", host)
    if problem:
        return problem
    if not _HOST.fullmatch(host):
        return "its host is not a name or an address"
    if port is not None and not port.isdigit():
        return "its port is not a number"
    return None


def _scheme_problem(url: str, scheme: str) -> str | None:
    if scheme.lower() not in SCHEMES:
        known = ", ".join(f"{s}://" for s in sorted(SCHEMES))
        return f"git would hand the scheme {scheme}:// to a helper program; use {known}"
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError for a port that is not a number
    except ValueError:
        return "it is not a well-formed URL"
    authority = parts.netloc
    user, _, hostport = authority.rpartition("@") if "@" in authority else (None, "", authority)
    host = hostport
    if hostport.startswith("["):
        host = hostport[: hostport.find("]") + 1]
    elif ":" in hostport:
        host = hostport.rsplit(":", 1)[0]
    if scheme.lower() == "file":
        if host not in ("", "localhost") or user is not None:
            return "a file:// URL names no host (file:///path)"
    else:
        problem = _authority_problem(user or None, host, None if port is None else str(port))
        if problem:
            return problem
    if not parts.path.strip("/"):
        return "it names no repository (its path is empty)"
    return _dashed("path", parts.path.lstrip("/"))


def repo_url_problem(url: str) -> str | None:
    """Why ``url`` is not a repository URL git may clone and fetch unattended, or None."""
    shown = _shown(url)
    if not url:
        return "The repository URL is empty."
    if len(url) > URL_MAX:
        return f"{shown} is over {URL_MAX} characters: too long for a repository URL."
    if _unprintable(url):
        return f"{shown} holds a control character."
    why: str | None
    scheme = _SCHEME.match(url)
    scp = _SCP.fullmatch(url)
    if scheme:
        why = _scheme_problem(url, scheme["scheme"])
    elif _HELPER.match(url):
        why = "it names a git remote helper (transport::address), which runs a program"
    elif scp:
        path = scp["path"]
        why = _authority_problem(scp["user"], scp["host"], None) or (
            "it names no repository (its path is empty)" if not path else _dashed("path", path)
        )
    else:
        return (
            f"{shown} is not a URL (scheme://… or user@host:path): give a repository on this "
            "host as path."
        )
    return None if why is None else f"{shown} is not a usable repository URL: {why}."


def repo_path_problem(path: str) -> str | None:
    """Why ``path`` cannot name a repository on this host, or None (whether one is there is
    `core.repos.git.repository_problem`'s to say)."""
    shown = _shown(path)
    if not path:
        return "The repository path is empty."
    if len(path) > PATH_MAX:
        return f"{shown} is over {PATH_MAX} characters: too long for a repository path."
    if _unprintable(path):
        return f"{shown} holds a control character."
    if path.startswith("-"):
        return f"{shown} is not a usable repository path: it starts with '-'."
    return None
