"""What a store's name says before anything is opened: which backend it names, and the name
fit to show (a URL's password masked). Imported by the location, the backends and the change
listener alike, so none of them imports another for it."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

SCHEMES = ("postgresql://", "postgres://")


def is_postgres(location: str | Path) -> bool:
    return isinstance(location, str) and location.startswith(SCHEMES)


def masked(location: str | Path) -> str:
    """``location`` fit to show: a URL's password (and any ``password=`` parameter) as ``***``."""
    text = str(location)
    if not is_postgres(text):
        return text
    parts = urlsplit(text)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            user = user.split(":", 1)[0] + ":***"
        netloc = f"{user}@{host}"
    query = re.sub(r"(?i)(password=)[^&]*", r"\1***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def shown(location: str | Path) -> str | Path:
    """``location`` as messages name it: a file's path as is, a URL `masked`."""
    return location if isinstance(location, Path) else masked(location)
