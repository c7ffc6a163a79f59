"""A window on the runs: one page of a view (an order, a state, the runs needing a human, a
text), read from an index by keyset, never the whole table.

A console shows a screenful of a fleet that may hold a million runs. Each order it offers has
an index, ``(key, run_id)``; a page is the ``limit`` rows after (or before) a *mark*, the key and
run id of the row it continues from, so page 1,000 costs what page 1 does. The store is the one
judge of the order: a console never sorts what it was given.

Filters become conditions on the same read. A state filter is one more condition; which index
serves it is chosen from the state's count (kept in ``run_counts``): a rare state is read by
its own index and sorted, a common one by the order's index, skipping the others. The runs
needing a human are one query per stage that needs one (each reads ``runs_state``, oldest wait
first), merged here. A text is a case-insensitive substring of a run's search text, checked
while the order's index is walked: a page ends at ``limit`` matches, so a common text costs a
page and a rare one a walk (bounded by ``scan_limit``: the page then says it stopped there).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from core.store.statements import Statements

#: An order's name → the column (or expression) it sorts by; ``run_id`` breaks ties. Each has
#: an index ``(expression, run_id)`` (migration ``window_indexes``).
SORT_KEYS: dict[str, str] = {
    "age": "created_at",
    "updated": "updated_at",
    "state": "state",
    "run": "run_id",
    "lane": "lane",
    "task": "COALESCE(task_type, '')",
    "retries": "retry_count",
}

#: What the text filter searches, in this order, each a line of the search text.
SEARCHED = ("run_id", "lane", "task_type", "state", "verification_state", "merge_state",
            "last_progress_summary", "state_reason")  # fmt: skip

#: A state with at most this many runs is read through its own index and sorted; above it,
#: the order's index is walked and the other states skipped.
RARE_STATE = 2_000

Mark = tuple[Any, str]
"""Where a page starts from: a row's sort key and its run id."""


@dataclass(frozen=True)
class Stage:
    """A stage as the store sees it: a state, and for a state with a sub-machine the value of
    its sub-state column (None: the bare state, the column empty). ``steer`` narrows it to
    runs with a steer in that status."""

    state: str
    column: str | None = None
    value: str | None = None
    steer: str | None = None


@dataclass(frozen=True)
class View:
    """Which runs, in which order. ``attention`` (the stages needing a human) replaces the
    order: the longest wait first, by ``updated_at`` ascending."""

    sort: str = "age"
    descending: bool = True
    state: str | None = None
    attention: tuple[Stage, ...] | None = None
    text: str = ""

    def __post_init__(self) -> None:
        if self.sort not in SORT_KEYS:
            raise ValueError(f"no order {self.sort!r}: one of {', '.join(SORT_KEYS)}")

    @property
    def key(self) -> str:
        return "updated_at" if self.attention is not None else SORT_KEYS[self.sort]

    @property
    def down(self) -> bool:
        """Whether the view runs from the greatest key down."""
        return False if self.attention is not None else self.descending


@dataclass
class Page:
    """Rows of a view, in its order, each with its mark."""

    rows: list[dict[str, Any]]
    marks: list[Mark]
    more: bool
    """Whether more may follow beyond the page, in the direction it was read."""
    resume: Mark | None
    """Where the next read in that direction starts: the page's last mark, or the last run a
    text's walk reached when it stopped at its bound."""
    walked_out: bool = False
    """A text's walk stopped at ``scan_limit`` runs before the page was full."""
    beyond: Mark | None = None
    """The mark of the run just past the page in the direction read (None: none, or not known
    after a text's walk): read backwards, the run before the page's first."""


class WindowReads(Statements):
    """The window's reads, for either backend (each says which it is: ``dialect``)."""

    dialect: ClassVar[Literal["sqlite", "postgres"]] = "sqlite"

    def window(
        self,
        view: View,
        columns: Sequence[str],
        *,
        after: Mark | None = None,
        before: Mark | None = None,
        from_end: bool = False,
        limit: int,
        counts: dict[str, int] | None = None,
        scan_limit: int | None = None,
    ) -> Page:
        """Up to ``limit`` rows of ``view`` (``columns`` of each, and its ``run_id``): from the
        start, after the mark ``after``, or the ``limit`` just before ``before`` (or before the
        end, ``from_end``), in view order.

        ``counts`` (`state_counts`) picks the index for a state filter; ``scan_limit`` bounds
        how many runs a text filter walks for one page (not with ``attention``: the runs
        needing a human are few).
        """
        if sum((after is not None, before is not None, from_end)) > 1:
            raise ValueError("a page is read after a mark, before one or from the end: one")
        backwards = before is not None or from_end
        picked = _columns(columns)
        stages = view.attention if view.attention is not None else (None,)
        found: list[tuple[Mark, dict[str, Any]]] = []
        walked_to: Mark | None = None
        for stage in stages:
            rows, walked_to = self._window_part(
                view, stage, picked, after if not backwards else before, backwards,
                limit + 1, counts, scan_limit,
            )  # fmt: skip
            found += [((row.pop("_key"), str(row["run_id"])), row) for row in rows]
        # One list per stage, each in order: merge them (one part needs no merging).
        reverse = view.down != backwards
        if len(stages) > 1:
            found = heapq.nsmallest(limit + 1, found, key=lambda f: f[0]) if not reverse else (
                heapq.nlargest(limit + 1, found, key=lambda f: f[0])
            )  # fmt: skip
        more = len(found) > limit or walked_to is not None
        beyond = found[limit][0] if len(found) > limit else None
        found = found[:limit]
        marks = [mark for mark, _row in found]
        resume = walked_to if walked_to is not None else (marks[-1] if marks else None)
        if backwards:
            found.reverse()
            marks.reverse()
        return Page(
            rows=[row for _mark, row in found],
            marks=marks,
            more=more,
            resume=resume,
            walked_out=walked_to is not None,
            beyond=beyond,
        )

    def _window_part(
        self,
        view: View,
        stage: Stage | None,
        picked: str,
        mark: Mark | None,
        backwards: bool,
        limit: int,
        counts: dict[str, int] | None,
        scan_limit: int | None,
    ) -> tuple[list[dict[str, Any]], Mark | None]:
        """One stage's rows (or the view's, without stages) after ``mark``, in the direction
        read; and the mark of the last run walked when a text's walk stopped at its bound."""
        key = view.key
        found = _filters(view, stage, self.dialect)
        if found is None:
            return [], None
        terms, params, text = found
        state = stage.state if stage is not None else view.state
        if (
            self.dialect == "sqlite"
            and state is not None
            and stage is None
            and counts is not None
            and counts.get(state, 0) > RARE_STATE
            and key not in ("state", "updated_at")
        ):
            # A common state: the order's index walked and the other states skipped, where
            # SQLite would read the state's own index and sort all of its runs. (PostgreSQL's
            # planner weighs this from its statistics.)
            terms[0] = "+state = ?"
        down = view.down != backwards  # the direction this read walks
        bounded = text is not None and scan_limit is not None and stage is None
        found_rows: list[dict[str, Any]] = []
        for more_terms, more_params, tied in _continuing(key, mark, down):
            rows, walked_to = self._read(
                picked, key, down, [*terms, *more_terms], [*params, *more_params], text,
                limit - len(found_rows), scan_limit if bounded else None, tied=tied,
            )  # fmt: skip
            found_rows += rows
            if walked_to is not None:
                return found_rows, walked_to
            if len(found_rows) >= limit:
                break
        return found_rows, None

    def _read(
        self,
        picked: str,
        key: str,
        down: bool,
        terms: list[str],
        params: list[Any],
        text: tuple[str, list[str]] | None,
        limit: int,
        scan_limit: int | None,
        *,
        tied: bool = False,
    ) -> tuple[list[dict[str, Any]], Mark | None]:
        """Rows in order (by run_id alone where the key is the run id or held to one value)."""
        order = "DESC" if down else "ASC"
        ordered = f"ORDER BY run_id {order}" if key == "run_id" or tied else (
            f"ORDER BY {key} {order}, run_id {order}"
        )  # fmt: skip
        if text is None or scan_limit is None:
            if text is not None:
                terms, params = [*terms, text[0]], [*params, *text[1]]
            sql = f"SELECT {picked}, {key} AS _key FROM runs{_where(terms)} {ordered} LIMIT ?"
            return self.rows(sql, [*params, limit]), None
        # The walk for a text is bounded: first the run ``scan_limit`` runs on (an index
        # walk, no text looked at), then the matches up to it, read as any page is and
        # stopping at ``limit`` of them.
        condition, needle = text
        bound = self.rows(
            f"SELECT {key} AS _key, run_id FROM runs{_where(terms)} {ordered} LIMIT 1 OFFSET ?",
            [*params, scan_limit - 1],
        )
        end = (bound[0]["_key"], str(bound[0]["run_id"])) if bound else None
        if end is None:  # the view ends within the walk
            sql = (
                f"SELECT {picked}, {key} AS _key FROM runs{_where([*terms, condition])} "
                f"{ordered} LIMIT ?"
            )
            return self.rows(sql, [*params, *needle, limit]), None
        if key == "run_id":
            upto, upto_params = [f"run_id {'>=' if down else '<='} ?"], [end[1]]
        elif key.isidentifier():
            upto = [f"({key}, run_id) {'>=' if down else '<='} (?, ?)"]
            upto_params = [end[0], end[1]]
        else:
            # SQLite seeks no index on an expression by a pair: the key's range, then the pair.
            upto = [f"{key} {'>=' if down else '<='} ?",
                    f"({key}, run_id) {'>=' if down else '<='} (?, ?)"]  # fmt: skip
            upto_params = [end[0], end[0], end[1]]
        sql = (
            f"SELECT {picked}, {key} AS _key FROM runs{_where([*terms, *upto, condition])} "
            f"{ordered} LIMIT ?"
        )
        rows = self.rows(sql, [*params, *upto_params, *needle, limit])
        return rows, (end if len(rows) < limit else None)

    def window_count(self, view: View, *, cap: int, counts: dict[str, int]) -> tuple[int, bool]:
        """How many runs ``view`` holds, and whether that is exact (False: at least ``cap``).

        Without a text the counts the store keeps answer for a whole state or the whole fleet;
        otherwise the matches are counted up to ``cap``."""
        if view.attention is None and not view.text:
            if view.state is None:
                return sum(counts.values()), True
            return counts.get(view.state, 0), True
        total = 0
        for stage, terms, params in _conditions(view, self.dialect):
            if stage is not None and stage.column is None and stage.steer is None and not view.text:
                total += counts.get(stage.state, 0)  # a whole state: kept, not counted
                if total >= cap:
                    return cap, False
                continue
            counted = self.rows(
                f"SELECT COUNT(*) AS n FROM (SELECT 1 FROM runs{_where(terms)} LIMIT ?) counted",
                [*params, cap - total],
            )
            total += int(counted[0]["n"])
            if total >= cap:
                return cap, False
        return total, True

    def window_mark(self, view: View, run_id: str) -> Mark | None:
        """``run_id``'s mark in ``view``'s order (None: no such run)."""
        own = self.rows(f"SELECT {view.key} AS _key FROM runs WHERE run_id = ?", [run_id])
        return (own[0]["_key"], run_id) if own else None

    def window_holds(self, view: View, run_id: str) -> bool:
        """Whether ``view`` holds ``run_id`` (one row checked, whatever the store's size)."""
        return any(
            self.rows(f"SELECT 1 AS hit FROM runs{_where([*terms, 'run_id = ?'])}",
                      [*params, run_id])
            for _stage, terms, params in _conditions(view, self.dialect)
        )  # fmt: skip

    def window_rank(self, view: View, run_id: str) -> int | None:
        """How many runs of ``view`` come before ``run_id`` (None: the view does not hold it)."""
        key = view.key
        own = self.rows(f"SELECT {key} AS _key FROM runs WHERE run_id = ?", [run_id])
        if not own:
            return None
        mark = [own[0]["_key"], run_id]
        if not self.window_holds(view, run_id):
            return None
        total = 0
        for _stage, terms, params in _conditions(view, self.dialect):
            before = f"({key}, run_id) {'>' if view.down else '<'} (?, ?)"
            counted = self.rows(
                f"SELECT COUNT(*) AS n FROM runs{_where([*terms, before])}", [*params, *mark]
            )
            total += int(counted[0]["n"])
        return total


def _conditions(view: View, dialect: str) -> Iterator[tuple[Stage | None, list[str], list[Any]]]:
    """Each of ``view``'s stages (one None without the attention view) with all its conditions,
    the text's among them, and their parameters."""
    for stage in view.attention if view.attention is not None else (None,):
        found = _filters(view, stage, dialect)
        if found is None:
            continue
        terms, params, text = found
        if text is not None:
            terms, params = [*terms, text[0]], [*params, *text[1]]
        yield stage, terms, params


def _filters(
    view: View, stage: Stage | None, dialect: str
) -> tuple[list[str], list[Any], tuple[str, list[str]] | None] | None:
    """The conditions of ``view`` (for one of its stages) on the runs' own columns, with their
    parameters, and the text's condition and needle apart (a walk may check it on its own);
    None when the stage cannot be in the state asked for. A state's term comes first."""
    if stage is not None and view.state is not None and stage.state != view.state:
        return None
    terms: list[str] = []
    params: list[Any] = []
    state = stage.state if stage is not None else view.state
    if state is not None:
        terms.append("state = ?")
        params.append(state)
    if stage is not None and stage.column is not None:
        if stage.value is None:
            terms.append(f"COALESCE({stage.column}, '') = ''")
        else:
            terms.append(f"{stage.column} = ?")
            params.append(stage.value)
    if stage is not None and stage.steer is not None:
        terms.append("run_id IN (SELECT run_id FROM steering_events WHERE status = ?)")
        params.append(stage.steer)
    text = None
    if view.text:
        # Each field on its own, the first that holds it ending the test: no text is built per
        # run (a filter line cannot type the new line that joined them), and a NULL is no match.
        find = "instr(lower({}), ?) > 0" if dialect == "sqlite" else "strpos(lower({}), ?) > 0"
        condition = "(" + " OR ".join(find.format(column) for column in SEARCHED) + ")"
        text = (condition, [view.text.lower()] * len(SEARCHED))
    return terms, params, text


def _continuing(key: str, mark: Mark | None, down: bool) -> list[tuple[list[str], list[Any], bool]]:
    """The conditions that continue an order past ``mark``, each a read of its own, in turn,
    and whether that read holds the key to one value.

    A column and run_id compare as a pair, which both backends seek in the ``(key, run_id)``
    index. SQLite does not seek an index on an expression that way (it would walk the index
    from its start), so for one the ties come first (key equal, run_id past the mark's), then
    the keys past it.
    """
    if mark is None:
        return [([], [], False)]
    past = "<" if down else ">"
    if key == "run_id":
        return [([f"run_id {past} ?"], [mark[1]], False)]
    if key.isidentifier():
        return [([f"({key}, run_id) {past} (?, ?)"], [mark[0], mark[1]], False)]
    return [
        ([f"{key} = ?", f"run_id {past} ?"], [mark[0], mark[1]], True),
        ([f"{key} {past} ?"], [mark[0]], False),
    ]


def _where(terms: list[str]) -> str:
    return f" WHERE {' AND '.join(terms)}" if terms else ""


def _columns(columns: Sequence[str]) -> str:
    names = list(dict.fromkeys(["run_id", *columns]))
    for name in names:
        if not name.isidentifier():
            raise ValueError(f"not a column: {name!r}")
    return ", ".join(names)
