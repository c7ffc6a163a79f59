"""Named reads of runs and of the journal, and the writes of a run itself (created, moved by
compare-and-set, touched): statements both backends run, as methods the store (`RunReads`) and
its transactions (`RunReads`, `RunWrites`) take on. A backend gives only the journal's append
(how it learns the new sequence number is its own)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from core.store.lanes import not_paused
from core.store.statements import Statements, Where, Writes, marks, without_nul

#: Journal kinds whose rows bump the run's ``version``: the changes an operator's decision depends
#: on (the run's existence and its state). Progress and steers do not bump it, so a chatty worker
#: or a colleague's steer never makes an operator's retry or override stale.
VERSIONED_KINDS = frozenset({"created", "transition"})
#: The columns that say where a run stands in the lifecycle (its state; inside ``running`` where
#: the verification of its criteria stands; inside ``review_requested`` whether its approved
#: branch is being merged): written only by versioned changes.
STAGE_COLUMNS = frozenset({"state", "verification_state", "merge_state"})


class StaleVersion(Exception):
    """The run changed since the caller read it (compare-and-set failed)."""

    def __init__(self, run_id: str, expected: int, current: dict[str, Any] | None) -> None:
        super().__init__(run_id)
        self.run_id = run_id
        self.expected = expected
        self.current = current


class RunReads(Statements):
    """Which runs are where, and the journal consoles follow."""

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        found = self.rows("SELECT * FROM runs WHERE run_id = ?", [run_id])
        return found[0] if found else None

    def list_runs(
        self,
        *,
        states: tuple[str, ...] = (),
        lane: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Runs, most recently changed first."""
        where = Where().among("state", states)
        if lane:
            where.add("lane = ?", lane)
        sql = f"SELECT * FROM runs{where} ORDER BY updated_at DESC, run_id"
        if limit is None:
            return self.rows(sql, where.params)
        return self.rows(f"{sql} LIMIT ?", [*where.params, limit])

    def journal_since(
        self, seq: int, *, limit: int = 1000, run_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Journal entries after ``seq``, oldest first: the change feed consoles follow."""
        if run_id is None:
            return self.rows(
                "SELECT * FROM journal WHERE seq > ? ORDER BY seq LIMIT ?", [seq, limit]
            )
        return self.rows(
            "SELECT * FROM journal WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            [run_id, seq, limit],
        )

    def last_seq(self) -> int:
        """The newest journal entry's seq; never below one retention removed (the horizon's
        eve), so a position once read does not go back when the newest entries were removed."""
        (found,) = self.rows(
            "SELECT COALESCE(MAX(seq), 0) AS seq, "
            "(SELECT seq FROM retention_marks WHERE name = 'journal') AS horizon FROM journal"
        )
        return max(int(found["seq"]), int(found["horizon"] or 0) - 1)

    def queued_runs(
        self, queued: str, limit: int, lanes: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Up to ``limit`` runs in state ``queued``, longest waiting first: ``run_id``, ``lane``
        (of ``lanes`` only, when given), none of a paused lane (whose queue would otherwise
        fill the read and keep the other lanes' runs waiting)."""
        if lanes is not None and not lanes:
            return []
        where = Where().add("state = ?", queued).add(not_paused()).among("lane", lanes or ())
        return self.rows(
            f"SELECT run_id, lane FROM runs{where} ORDER BY updated_at, run_id LIMIT ?",
            [*where.params, limit],
        )

    def states_of(self, run_ids: Sequence[str]) -> dict[str, str]:
        """Each named run's state, by run id (a run that does not exist has no entry)."""
        if not run_ids:
            return {}
        rows = self.rows(
            f"SELECT run_id, state FROM runs WHERE run_id IN ({marks(run_ids)})", list(run_ids)
        )
        return {r["run_id"]: r["state"] for r in rows}

    def attempts_of(self, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Each named run's ``state``, ``host`` and ``retry_count``, by run id: whether an
        attempt a host supervises is still the run's current one, and still that host's."""
        if not run_ids:
            return {}
        rows = self.rows(
            f"SELECT run_id, state, host, retry_count FROM runs WHERE run_id IN ({marks(run_ids)})",
            list(run_ids),
        )
        return {r["run_id"]: r for r in rows}

    def newest_run_ids(self, limit: int) -> list[str]:
        """The ``limit`` most recently created runs' ids, newest first."""
        rows = self.rows(
            "SELECT run_id FROM runs ORDER BY created_at DESC, run_id LIMIT ?", [limit]
        )
        return [str(r["run_id"]) for r in rows]

    def runs_from(self, source_lane: str, state: str) -> list[dict[str, Any]]:
        """Runs dispatched from ``source_lane`` now in ``state``: ``run_id``, ``dispatch_json``."""
        return self.rows(
            "SELECT run_id, dispatch_json FROM runs WHERE source_lane = ? AND state = ?",
            [source_lane, state],
        )

    def runs_in_scope(
        self,
        *,
        lane_like: str | None = None,
        lane: str | None = None,
        states: Sequence[str] = (),
        limit: int,
    ) -> list[dict[str, Any]]:
        """Whole runs of lanes matching ``lane_like`` (an SQL LIKE pattern) and/or ``lane``, in
        ``states`` when given, the most recently started (else created) first."""
        where = Where()
        if lane_like is not None:
            where.add("lane LIKE ?", lane_like)
        if lane is not None:
            where.add("lane = ?", lane)
        where.among("state", states)
        return self.rows(
            f"SELECT * FROM runs{where} "
            "ORDER BY COALESCE(started_at, created_at) DESC, run_id DESC LIMIT ?",
            [*where.params, limit],
        )

    def lanes_with_runs(self) -> set[str]:
        return {str(r["lane"]) for r in self.rows("SELECT DISTINCT lane FROM runs")}

    def change_signature(self) -> tuple[Any, ...]:
        """Something that changes whenever a run or a refusal does: the newest run change,
        how many runs there are, the newest refusal."""
        (row,) = self.rows(
            "SELECT (SELECT MAX(updated_at) FROM runs) AS runs, "
            "(SELECT COUNT(*) FROM runs) AS count, "
            "(SELECT MAX(id) FROM quarantined_files) AS refused"
        )
        return (row["runs"], row["count"], row["refused"])

    def run_ids_starting(self, prefix: str) -> list[str]:
        """Every run id that starts with ``prefix`` (taken literally)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self.rows("SELECT run_id FROM runs WHERE run_id LIKE ? ESCAPE '\\'", [f"{escaped}%"])
        return [str(r["run_id"]) for r in rows]


class RunWrites(Writes):
    """A run created, moved and touched (inside a transaction); every change journaled."""

    def journal(self, run_id: str, kind: str, payload: Mapping[str, Any], actor: str) -> int:
        """Append to the journal; the new entry's sequence number."""
        raise NotImplementedError  # the backend's transaction appends

    @staticmethod
    def journal_text(payload: Mapping[str, Any]) -> str:
        """A journal entry's payload as stored, the same text on every backend: a NUL in it is
        `NUL_STAND_IN` there too, as in every other text the store keeps."""
        text = json.dumps(payload, sort_keys=True)
        return json.dumps(without_nul(payload), sort_keys=True) if "\\u0000" in text else text

    def run_brief(self, run_id: str) -> dict[str, Any] | None:
        """A run's lane, state and attempt only: the ingest hot path needs no more."""
        found = self.rows(
            "SELECT run_id, lane, state, retry_count FROM runs WHERE run_id = ?", [run_id]
        )
        return found[0] if found else None

    def run_briefs(self, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """`run_brief` for many runs, a statement per 500: those that exist, by run id."""
        found: dict[str, dict[str, Any]] = {}
        unique = list(dict.fromkeys(run_ids))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            for row in self.rows(
                "SELECT run_id, lane, state, retry_count FROM runs "
                f"WHERE run_id IN ({marks(chunk)})",
                chunk,
            ):
                found[str(row["run_id"])] = row
        return found

    def _run(self, run_id: str) -> dict[str, Any]:
        found = self.rows("SELECT * FROM runs WHERE run_id = ?", [run_id])
        assert found, f"run {run_id} was just written"
        return dict(found[0])

    def create_run(
        self, row: Mapping[str, Any], *, actor: str, note: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Insert a run at version 1, with its ``created`` journal entry (``note`` adds to it,
        e.g. its criteria)."""
        record = dict(row)
        record.update(version=1, created_at=self.now, updated_at=self.now)
        columns = ", ".join(record)
        marks = ", ".join("?" for _ in record)
        self.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", list(record.values()))
        self.journal(record["run_id"], "created", {"state": record["state"], **(note or {})}, actor)
        return self._run(record["run_id"])

    def change_run(
        self,
        run_id: str,
        *,
        expected_version: int,
        changes: Mapping[str, Any],
        kind: str,
        payload: Mapping[str, Any],
        actor: str,
    ) -> dict[str, Any]:
        """Compare-and-set: apply ``changes`` only if the run is still at ``expected_version``
        (bumped for a versioned kind), journaled.

        Raises:
            StaleVersion: the run is at another version (or gone); nothing was written.
        """
        values = dict(changes)
        values["updated_at"] = self.now
        bump = kind in VERSIONED_KINDS
        assert bump or not STAGE_COLUMNS & set(values), "a stage change bumps the version"
        assignments = ", ".join(f"{column} = ?" for column in values)
        if bump:
            assignments += ", version = version + 1"
        changed = self.execute(
            f"UPDATE runs SET {assignments} WHERE run_id = ? AND version = ?",
            [*values.values(), run_id, expected_version],
        )
        if changed != 1:
            current = self.rows("SELECT * FROM runs WHERE run_id = ?", [run_id])
            raise StaleVersion(run_id, expected_version, current[0] if current else None)
        self.journal(run_id, kind, payload, actor)
        return self._run(run_id)

    def touch_run(
        self,
        run_id: str,
        *,
        changes: Mapping[str, Any],
        kind: str,
        payload: Mapping[str, Any],
        actor: str,
    ) -> None:
        """Change fields that are not the run's state (progress, artifacts) with a journal row.

        No compare-and-set: nothing here decides on the run's state, and the version stays.
        """
        assert kind not in VERSIONED_KINDS, "state changes go through change_run"
        self.touch_fields(run_id, changes)
        self.journal(run_id, kind, payload, actor)

    def touch_latest_progress(
        self, latest: Sequence[tuple[str, int, str, int, str, str, str]]
    ) -> None:
        """Touch many runs at once (one statement for the lot, on PostgreSQL one round trip):
        each (run, attempt, at_utc, seq, name, summary, timestamp) becomes the run's last
        progress unless the attempt has a later event stored, and ``updated_at`` in any case.
        No journal row: the events journal themselves (`core.host.progress_batch`)."""
        later = (
            "EXISTS (SELECT 1 FROM progress_events WHERE run_id = ? AND attempt = ? "
            "AND (at_utc, seq, name) > (?, ?, ?))"
        )
        self.execute_many(
            f"UPDATE runs SET "
            f"last_progress_summary = CASE WHEN {later} THEN last_progress_summary ELSE ? END, "
            f"last_progress_at = CASE WHEN {later} THEN last_progress_at ELSE ? END, "
            "updated_at = ? WHERE run_id = ?",
            [
                [run_id, attempt, at_utc, seq, name, summary]
                + [run_id, attempt, at_utc, seq, name, timestamp, self.now, run_id]
                for run_id, attempt, at_utc, seq, name, summary, timestamp in latest
            ],
        )

    def touch_fields(self, run_id: str, changes: Mapping[str, Any]) -> None:
        """Change fields that are not the run's state, and ``updated_at``, with no journal row:
        for a writer that journals each event itself and touches the run once for many
        (`core.host.progress_batch`)."""
        assert not STAGE_COLUMNS & set(changes), "stage changes go through change_run"
        values = dict(changes)
        values["updated_at"] = self.now
        assignments = ", ".join(f"{column} = ?" for column in values)
        self.execute(f"UPDATE runs SET {assignments} WHERE run_id = ?", [*values.values(), run_id])
