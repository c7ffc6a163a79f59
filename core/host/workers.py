"""Worker processes: start one per run, capture its output within bounds, end it on time.

Each worker runs in its own process group (so stopping it stops whatever it started) with the
IPC paths in its environment (docs/ipc.md). Two reader threads copy stdout and stderr to the
attempt's log files (`core.worker_logs.RotatingLog`: renamed aside at a size, the oldest
dropped, so disk use is bounded and the latest output kept) and keep the most recent
`KEEP_BYTES` of stdout in memory (the completion block comes at the end) and
`STDERR_KEEP_BYTES` of stderr (where a crash says why): memory stays bounded however much a
worker prints.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from core.host.sandbox import signal_confined
from core.ipc.worker_env import worker_inputs
from core.nanoclaw.frames import FrameDecoder
from core.worker_logs import RotatingLog

#: How much of a worker's stdout is kept in memory for finding its completion block.
KEEP_BYTES = 4 * 1024 * 1024
#: How much of a worker's stderr is kept in memory, for the end of it that the store keeps.
STDERR_KEEP_BYTES = 64 * 1024
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class WorkerPaths:
    ipc_dir: Path
    progress_dir: Path
    steer_file: Path
    ack_file: Path
    log_dir: Path
    """The attempt's log folder (`core.worker_logs.attempt_dir`)."""


class _Tail:
    """The last ``limit`` bytes written to it (and how many were written in all)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.total = 0

    def add(self, data: bytes) -> None:
        self._chunks.append(data)
        self._size += len(data)
        self.total += len(data)
        while self._size > self.limit and self._chunks:
            dropped = self._chunks.popleft()
            self._size -= len(dropped)

    def value(self) -> bytes:
        return b"".join(self._chunks)


@dataclass
class WorkerProcess:
    """One running worker and what it has said so far."""

    run_id: str
    lane: str
    process: subprocess.Popen[bytes]
    started: float
    last_output: float
    stdout_tail: _Tail = field(default_factory=lambda: _Tail(KEEP_BYTES))
    stderr_tail: _Tail = field(default_factory=lambda: _Tail(STDERR_KEEP_BYTES))
    attempt: int = 1
    """The run's attempt this worker works on (its retry_count + 1 when started)."""
    threads: list[threading.Thread] = field(default_factory=list)
    stop_requested: str | None = None
    """Why the host is ending it (timeout, cancel, shutdown), or None."""
    term_sent_at: float | None = None
    interrupt_sent_at: float | None = None
    frames: FrameDecoder | None = None
    """A NanoClaw runner's output frames, decoded as its stdout arrives (None for others)."""
    close_requested_at: float | None = None
    """When the host asked a NanoClaw runner to end (``input/_close``)."""
    confined: bool = False
    """It runs in the bubblewrap sandbox, whose outer process leads its group
    (`core.host.sandbox`): the gentler signals spare that process."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def pid(self) -> int:
        return self.process.pid

    def touch(self) -> None:
        """Record activity (output or a progress event): it resets the no-output clock."""
        self.last_output = time.monotonic()

    def _pump(
        self, stream: IO[bytes], log: RotatingLog, tail: _Tail, frames: FrameDecoder | None
    ) -> None:
        try:
            while True:
                chunk = stream.read1(_CHUNK) if hasattr(stream, "read1") else stream.read(_CHUNK)
                if not chunk:
                    break
                self.touch()
                with self._lock:
                    tail.add(chunk)
                if frames is not None:
                    frames.feed(chunk)
                log.write(chunk)  # never raises: a full disk must not stop the pipe's reading
        finally:
            log.close()

    def output(self) -> bytes:
        with self._lock:
            return self.stdout_tail.value()

    def stderr(self) -> tuple[bytes, int]:
        """The end of what the worker wrote to stderr, and how many bytes it wrote in all."""
        with self._lock:
            return self.stderr_tail.value(), self.stderr_tail.total

    def wait_for_output(self, timeout: float = 5.0) -> None:
        """After the process exits, let the readers drain what is left in the pipes."""
        for thread in self.threads:
            thread.join(timeout)

    def terminate(self, reason: str) -> None:
        """Ask the worker's process group to stop (SIGTERM); `kill` follows after a grace."""
        if self.stop_requested is None:
            self.stop_requested = reason
        if self.term_sent_at is None:
            self.term_sent_at = time.monotonic()
            self._ask(signal.SIGTERM)

    def interrupt(self, reason: str) -> None:
        """Ask the worker to wrap up (SIGINT, as a person's ctrl-c); `terminate` follows after a
        grace if it does not."""
        if self.stop_requested is None:
            self.stop_requested = reason
        if self.interrupt_sent_at is None and self.term_sent_at is None:
            self.interrupt_sent_at = time.monotonic()
            self._ask(signal.SIGINT)

    def _ask(self, sig: signal.Signals) -> None:
        if self.confined:
            signal_confined(self.process.pid, sig)
        else:
            _signal_group(self.process.pid, sig)

    def kill(self) -> None:
        _signal_group(self.process.pid, signal.SIGKILL)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def worker_env(
    base: Mapping[str, str],
    *,
    run_id: str,
    lane: str,
    attempt: int,
    dispatch: Mapping[str, Any],
    criteria: list[Any],
    paths: WorkerPaths,
) -> dict[str, str]:
    """The worker's environment; its dispatch and criteria are also written to its attempt's
    folder (`worker_inputs`: a large dispatch cannot go in a variable)."""
    env = dict(base)
    worker_inputs(env, paths.log_dir, dispatch, criteria)
    env.update(
        JARVIS_RUN_ID=run_id,
        JARVIS_LANE=lane,
        JARVIS_ATTEMPT=str(attempt),
        JARVIS_IPC_DIR=str(paths.ipc_dir),
        JARVIS_PROGRESS_DIR=str(paths.progress_dir),
        JARVIS_STEER_FILE=str(paths.steer_file),
        JARVIS_ACK_FILE=str(paths.ack_file),
    )
    return env


def program_from(command: Sequence[str], workspace_root: Path) -> list[str]:
    """``command`` with a relative program path (``./bin/worker``) made the workspace's: the
    worker runs in its checkout, but jarvis.toml is written from the workspace."""
    program = command[0]
    if os.sep in program and not os.path.isabs(program):
        return [str(workspace_root / program), *command[1:]]
    return list(command)


def start_worker(
    command: Sequence[str],
    *,
    run_id: str,
    lane: str,
    env: Mapping[str, str],
    cwd: Path,
    paths: WorkerPaths,
    stdin: bytes | None = None,
    frames: FrameDecoder | None = None,
) -> WorkerProcess:
    """Start a worker. Raises OSError when the command cannot be started.

    Args:
        stdin: written to the worker's stdin (on a thread of its own: a worker that does not
            read must not block the host), which is then closed; None: stdin is /dev/null.
        frames: fed the worker's stdout as it arrives (a NanoClaw runner's output frames).
    """
    paths.log_dir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: stopping it stops its children too
    )
    now = time.monotonic()
    worker = WorkerProcess(run_id, lane, process, started=now, last_output=now, frames=frames)
    assert process.stdout is not None and process.stderr is not None
    for stream, name, tail, decoder in (
        (process.stdout, "stdout.log", worker.stdout_tail, frames),
        (process.stderr, "stderr.log", worker.stderr_tail, None),
    ):
        thread = threading.Thread(
            target=worker._pump,
            args=(stream, RotatingLog(paths.log_dir / name), tail, decoder),
            name=f"worker-{name}-{run_id}",
            daemon=True,
        )
        thread.start()
        worker.threads.append(thread)
    if stdin is not None:
        assert process.stdin is not None
        feeder = threading.Thread(
            target=_feed, args=(process.stdin, stdin), name=f"worker-stdin-{run_id}", daemon=True
        )
        feeder.start()
    return worker


def _feed(stream: IO[bytes], data: bytes) -> None:
    """Write ``data`` to a worker's stdin and close it; a worker that exits first is no fault."""
    try:
        stream.write(data)
        stream.flush()
    except OSError:  # BrokenPipeError: it did not read it all
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


def is_worker_of(pid: int, run_id: str) -> bool:
    """Whether ``pid`` is still a worker process for ``run_id`` (pids are reused, so check)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"JARVIS_RUN_ID={run_id}".encode() in environ.split(b"\0")
