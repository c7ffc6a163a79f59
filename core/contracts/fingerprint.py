"""Failure fingerprints for error.v1 records: URL normalisation and the sha256 of the frozen input.

The contract fixes the fingerprint input as
``error_class|error_code|step_id|selector_or_empty|normalized_url_or_empty`` and the URL
normalisation as "lowercase hostname, host + path only, strip query and fragment, strip trailing
slash except root". Where the contract is silent this module decides, and docs/contracts.md lists
each decision:

* ``None``, ``""`` and white space normalise to ``""`` (surrounding white space is ignored).
* An empty path is the root, so ``https://a.com`` and ``https://a.com/`` both give ``a.com/``.
* Every trailing slash is stripped (``/feed//`` gives ``/feed``), the root keeps its one slash.
* Input without a scheme (``www.x.com/feed/``, ``localhost:8080/x``) is read as host + path.
* Scheme, userinfo and port are dropped; only the hostname is lowercased, the path keeps its case
  and its percent-escapes exactly as given.
* A URL with a scheme but no ``//`` authority (``about:blank``, ``data:...``) has no host; it is
  kept as ``scheme:rest`` with the scheme lowercased, so ``about:blank`` stays ``about:blank``.

The parser is a small hand-written splitter rather than `urllib.parse`, because ``urlsplit``
raises on some malformed input (``http://[::1``) and its ``port`` raises on a bad port; a
fingerprint has to be computable for whatever URL a failing step happened to be on.
"""

from __future__ import annotations

import hashlib
import re

# A scheme followed by "//": a hierarchical URL whose authority we can take the host from.
_HIERARCHICAL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
# A scheme followed by ":" and no "//" (about:blank, mailto:, data:). A digit after the colon is a
# port ("localhost:8080"), not an opaque URL, so it is excluded.
_OPAQUE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):(?!\d)")
_QUERY_OR_FRAGMENT = re.compile(r"[?#]")


def _strip_trailing_slashes(path: str) -> str:
    if not path:
        return "/"
    stripped = path.rstrip("/")
    return stripped if stripped else "/"


def _host_of(authority: str) -> str:
    # Userinfo ends at the last "@"; a password may itself contain ":".
    host_port = authority.rpartition("@")[2]
    if host_port.startswith("["):
        # IPv6 literal: the host runs to the closing bracket; anything after is the port.
        end = host_port.find("]")
        host = host_port if end < 0 else host_port[: end + 1]
    else:
        host = host_port.partition(":")[0]
    return host.lower()


def normalize_url(url: str | None) -> str:
    """Normalise a URL for use as fingerprint input, as the failure contract specifies.

    Lowercase hostname, host + path only (no scheme, userinfo or port), query and fragment
    stripped, trailing slashes stripped except for the root. Never raises.

    Args:
        url: The URL a step failed on; ``None`` or blank when there was none.

    Returns:
        The normalised form, e.g. ``www.linkedin.com/feed`` for
        ``https://www.linkedin.com/feed/?trk=xyz#top``, or ``""`` for no URL.
    """
    if not isinstance(url, str):
        return ""
    text = url.strip()
    if not text:
        return ""
    # Query and fragment go first: a "/" or ":" inside them must not affect host or path.
    text = _QUERY_OR_FRAGMENT.split(text, maxsplit=1)[0]
    scheme = _HIERARCHICAL.match(text)
    if scheme:
        rest = text[scheme.end() :]
    elif text.startswith("//"):
        rest = text[2:]
    else:
        opaque = _OPAQUE.match(text)
        if opaque:
            body = text[opaque.end() :]
            return f"{opaque.group(1).lower()}:{body.rstrip('/')}"
        rest = text
    authority, slash, path = rest.partition("/")
    return _host_of(authority) + _strip_trailing_slashes(slash + path)


def fingerprint_input(
    error_class: str,
    error_code: str,
    step_id: str,
    selector: str | None = None,
    url: str | None = None,
) -> str:
    """The exact text that is hashed: the five parts joined with ``|``.

    Args:
        error_class: One of the error.v1 classes.
        error_code: The failure's code.
        step_id: The id of the step that failed.
        selector: The selector involved, if any.
        url: The URL the step was on, if any; it is normalised with `normalize_url`.

    Returns:
        ``error_class|error_code|step_id|selector_or_empty|normalized_url_or_empty``.
    """
    return "|".join((error_class, error_code, step_id, selector or "", normalize_url(url)))


def fingerprint(
    error_class: str,
    error_code: str,
    step_id: str,
    selector: str | None = None,
    url: str | None = None,
) -> str:
    """The error.v1 fingerprint: sha256 hex of `fingerprint_input` encoded as UTF-8.

    Lone surrogates (which JSON can carry as ``\\ud800``) are encoded with ``surrogatepass`` so
    that a fingerprint can be computed for any string a record holds; this never raises.

    Args:
        error_class: One of the error.v1 classes.
        error_code: The failure's code.
        step_id: The id of the step that failed.
        selector: The selector involved, if any; ``None`` and ``""`` hash alike.
        url: The URL the step was on, if any; ``None`` and ``""`` hash alike.

    Returns:
        64 lowercase hex digits.
    """
    text = fingerprint_input(error_class, error_code, step_id, selector, url)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
