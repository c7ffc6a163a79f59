"""The worker's side of the protocol (docs/ipc.md): its environment, and how it writes its files.

Every worker Jarvis ships reads the same environment and writes its events and acknowledgements
the same way: the agent runner (`core.agents.runner`) and the simulated worker
(`jarvis_sim.simworker`), which adds its own ``JARVIS_SIM_*`` knobs on top of `WorkerConfig`.

``JARVIS_RUN_ID``, ``JARVIS_LANE``, ``JARVIS_PROGRESS_DIR``, ``JARVIS_STEER_FILE`` and
``JARVIS_ACK_FILE`` are required, and the dispatch: ``JARVIS_DISPATCH`` (its JSON text) or
``JARVIS_DISPATCH_FILE`` (a file holding it). The host always writes the file, and sets the
variable too when the text is small enough (`INLINE_MAX`): a single environment string is
limited to 128 KiB by Linux, and a dispatch past it made every start fail with "Argument list
too long". ``JARVIS_CRITERIA`` / ``JARVIS_CRITERIA_FILE`` the same way, for the run's criteria
(none by default). ``JARVIS_ATTEMPT`` defaults to 1.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.contracts.names import run_id_problem

#: The lines around a completion block on a worker's stdout.
OUTPUT_START = "---NANOCLAW_OUTPUT_START---"
OUTPUT_END = "---NANOCLAW_OUTPUT_END---"

REQUIRED_ENV = (
    "JARVIS_RUN_ID",
    "JARVIS_LANE",
    "JARVIS_PROGRESS_DIR",
    "JARVIS_STEER_FILE",
    "JARVIS_ACK_FILE",
)
#: The longest JSON text the host also passes in a variable (the file always holds it): well
#: under Linux's 128 KiB for one environment string, with room for the rest of the environment.
INLINE_MAX = 32 * 1024

_LANE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class ConfigError(Exception):
    """A missing or invalid environment variable; the message is one line for stderr."""


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """Everything a worker takes from its environment."""

    run_id: str
    lane: str
    attempt: int
    dispatch: dict[str, Any]
    progress_dir: Path
    steer_file: Path
    ack_file: Path
    criteria: tuple[dict[str, Any], ...] = ()
    """The run's acceptance criteria (``JARVIS_CRITERIA``): what the host will verify."""
    dispatch_file: Path | None = None
    """Where the whole dispatch is written (``JARVIS_DISPATCH_FILE``), when the host said."""


def load_worker_config(env: Mapping[str, str]) -> WorkerConfig:
    """Read and check the worker's environment.

    Raises:
        ConfigError: a required variable is missing or blank, or a value is invalid.
    """
    missing = [name for name in REQUIRED_ENV if not env.get(name, "").strip()]
    if not (env.get("JARVIS_DISPATCH", "").strip() or env.get("JARVIS_DISPATCH_FILE", "").strip()):
        missing.append("JARVIS_DISPATCH (or JARVIS_DISPATCH_FILE)")
    if missing:
        raise ConfigError(f"missing environment variable(s): {', '.join(missing)}")
    run_id = env["JARVIS_RUN_ID"]
    problem = run_id_problem(run_id)
    if problem:
        raise ConfigError(f"JARVIS_RUN_ID is invalid: {problem[1]}")
    lane = env["JARVIS_LANE"]
    if not _LANE.fullmatch(lane):
        raise ConfigError(f"JARVIS_LANE must be a plain folder name, not {lane!r}")
    raw_attempt = env.get("JARVIS_ATTEMPT", "").strip() or "1"
    if not raw_attempt.isdigit() or int(raw_attempt) < 1:
        raise ConfigError(f"JARVIS_ATTEMPT must be a positive integer, not {raw_attempt!r}")
    dispatch = _json_from(env, "JARVIS_DISPATCH", "{}")
    if not isinstance(dispatch, dict):
        raise ConfigError("JARVIS_DISPATCH must be a JSON object")
    dispatch_run_id = dispatch.get("run_id")
    if isinstance(dispatch_run_id, str) and dispatch_run_id != run_id:
        # The completion is gated against the dispatch's run_id and progress against the folder's;
        # a worker given both cannot satisfy both, so refuse instead of failing later.
        raise ConfigError(
            f"JARVIS_RUN_ID {run_id!r} does not match the dispatch's run_id {dispatch_run_id!r}"
        )
    criteria = _json_from(env, "JARVIS_CRITERIA", "[]")
    if not isinstance(criteria, list):
        raise ConfigError("JARVIS_CRITERIA must be a JSON list")
    return WorkerConfig(
        run_id=run_id,
        lane=lane,
        attempt=int(raw_attempt),
        dispatch=dispatch,
        progress_dir=Path(env["JARVIS_PROGRESS_DIR"]),
        steer_file=Path(env["JARVIS_STEER_FILE"]),
        ack_file=Path(env["JARVIS_ACK_FILE"]),
        criteria=tuple(c for c in criteria if isinstance(c, dict)),
        dispatch_file=Path(file) if (file := env.get("JARVIS_DISPATCH_FILE", "")) else None,
    )


def _json_from(env: Mapping[str, str], name: str, default: str) -> Any:
    """The JSON of variable ``name``, else of the file ``<name>_FILE`` names, else ``default``."""
    text = env.get(name, "").strip()
    where = name
    if not text and (path := env.get(f"{name}_FILE", "").strip()):
        where = f"{name}_FILE ({path})"
        try:
            text = Path(path).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{where} cannot be read: {exc}") from None
    try:
        return json.loads(text or default)
    except ValueError as exc:
        raise ConfigError(f"{where} is not JSON: {exc}") from None


def worker_inputs(
    env: dict[str, str], folder: Path, dispatch: Mapping[str, Any], criteria: list[Any]
) -> None:
    """Give a worker its dispatch and criteria: each in a file in ``folder`` (``*_FILE``), and
    in its variable as well when small (`INLINE_MAX`)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, value, file_name in (
        ("JARVIS_DISPATCH", dispatch, "dispatch.json"),
        ("JARVIS_CRITERIA", criteria, "criteria.json"),
    ):
        text = json.dumps(value, sort_keys=True)
        path = folder / file_name
        path.write_text(text, "utf-8")
        env[f"{name}_FILE"] = str(path)
        if len(text.encode("utf-8")) <= INLINE_MAX:
            env[name] = text
        else:
            env.pop(name, None)  # never a stale or inherited one beside the file


def write_json_atomic(path: Path, doc: Mapping[str, Any]) -> None:
    """Write ``doc`` to ``path`` via a ``.<name>.tmp`` sibling and a rename.

    Readers skip names that start with ``.``, and a rename within a directory is atomic, so a
    reader sees the whole file or nothing. No fsync: the host reads the files live, and an event
    lost in a power cut is one line of progress, not the run's outcome.
    """
    data = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def iso_ms(epoch_ms: int) -> str:
    """``epoch_ms`` as an ISO-8601 UTC timestamp with milliseconds and a ``Z``."""
    whole = datetime.fromtimestamp(epoch_ms // 1000, tz=UTC)
    return f"{whole:%Y-%m-%dT%H:%M:%S}.{epoch_ms % 1000:03d}Z"
