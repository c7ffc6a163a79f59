"""Files written in place, without a temp file and a rename, and read before they are finished.

Jarvis's writers write a temp file and rename it into place, so the host never sees half a
document. NanoClaw's worker writes its progress events and steer acks in place
(``writeFileSync``): the host can find such a file empty, or holding the first part of its JSON.
A file the host could only refuse for that (`UNFINISHED_CODES`, and bytes that `may_be_unfinished`)
is left where it is for `WRITE_GRACE_S` from its last change, and read again; still unfinished
after that, it is quarantined like any other refused file (docs/ipc.md).
"""

from __future__ import annotations

#: How long a file that is empty, or not yet a whole JSON object, is left for its writer to
#: finish, counted from its last change, before it is refused (``[watch] write_grace_s``). The
#: writer's next write completes such a file in microseconds; this only has to outlast a pause.
WRITE_GRACE_S = 2.0
#: The refusals a file can earn merely by being read before its writer finished it.
UNFINISHED_CODES = frozenset({"empty", "not_json", "not_utf8"})

_BOM = b"\xef\xbb\xbf"


def may_be_unfinished(code: str, data: bytes) -> bool:
    """Whether a file refused with ``code`` could be a JSON object its writer has not finished.

    Only a parse refusal of bytes that are nothing yet (or white space) or the start of an
    object: anything else (plain text, an array) is no object however it ends.
    """
    if code not in UNFINISHED_CODES:
        return False
    head = data.removeprefix(_BOM).lstrip(b" \t\r\n")
    return not head or head.startswith(b"{")
