"""Reading an OpenClaw results folder for the risk gate (`core.contracts.risk_gate`).

Artifacts are opened without following links and read to a cap; a read that fails, and a
``status.json`` that is missing or invalid, become findings (and errors, for what the contract
requires). `Collector` is where every finding of one gate goes: at most a few per code, the rest
counted.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from pydantic import ValidationError

from core.contracts import jsondoc
from core.contracts.errors import ROOT, FieldError, join_path, preview
from core.contracts.pydantic_errors import from_validation_error
from core.contracts.risk_tables import FINDINGS, STATUS_CAP, Finding, StatusDoc

_PER_CODE_LIMIT: Final = 25
"""Findings kept per code; the rest are summarised in one more finding."""


@dataclass(slots=True)
class Collector:
    findings: list[Finding] = field(default_factory=list)
    errors: list[FieldError] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    seen: set[tuple[str, str | None, int | None]] = field(default_factory=set)

    def add(
        self, code: str, message: str, path: str | None = None, line: int | None = None
    ) -> None:
        key = (code, path, line)
        if path is not None and key in self.seen:
            return
        self.seen.add(key)
        self.counts[code] += 1
        if self.counts[code] <= _PER_CODE_LIMIT:
            self.findings.append(Finding(code, FINDINGS[code][0], message, path, line))

    def done(self) -> list[Finding]:
        out = list(self.findings)
        for code, count in self.counts.items():
            if count > _PER_CODE_LIMIT:
                extra = count - _PER_CODE_LIMIT
                out.append(Finding(code, FINDINGS[code][0], f"…and {extra:,} more like this."))
        out.sort(key=lambda f: -f.level)  # stable: discovery order within a level
        return out


@dataclass(frozen=True, slots=True)
class Read:
    state: Literal["ok", "missing", "symlink", "not_file", "too_large", "unreadable"]
    data: bytes = b""
    size: int = 0


def read_artifact(folder: Path, name: str, cap: int) -> Read:
    path = folder / name
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return Read("missing")
    except OSError:
        return Read("unreadable")
    if stat.S_ISLNK(st.st_mode):
        return Read("symlink")
    if not stat.S_ISREG(st.st_mode):
        return Read("not_file")
    if st.st_size > cap:
        return Read("too_large", size=st.st_size)
    # O_NOFOLLOW closes the gap between lstat and open; O_NONBLOCK keeps a FIFO swapped in
    # meanwhile from hanging the open.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return Read("unreadable")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Read("not_file")
        chunks: list[bytes] = []
        remaining = cap + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError:
        return Read("unreadable")
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap:
        return Read("too_large", size=len(data))
    return Read("ok", data=data, size=len(data))


def artifact_problem(out: Collector, name: str, read: Read, cap: int, *, required: bool) -> None:
    """Turn a failed read into a finding (and an error, for required artifacts)."""
    if read.state == "ok":
        return
    if read.state == "missing":
        code = "report_missing" if name == "report.md" else "patch_missing"
        out.add(code, f"{name} is missing; the contract requires it.", name)
        out.errors.append(FieldError(name, "required", f"{name} is required."))
        return
    if read.state == "symlink":
        out.add("artifact_symlink", f"{name} is a symlink; it was not followed or read.", name)
        code = "symlink"
    elif read.state == "not_file":
        out.add("artifact_not_file", f"{name} is not a regular file.", name)
        code = "not_file"
    elif read.state == "too_large":
        if required:
            out.add(
                "artifact_too_large",
                f"{name} is {read.size:,} bytes or more; the cap is {cap:,}, so it was not read.",
                name,
            )
        else:
            out.add(
                "log_too_large",
                f"{name} is over {cap:,} bytes, so it was not scanned for secrets.",
                name,
            )
            return
        code = "too_large"
    else:
        out.add("artifact_unreadable", f"{name} could not be read.", name)
        code = "unreadable"
    if required:
        out.errors.append(FieldError(name, code, f"{name} could not be used ({code})."))


def load_status(out: Collector, read: Read, task_id: str | None) -> StatusDoc | None:
    if read.state == "missing":
        out.add(
            "status_missing",
            "status.json is missing, so the worker's own outcome is unknown.",
            "status.json",
        )
        return None
    if read.state != "ok":
        artifact_problem(out, "status.json", read, STATUS_CAP, required=True)
        return None
    loaded = jsondoc.load_object(read.data, limit=STATUS_CAP)
    errors: list[FieldError]
    status: StatusDoc | None = None
    if not loaded.ok:
        errors = list(loaded.errors)
    else:
        try:
            status = StatusDoc.model_validate(loaded.value)
            errors = []
        except ValidationError as exc:
            errors = from_validation_error(exc)
    if errors:
        for err in errors:
            name = "status.json" if err.field == ROOT else join_path("status.json", err.field)
            out.errors.append(FieldError(name, err.code, f"status.json: {err.message}"))
        first = errors[0]
        out.add("status_invalid", f"status.json is invalid: {first.message}", "status.json")
        return None
    assert status is not None
    if task_id is not None and status.task_id != task_id:
        out.errors.append(
            FieldError(
                "status.json.task_id",
                "task_mismatch",
                f"status.json.task_id {preview(status.task_id)} is not the request's "
                f"{preview(task_id)}.",
            )
        )
        out.add(
            "status_task_mismatch",
            f"status.json is for task {preview(status.task_id)}, not {preview(task_id)}.",
            "status.json",
        )
    return status
