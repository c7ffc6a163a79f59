"""Driving real processes from tests: everything they write is read, whatever the test does.

A process writing to a pipe or a pseudo-terminal blocks once the kernel's buffer is full (64 KiB
for a pipe, a few KiB for a terminal) until somebody reads. A test that stops reading to wait
for the process, to look at the store or to send it a key can so deadlock with the very process
it waits for: the console's last frame after ``q`` is larger than a terminal's buffer. Here a
thread reads each stream from the start to its end, and the test looks at what was read.

Every wait in here polls a condition under `HANG_GUARD_S`, a deadline that only stops a hung
test from hanging forever: it is never how long something is allowed to take.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TypeVar

T = TypeVar("T")

#: Seconds before a wait gives up: far beyond anything a loaded machine needs, so reaching it
#: means the awaited thing is not coming, not that the machine was slow.
HANG_GUARD_S = 120.0

_READ_CHUNK = 65536
_SELECT_S = 0.1


def wait_until(
    predicate: Callable[[], T | None],
    what: str,
    *,
    timeout: float = HANG_GUARD_S,
    describe: Callable[[], str] | None = None,
    interval: float = 0.02,
) -> T:
    """Poll ``predicate`` until it returns something truthy, and return that.

    Raises:
        AssertionError: nothing truthy within ``timeout`` seconds; the message says what was
            awaited and, if given, what ``describe()`` says about the state of things.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            detail = f"\n{describe()}" if describe else ""
            raise AssertionError(f"gave up after {timeout:g} s waiting for {what}{detail}")
        time.sleep(interval)


class StreamReader:
    """Reads one file descriptor on a thread until end of file, keeping every byte.

    A pseudo-terminal's leader reports the end as EIO once every holder of the other side has
    closed it; that counts as end of file. ``on_chunk``, if given, is called on the reading
    thread with each chunk and the monotonic time it arrived (benchmarks time output with it).
    """

    def __init__(
        self,
        fd: int,
        name: str,
        *,
        on_chunk: Callable[[bytes, float], None] | None = None,
    ) -> None:
        self._fd = fd
        self._on_chunk = on_chunk
        self._data = bytearray()
        self._keep = True
        self._ended = False
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name=name, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while not self._stop.is_set():
                # select, not a blocking read: `stop` must end the thread even while a process
                # outside the test's control still holds the other side open.
                ready, _, _ = select.select([self._fd], [], [], _SELECT_S)
                if not ready:
                    continue
                try:
                    chunk = os.read(self._fd, _READ_CHUNK)
                except OSError:
                    return  # EIO from a terminal whose other side is closed: the end
                if not chunk:
                    return
                if self._on_chunk is not None:
                    self._on_chunk(chunk, time.monotonic())
                with self._changed:
                    if self._keep:
                        self._data += chunk
                    self._changed.notify_all()
        finally:
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    @property
    def ended(self) -> bool:
        """Whether the stream reached its end (every writer closed it)."""
        with self._changed:
            return self._ended

    def data(self) -> bytes:
        """Everything read so far."""
        with self._changed:
            return bytes(self._data)

    def forget(self) -> None:
        """Stop keeping what is read (it is still read, and still passed to ``on_chunk``)."""
        with self._changed:
            self._keep = False
            self._data.clear()

    def wait(self, predicate: Callable[[bytes], bool], timeout: float) -> bool:
        """Wait until ``predicate(data)`` holds; False if the stream ended or time ran out first."""
        with self._changed:
            return self._changed.wait_for(
                lambda: predicate(bytes(self._data)) or self._ended, timeout
            ) and predicate(bytes(self._data))

    def wait_ended(self, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._ended, timeout)

    def stop(self) -> None:
        """End the reading thread (at once if the stream ended, else within one select)."""
        self._stop.set()
        self._thread.join()


def _matcher(expected: bytes | Callable[[bytes], bool]) -> Callable[[bytes], bool]:
    if isinstance(expected, bytes):
        return lambda data: expected in data
    return expected


def _tail(data: bytes, size: int = 3000) -> str:
    return data[-size:].decode("utf-8", "replace")


class PtyProcess:
    """A command on a pseudo-terminal of ``cols`` × ``rows``, its output read until it ends.

    The command leads its own session (``start_new_session``), so `close` can end everything
    it started with one signal to its process group.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cols: int = 100,
        rows: int = 30,
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
        on_chunk: Callable[[bytes, float], None] | None = None,
        stdin: int | None = None,
    ) -> None:
        """``stdin``: what the command reads instead of the terminal (``subprocess.DEVNULL``)."""
        # The terminal's size is the one set below: COLUMNS and LINES would override it.
        env = {k: v for k, v in (os.environ if env is None else env).items()
               if k not in ("COLUMNS", "LINES")}  # fmt: skip
        leader, follower = os.openpty()
        try:
            fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            self.started = time.monotonic()
            """When the command was spawned (benchmarks time its first paint from here)."""
            self.proc = subprocess.Popen(
                list(argv), stdin=follower if stdin is None else stdin, stdout=follower,
                stderr=follower,
                env=env, cwd=cwd, start_new_session=True,
            )  # fmt: skip
        except BaseException:
            os.close(leader)
            raise
        finally:
            os.close(follower)  # the child has its own copies; ours would keep the end away
        self._leader = leader
        self._closed = False
        self.reader = StreamReader(leader, f"pty-{self.proc.pid}", on_chunk=on_chunk)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def output(self) -> bytes:
        """Everything the command wrote to the terminal so far."""
        return self.reader.data()

    def tail(self, size: int = 3000) -> str:
        return _tail(self.output, size)

    def write(self, data: bytes) -> None:
        """Type ``data`` at the terminal."""
        os.write(self._leader, data)

    def wait_for(
        self, expected: bytes | Callable[[bytes], bool], what: str, timeout: float = HANG_GUARD_S
    ) -> bytes:
        """Wait until the output holds ``expected`` (bytes, or a test on all the output so far).

        Raises:
            AssertionError: the command ended, or ``timeout`` passed, first; with the output's end.
        """
        if not self.reader.wait(_matcher(expected), timeout):
            why = "the terminal was closed" if self.reader.ended else f"{timeout:g} s passed"
            raise AssertionError(f"{what} never showed ({why}):\n{self.tail()}")
        return self.output

    def wait(self, timeout: float = HANG_GUARD_S) -> int:
        """Wait for the command to exit, reading its output all the while, and for the output's
        end; the exit code.

        Raises:
            AssertionError: it did not exit within ``timeout``.
        """
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the command did not exit within {timeout:g} s:\n{self.tail()}"
            ) from None
        # Its last frame may still be in the terminal; a child it left holding the terminal
        # would keep the end away, and is `close`'s to deal with.
        self.reader.wait_ended(min(timeout, 10.0))
        return code

    def close(self) -> None:
        """Kill whatever of the command's process group still runs; stop reading; let go."""
        if self._closed:
            return
        self._closed = True
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
        self.reader.stop()
        os.close(self._leader)

    def __enter__(self) -> PtyProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class PipedProcess:
    """A command whose stdout and stderr are pipes, each read on its own thread until it ends.

    Use it instead of ``subprocess.Popen(..., stdout=PIPE)`` whenever the test does anything
    but read while the command runs: the command can then never block on a full pipe.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
        stdin: int | None = subprocess.DEVNULL,
        start_new_session: bool = False,
    ) -> None:
        self.proc = subprocess.Popen(
            list(argv), stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=None if env is None else dict(env), cwd=cwd, start_new_session=start_new_session,
        )  # fmt: skip
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._out = StreamReader(self.proc.stdout.fileno(), f"stdout-{self.proc.pid}")
        self._err = StreamReader(self.proc.stderr.fileno(), f"stderr-{self.proc.pid}")
        self._lines_taken = 0
        self._closed = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    @property
    def stdout(self) -> str:
        """Everything written to stdout so far."""
        return self._out.data().decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        """Everything written to stderr so far."""
        return self._err.data().decode("utf-8", "replace")

    def _describe(self, stream: StreamReader | None = None, timeout: float = 0.0) -> str:
        if stream is None:
            why = ""
        elif stream.ended:
            why = " (it was closed)"
        else:
            why = f" ({timeout:g} s passed)"
        return f"{why}\nstdout:\n{_tail(self._out.data())}\nstderr:\n{_tail(self._err.data())}"

    def wait_for_stdout(
        self, expected: bytes | Callable[[bytes], bool], what: str, timeout: float = HANG_GUARD_S
    ) -> str:
        """Wait until stdout holds ``expected``; all of stdout so far."""
        if not self._out.wait(_matcher(expected), timeout):
            raise AssertionError(
                f"{what} never showed on stdout{self._describe(self._out, timeout)}"
            )
        return self.stdout

    def wait_for_stderr(
        self, expected: bytes | Callable[[bytes], bool], what: str, timeout: float = HANG_GUARD_S
    ) -> str:
        """Wait until stderr holds ``expected``; all of stderr so far."""
        if not self._err.wait(_matcher(expected), timeout):
            raise AssertionError(
                f"{what} never showed on stderr{self._describe(self._err, timeout)}"
            )
        return self.stderr

    def next_line(self, what: str = "a line", timeout: float = HANG_GUARD_S) -> str:
        """The next whole line of stdout not yet taken (without its newline), as ``readline``
        would give it, but with a deadline."""
        wanted = self._lines_taken + 1
        self.wait_for_stdout(lambda data: data.count(b"\n") >= wanted, what, timeout)
        line = self._out.data().split(b"\n")[self._lines_taken]
        self._lines_taken = wanted
        return line.decode("utf-8", "replace")

    def send_signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def wait(self, timeout: float = HANG_GUARD_S) -> int:
        """Wait for the command to exit and for both its streams to end; its exit code.

        Raises:
            AssertionError: it did not exit within ``timeout``.
        """
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the command did not exit within {timeout:g} s{self._describe()}"
            ) from None
        # A child that inherited the pipes may hold them open after the command exited.
        self._out.wait_ended(min(timeout, 10.0))
        self._err.wait_ended(min(timeout, 10.0))
        return code

    def communicate(self, timeout: float = HANG_GUARD_S) -> tuple[str, str]:
        """`wait`, then everything written to stdout and stderr."""
        self.wait(timeout)
        return self.stdout, self.stderr

    def close(self) -> None:
        """Kill the command if it still runs; stop reading; close the pipes."""
        if self._closed:
            return
        self._closed = True
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._out.stop()
        self._err.stop()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdout.close()
        self.proc.stderr.close()

    def __enter__(self) -> PipedProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
