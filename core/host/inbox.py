"""The host's inbox: the IPC tree's files, watched and swept, ingested in batches.

On Linux the tree is watched with inotify and read on the host's own thread
(`core.ipc.tree_watch`): the loop's wait ends when a file comes, and the drain ingests what was
reported. Elsewhere a watcher thread (watchfiles) feeds paths into a queue the drain empties.
A sweep still runs every second to pick up anything a watcher could miss (and every tick when
polling). The effect of one file is `core.host.ingest`'s.
"""

from __future__ import annotations

import logging
import os
import queue
import select
import stat
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import watchfiles

from core.contracts.errors import preview
from core.host import checkouts
from core.host.faults import io_fault
from core.host.ingest import Ingested, Ingestor
from core.host.openclaw import gate_finished_results, ingest_requests
from core.host.shared import Shared
from core.ipc.layout import HOST_SNAPSHOTS
from core.ipc.tree_watch import TreeWatch
from core.text import inert
from core.workspace import lane_problem

log = logging.getLogger("jarvis.host")

BATCH = 256
"""Files ingested per transaction: one commit for many files is where the ingest rate comes from."""


STREAM_S = 0.05
"""A file that comes within this of the drain's last files is taken as part of a stream: the
drain then waits `GATHER_S` for more before ingesting. A lone file is ingested at once."""
GATHER_S = 0.01
"""How long a drain in a stream waits for more files: at 1,000 files a second a batch of one
or two files paid a transaction, and each run's reads, for each file."""

SETTLED_S = 2.0
"""While the watcher runs, the sweep takes only files older than this: a younger one is the
watcher's to report (its queue holds it, or will within milliseconds), and a sweep that raced
the watcher for every new file did most of the ingesting, each file listed and read twice."""


def json_files(
    path: Path, *, settled_before: float | None = None, skip: set[str] | None = None
) -> Iterator[Path]:
    """The event files in one folder (hidden ones are a writer's temporaries); with
    ``settled_before`` (a time), only those last changed before it, or oddly far after it (a
    clock set back must not hide a file from the sweep for good); none named in ``skip``."""
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.name.endswith(".json") and not entry.name.startswith("."):
                    if skip is not None and entry.path in skip:
                        continue
                    if settled_before is not None and not _settled(entry, settled_before):
                        continue
                    yield Path(entry.path)
    except OSError:
        return


def _settled(entry: os.DirEntry[str], before: float) -> bool:
    try:
        changed = entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return True  # gone or unreadable: the ingest says which
    return changed < before or changed > before + 2 * SETTLED_S + 60


class Inbox:
    """Files into the store. `ingestor` is set once the store is open (`Host.run`)."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared
        self.layout = shared.layout
        self.paths: queue.SimpleQueue[Path] = queue.SimpleQueue()
        """What the watcher thread saw (watchfiles, where inotify is not had), for the drain."""
        self.tree: TreeWatch | None = None
        """The inotify watch on the tree, read by the drain itself (Linux)."""
        self._wake_r, self._wake_w = os.pipe()
        """A byte written here ends the drain's wait: a stop, or the watcher thread's paths."""
        for fd in (self._wake_r, self._wake_w):
            os.set_blocking(fd, False)
        weakref.finalize(self, _close_all, self._wake_r, self._wake_w)
        self.missed = False
        """The watch lost events (the kernel's queue overflowed): the next sweep is due now,
        and whole."""
        self._last_files = 0.0
        self.reported: set[str] = set()
        """The paths on the queue: a sweep leaves them to the drain, so each file is read once,
        on the watcher's path, and the sweep only takes what the watcher missed. (Set and queue
        are changed by single operations, atomic under the GIL; a path caught between the two
        is read twice at worst, and its receipt makes the second read a no-op.) Strings, as the
        sweep's listing gives them: it skips them before any system call or path object."""
        self.ingestor: Ingestor | None = None
        self._watcher: threading.Thread | None = None
        self.watching = False
        """Whether the watcher runs (then the sweep is its safety net: `SETTLED_S`)."""
        self._whole_sweep = True
        """The next sweep takes young files too: at start-up, and after `forget_queued`."""

    def wake(self) -> None:
        """Wake a loop waiting for paths now (safe from a signal handler).

        A host once sat in that wait for two minutes past its SIGTERM, its other threads
        already gone. A write to a pipe is safe there, and from any thread.
        """
        try:
            os.write(self._wake_w, b"\0")
        except OSError:
            pass  # the pipe is full (the loop is already awake) or closed (the inbox is done)

    def forget_queued(self) -> None:
        """Drop the paths the watcher reported: the files are still on disk, and the first
        sweep after a fault finds them all (nothing piles up in memory meanwhile)."""
        while True:
            try:
                self.paths.get_nowait()
            except queue.Empty:
                break
        self.reported.clear()
        self._whole_sweep = True

    def start_watcher(self, *, inotify: bool = True) -> None:
        """Watch the tree: with inotify where the system has it (``inotify=False``: the
        watchfiles thread, as elsewhere), so a file is ingested as it comes."""
        if inotify and TreeWatch.supported():
            self.tree = TreeWatch.open(str(self.layout.root))
            # Without a complete watch (no inotify left), every sweep takes every file.
            self.watching = self.tree is not None and self.tree.complete
            if self.tree is not None and not self.tree.complete:
                log.warning("the IPC tree is watched in part: the sweep takes every file")
            return
        root = self.layout.root

        def interesting(change: watchfiles.Change, path: str) -> bool:
            name = os.path.basename(path)
            if change == watchfiles.Change.added and not name.endswith(".json"):
                return not name.startswith(".") and _real_dir(Path(path), None)
            return (
                change != watchfiles.Change.deleted
                and name.endswith(".json")
                and not (name.startswith("."))
                # The host's own snapshots at the top of a lane, rewritten every few seconds.
                and not (
                    name in HOST_SNAPSHOTS and os.path.dirname(os.path.dirname(path)) == str(root)
                )
            )

        def watch() -> None:
            # Small debounce and step: an event file should reach the store in milliseconds,
            # not on the next 2-second poll. Each step takes the GIL (watchfiles looks at the
            # stop event), so 5 ms rather than 2; under a flood, a batch every 20 ms at most.
            for changes in watchfiles.watch(
                root,
                watch_filter=interesting,
                debounce=20,
                step=5,
                stop_event=self.shared.stopping,
                rust_timeout=200,
                raise_interrupt=False,
            ):
                for _, name in sorted(changes, key=lambda c: c[1]):
                    path = Path(name)
                    self.reported.add(name)
                    self.paths.put(path)
                self.wake()

        self._watcher = threading.Thread(target=watch, name="ipc-watcher", daemon=True)
        self._watcher.start()
        self.watching = True

    def close(self) -> None:
        """Stop watching (the host's loop has ended)."""
        if self.tree is not None:
            self.tree.close()
            self.tree = None

    def drain(self, *, timeout: float) -> None:
        """Ingest what the watcher reported, waiting up to ``timeout`` for the first file."""
        if not self._wait(timeout):
            return
        batch = self._reported()
        now = time.monotonic()
        if batch and now - self._last_files < STREAM_S and len(batch) < BATCH:
            # In a stream, a moment more makes a batch of the files coming meanwhile.
            select.select([self._wake_r], [], [], GATHER_S)
            batch += self._reported()
        deadline = now + 0.2  # stay responsive to workers under a flood of events
        while batch:
            self._last_files = time.monotonic()
            while len(batch) >= BATCH:
                self.ingest(batch[:BATCH])
                batch = batch[BATCH:]
            if time.monotonic() >= deadline or self.shared.stopping.is_set():
                break
            more = self._reported()
            if not more:
                break
            batch += more
        self.ingest(batch)

    def _wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for a file or a wake-up; whether one came."""
        if not self.paths.empty():
            return True
        waited = [self._wake_r] if self.tree is None else [self._wake_r, self.tree.fileno()]
        try:
            ready, _, _ = select.select(waited, [], [], timeout)
        except InterruptedError:  # pragma: no cover - retried by Python since 3.5
            return True
        return bool(ready)

    def _reported(self) -> list[Path]:
        """The files reported since the last look, without waiting."""
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass
        found: list[Path] = []
        if self.tree is not None:
            names, lost = self.tree.read()
            found = [Path(name) for name in names]
            if lost:
                log.warning("the IPC tree's watch lost events; sweeping the whole tree")
                self.missed = self._whole_sweep = True
        while True:
            try:
                path = self.paths.get_nowait()
            except queue.Empty:
                break
            found += self._files_of(path)
            self.reported.discard(os.fspath(path))
        return found

    def _files_of(self, path: Path) -> list[Path]:
        """A reported file, or the files in a reported new folder.

        A file written into a folder made a moment before may come before the watcher watches
        that folder, and is then never reported: the new folder's files are listed when the
        folder is (not left for the sweep, which takes young files only after `SETTLED_S`).
        """
        if path.name.endswith(".json"):
            return [path]
        found: list[Path] = []
        for folder, subfolders, names in os.walk(path):  # links are not followed
            subfolders.sort()
            found += sorted(
                Path(folder, n) for n in names if n.endswith(".json") and not n.startswith(".")
            )
        return found

    def _ingestor(self) -> Ingestor:
        assert self.ingestor is not None, "the ingestor is made by Host.run"
        return self.ingestor

    def ingest(self, paths: list[Path]) -> None:
        """Ingest a batch of files in one transaction; a file that sets off a bug is moved
        aside alone, so the others still go in."""
        # Names and messages logged here come from files: inert, like everywhere they are shown.
        if not paths:
            return
        try:
            results = self._ingestor().handle_many(paths)
        except Exception as exc:
            if io_fault(exc) is not None:
                raise  # not the files' doing: the loop waits it out, the files stay
            if isinstance(exc, OSError):  # the file system failed us; the sweep tries again
                log.warning("could not ingest %d file(s): %s", len(paths), inert(str(exc)))
                return
            # A fault of ours, set off by some file. Re-raising would crash the host, and a
            # restarted host would meet the same file and crash again: instead find the file,
            # move it aside with the error as its reason, and go on with the others.
            log.exception("ingesting a batch of %d file(s) failed; retrying one by one", len(paths))
            results = [self._ingest_alone(path) for path in paths]
        for path, result in zip(paths, results, strict=True):
            if result.outcome == "quarantined":
                log.warning("quarantined %s (%s)", inert(path.name), inert(result.detail))
            elif result.outcome == "waiting" and result.detail:
                # Written in place and read half-way: the writer's next write or a later sweep
                # finishes it (`[watch] write_grace_s`).
                log.info("waiting for %s (%s)", inert(str(path)), inert(result.detail))

    def _ingest_alone(self, path: Path) -> Ingested:
        try:
            return self._ingestor().handle(path)
        except Exception as exc:
            if io_fault(exc) is not None:
                raise
            if isinstance(exc, OSError):
                log.warning("could not ingest %s: %s", inert(str(path)), inert(str(exc)))
                return Ingested("ignored")
            log.exception("ingesting %s failed; moving it aside", inert(str(path)))
            found = self.layout.classify(path)
            lane = found.lane if found is not None else None
            message = f"the host failed on this file: {type(exc).__name__}: {exc}"
            # A QuarantineError here propagates: the loop waits until the reason can be written.
            return self._ingestor().refuse(path, lane=lane, code="host_error", message=message)

    def take_in_progress(self, lane: str, run_id: str) -> None:
        """Ingest the progress a run's worker wrote, now (it wrote it just before it exited)."""
        self.ingest(sorted(json_files(self.layout.progress_dir(lane, run_id))))

    def event_files(
        self,
        lane_dir: Path | None = None,
        *,
        links: list[Path] | None = None,
        settled_before: float | None = None,
        skip: set[str] | None = None,
    ) -> Iterator[Path]:
        """Every candidate event file on disk, in the order it should be ingested (with
        ``settled_before``, only files last changed before that time: `json_files`).

        A lane, kind or run folder that is a symbolic link is never entered: it is appended to
        ``links`` (when given), for `sweep` to move aside.
        """
        settled = settled_before
        lanes = [lane_dir] if lane_dir else sorted(self._dirs(self.layout.root, links))
        for lane in lanes:
            if lane.name == self.layout.errors_dir.name:
                continue
            if _real_dir(lane / "progress", links):
                for run_dir in sorted(self._dirs(lane / "progress", links)):
                    yield from sorted(json_files(run_dir, settled_before=settled, skip=skip))
            for folder in ("steer", "tasks", "messages"):
                if _real_dir(lane / folder, links):
                    yield from sorted(json_files(lane / folder, settled_before=settled, skip=skip))

    def _dirs(self, path: Path, links: list[Path] | None = None) -> Iterator[Path]:
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        yield Path(entry.path)
                    elif (
                        links is not None
                        and entry.is_symlink()
                        and entry.name != self.layout.errors_dir.name
                    ):
                        links.append(Path(entry.path))
        except OSError:
            return

    def sweep(self) -> None:
        """Ingest everything on disk (start-up, the safety net, and polling mode)."""
        shared = self.shared
        self.missed = False
        self._ingestor().forget_gone()
        batch: list[Path] = []
        links: list[Path] = []
        # While the watcher runs, the sweep is the safety net for what it missed (`SETTLED_S`).
        settled = time.time() - SETTLED_S if self.watching and not self._whole_sweep else None
        self._whole_sweep = False
        # What the watcher reported is the drain's to read, once: left out before it is looked at.
        skip = self.reported if self.watching else None
        for path in self.event_files(links=links, settled_before=settled, skip=skip):
            batch.append(path)
            if len(batch) >= BATCH:
                self.ingest(batch)
                batch = []
        self.ingest(batch)
        for link in links:
            self._refuse_link(link)
        # OpenClaw requests and results live outside the IPC tree and are swept, not watched.
        root = shared.workspace.root
        ingest_requests(shared.store, root, self.layout.errors_dir)
        gate_finished_results(
            shared.store,
            root,
            lambda request: checkouts.openclaw_change(shared.config, root, request),
            unchecked_may_review=shared.config.git.unverified_may_review,
        )

    def _refuse_link(self, link: Path) -> None:
        """Move aside a folder of the IPC tree that is a symbolic link, never entering it.

        Whatever it points at may be anyone's files; reading them as the lane's events would let
        a lane speak for another folder, and writing into it would put the host's files there.
        """
        parts = link.relative_to(self.layout.root).parts
        lane = parts[0] if lane_problem(parts[0]) is None else None
        run_id = parts[2] if len(parts) == 3 and parts[1] == "progress" else None
        what = {1: "lane folder", 2: "folder"}.get(len(parts), "run folder")
        message = (
            f"The {what} {preview('/'.join(parts))} is a symbolic link; the host never follows "
            "links in the IPC tree, so nothing in it was read."
        )
        result = self._ingestor().refuse(link, lane=lane, code="symlink", message=message,
                                         run_id=run_id)  # fmt: skip
        if result.outcome == "quarantined":
            log.warning("quarantined %s (%s)", inert(str(link)), inert(result.detail))


def _close_all(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _real_dir(path: Path, links: list[Path] | None) -> bool:
    """Whether ``path`` is a folder and not a link (a link is noted in ``links``)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    if stat.S_ISLNK(mode):
        if links is not None:
            links.append(path)
        return False
    return stat.S_ISDIR(mode)
