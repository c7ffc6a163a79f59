"""``jarvis criteria`` and ``jarvis verify``: acceptance criteria from the command line.

``jarvis criteria extract`` shows what a task would get, without a workspace. ``jarvis criteria
RUN_ID`` lists a run's criteria and, while it is queued, adds or removes one. ``jarvis verify``
checks a run's criteria in its checkout now, as the host does after the gates.

Exit codes as elsewhere: 0 done, 1 refused (or invalid input), 2 usage or I/O error. ``jarvis
verify`` adds `VERIFY_FAILED`: the verification ran, and a criterion failed or waits for an
operator's approval of its command.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from core.service.action_types import Outcome
from core.service.actions import operator_name
from core.service.criteria import CriteriaChange, approval_key, approved_of, criteria_of
from core.service.documents import MAX_DOCUMENT_BYTES, decode_text, loads_strict
from core.service.fleet import Fleet
from core.service.reads import Row
from jarvis_cli.inputs import UsageError, existing_dir, read_input
from jarvis_cli.opening import open_store
from jarvis_cli.output import (
    Lines,
    console,
    emit_json,
    errors_table,
    escape,
    fields,
    verdict_line,
)
from jarvis_tui.safe_text import shown
from jarvis_tui.state_look import run_state_text

if TYPE_CHECKING:
    from core.service.extraction import Extraction

# The extractor (many regular expressions) and the configuration's models are imported by the
# commands that use them: every `jarvis` command builds this parser, `jarvis tui` included.

#: ``jarvis verify``: the criteria were checked, and at least one did not pass.
VERIFY_FAILED = 3

#: The word that makes ``jarvis criteria`` extract instead of naming a run.
EXTRACT = "extract"

_NEEDS_APPROVAL = "needs approval:"
#: How many of a criterion's last output lines the readable rendering of `jarvis verify` shows.
_TAIL_LINES = 6


# -- shared -----------------------------------------------------------------------------------


def _refusal(code: str, message: str, field: str = "") -> dict[str, str]:
    return {"code": code, "message": message, "field": field}


def _print_refusal(refusal: Mapping[str, str]) -> None:
    console().print(verdict_line(False, f"refused ({refusal['code']})", refusal["message"]))


def _checks(criterion: Mapping[str, Any]) -> str:
    """What a criterion looks at, on one line: its path and pattern, or its command."""
    command = criterion.get("command")
    if isinstance(command, list):
        return shlex.join(str(a) for a in command)
    if isinstance(command, str):
        return command + ("  (shell)" if criterion.get("shell") else "")
    path = str(criterion.get("path") or "")
    pattern = criterion.get("pattern")
    return f"{path}\n/{pattern}/" if pattern is not None else path


def _criteria_table(criteria: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("type", no_wrap=True)
    table.add_column("criterion", overflow="fold")
    table.add_column("checks", overflow="fold")
    table.add_column("universal", justify="center")
    for index, criterion in enumerate(criteria):
        table.add_row(
            str(index),
            Text(escape(str(criterion.get("type", "")))),
            Text(shown(criterion.get("description", ""))),
            Lines(shown(_checks(criterion)), style="dim"),
            "✓" if criterion.get("universal") else "",
        )
    return table


# -- jarvis criteria extract --------------------------------------------------------------------


def _task_of(text: str) -> tuple[str, bool, list[str]]:
    """The task text, whether it gets the universal checklist, and notes about the input.

    As intake decides: plain text and a task-dispatcher record get the checklist unless they
    say otherwise (the constraint-extraction document's default); a Jarvis dispatch only when
    it sets ``universal_criteria: true`` (this command has no workspace to ask).
    """
    from core.service.extraction import recognise, task_text_of, universal_note

    stripped = text.lstrip()
    loaded = loads_strict(stripped) if stripped[:1] == "{" else None
    if loaded is None or not loaded.ok or not isinstance(loaded.value, dict):
        notes = []
        if loaded is not None:
            why = loaded.errors[0].message if loaded.errors else "it is not an object"
            notes.append(f"the input starts like JSON but is not a JSON object ({why}); "
                         "read it as plain task text")  # fmt: skip
        return text, True, notes
    doc = loaded.value
    flag = doc.get("universal_criteria")
    notes = ["read the task from a dispatch"]
    if isinstance(doc.get("acceptance_criteria"), list) and doc["acceptance_criteria"]:
        notes.append("the dispatch lists acceptance_criteria: a run keeps those instead of "
                     "criteria extracted from its text")  # fmt: skip
    if "run_id" in doc and recognise(doc) == "jarvis_dispatch":
        universal, why = universal_note(flag, False)
        notes.append(why)
    else:
        universal = flag if isinstance(flag, bool) else True
    return task_text_of(doc), universal, notes


def _extract_refused(errors: list[dict[str, str]], as_json: bool) -> int:
    if as_json:
        emit_json({"criteria": [], "source": None, "notes": [], "errors": errors})
    else:
        console().print(verdict_line(False, "no criteria extracted", f"{len(errors)} error(s)"))
        console().print(errors_table(errors))
    return 1


def extract(args: argparse.Namespace) -> int:
    from core.service.extraction import at_most_the_cap, extract_criteria, extract_with_model

    if args.model_command is not None and not args.model_command:
        raise UsageError("usage", "--model-command needs the command to run after it.")
    repo = existing_dir(args.repo) if args.repo is not None else None
    data = read_input(args.path, limit=MAX_DOCUMENT_BYTES)
    text, problems = decode_text(data, limit=MAX_DOCUMENT_BYTES)
    if text is None:
        return _extract_refused([p.to_json() for p in problems], args.json)
    task, universal, input_notes = _task_of(text)
    universal = universal and not args.no_universal
    extraction: Extraction
    if args.model_command:
        extraction = extract_with_model(task, args.model_command, repo=repo, universal=universal)
    else:
        extraction = extract_criteria(task, repo=repo, universal=universal)
    extraction = at_most_the_cap(extraction)  # what a dispatch of it would keep
    notes = [*input_notes, *extraction.notes]
    if args.json:
        emit_json({"criteria": extraction.criteria, "source": extraction.source,
                   "notes": notes, "errors": []})  # fmt: skip
        return 0
    out = console()
    found = f"{len(extraction.criteria)} criteria"
    out.print(verdict_line(True, found, f"source: {extraction.source}"))
    if extraction.criteria:
        out.print(_criteria_table(extraction.criteria, "criteria"))
    for note in notes:
        out.print(Text("  " + shown(note), style="dim"))
    return 0


# -- jarvis criteria RUN_ID ---------------------------------------------------------------------


def _listing(run: Row) -> dict[str, Any]:
    criteria = []
    for index, criterion in enumerate(criteria_of(run)):
        item: dict[str, Any] = {"index": index, **criterion}
        key = approval_key(criterion)
        if key is not None:
            item["approval_key"] = key
        criteria.append(item)
    return {
        "run_id": run["run_id"],
        "state": run["state"],
        "version": run["version"],
        "universal_criteria": bool(run.get("universal_criteria", 1)),
        "criteria_source": run.get("criteria_source"),
        "verification_state": run.get("verification_state"),
        "approved_commands": approved_of(run),
        "criteria": criteria,
    }


def _print_listing(listing: dict[str, Any], done: str) -> None:
    out = console()
    if done:
        out.print(verdict_line(True, done))
    out.print(Text.assemble(("run ", "dim"), (escape(listing["run_id"]), "bold"), "  ",
                            run_state_text(listing)))  # fmt: skip
    universal = "on" if listing["universal_criteria"] else "off"
    out.print(
        fields(
            (
                ("universal checklist", universal),
                ("criteria source", listing["criteria_source"] or "—"),
                ("verification", listing["verification_state"] or "—"),
            )
        )
    )
    criteria = listing["criteria"]
    if criteria:
        out.print(_criteria_table(criteria, f"{len(criteria)} criteria"))
    else:
        out.print(Text("  no acceptance criteria", style="dim"))
    for key in listing["approved_commands"]:
        out.print(Text.assemble(("  approved command  ", "dim"), escape(key)))


def _parse_criterion(raw: str) -> Any:
    loaded = loads_strict(raw.encode("utf-8", "surrogatepass"))
    if not loaded.ok:
        return None
    return loaded.value


def _change(args: argparse.Namespace, store: Fleet) -> CriteriaChange | None:
    operator = operator_name(args.operator)
    if args.add is not None:
        criterion = _parse_criterion(args.add)
        if criterion is None:
            return CriteriaChange(
                False, [], "invalid_criterion", "--add must be one criterion as a JSON object.",
                "criterion",
            )  # fmt: skip
        return store.edit_criteria(
            args.run_id, operator, add=criterion, expected_version=args.expect_version
        )
    if args.remove is not None:
        return store.edit_criteria(
            args.run_id, operator, remove=args.remove, expected_version=args.expect_version
        )
    return None


def criteria(args: argparse.Namespace) -> int:
    if args.run_id == EXTRACT:
        # `jarvis criteria extract` is parsed by its own parser; this is `extract` after options.
        raise UsageError(
            "usage", "extract must come right after criteria: jarvis criteria extract PATH|-."
        )
    if args.add is not None and args.remove is not None:
        raise UsageError("usage", "--add and --remove cannot be used together.")
    changes = args.add is not None or args.remove is not None
    with open_store(args, access="write" if changes else "read") as store:
        change = _change(args, store)
        run = store.run(args.run_id)
    refusal: dict[str, str] | None = None
    if change is not None and not change.ok:
        refusal = _refusal(change.code, change.message, change.field)
    elif run is None:
        refusal = _refusal("not_found", f"There is no run {args.run_id}.", "run_id")
    listing = _listing(run) if run is not None else None
    if args.json:
        emit_json({"ok": refusal is None, **(listing or {"run_id": args.run_id}),
                   "refusal": refusal})  # fmt: skip
    elif refusal is not None:
        _print_refusal(refusal)
    elif listing is not None:
        done = ""
        if args.add is not None:
            done = f"added criterion {len(listing['criteria']) - 1} to {args.run_id}"
        elif args.remove is not None:
            done = f"removed criterion {args.remove} from {args.run_id}"
        _print_listing(listing, done)
    return 1 if refusal is not None else 0


# -- jarvis verify ----------------------------------------------------------------------------


def _waiting(result: Mapping[str, Any]) -> bool:
    return not result.get("passed") and str(result.get("output", "")).startswith(_NEEDS_APPROVAL)


def _duration(ms: Any) -> str:
    if not isinstance(ms, int):
        return ""
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _tail(output: str) -> str:
    lines = output.rstrip("\n").splitlines()
    kept = lines[-_TAIL_LINES:]
    cut = "…\n" if len(lines) > len(kept) else ""
    return cut + "\n".join(kept)


def _print_results(run_id: str, results: Mapping[str, Any], run: Row | None) -> None:
    out = console()
    items = [r for r in results.get("criteria_results", []) if isinstance(r, Mapping)]
    failed = [r for r in items if not r.get("passed") and not _waiting(r)
              and not r.get("not_checked")]  # fmt: skip
    unchecked = [r for r in items if r.get("not_checked")]
    waiting = [r for r in items if _waiting(r)]
    if results.get("passed") and unchecked:
        passed = len(items) - len(unchecked)
        note = f"{passed} passed, {len(unchecked)} not checked (no repository)"
        out.print(verdict_line(True, f"verified {run_id}", note))
    elif results.get("passed"):
        out.print(verdict_line(True, f"verified {run_id}", f"{len(items)} criteria passed"))
    else:
        parts = [f"{len(failed)} of {len(items)} failed"] if failed else []
        parts += [f"{len(waiting)} waiting for approval"] if waiting else []
        note = ", ".join(parts)
        out.print(verdict_line(False, f"verification of {run_id} did not pass", note))
    table = Table(title="acceptance criteria", title_justify="left")
    table.add_column("", width=1)
    table.add_column("criterion", overflow="fold", ratio=1)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("output", overflow="fold", ratio=2)
    for item in items:
        criterion = item.get("criterion")
        criterion = criterion if isinstance(criterion, Mapping) else {}
        if item.get("passed"):
            mark = Text("✓", style="green")
        elif item.get("not_checked"):
            mark = Text("?", style="yellow")
        elif _waiting(item):
            mark = Text("…", style="yellow")
        else:
            mark = Text("✗", style="red")
        label = criterion.get("description") or criterion.get("type") or "?"
        table.add_row(
            mark,
            Text(shown(label)),
            _duration(item.get("duration_ms")),
            Lines(shown(_tail(str(item.get("output", "")))), style="dim"),
        )
    out.print(table)
    for item in waiting:
        criterion = item.get("criterion")
        key = approval_key(criterion) if isinstance(criterion, Mapping) else None
        if key is not None:
            command = f"jarvis verify {run_id} --approve {shlex.quote(key)}"
            out.print(fields([("approve with:", command)]))
    if run is not None:
        out.print(Text.assemble("  now ", run_state_text(run)))


def verified(args: argparse.Namespace, outcome: Outcome) -> int:
    """What ``jarvis verify`` says of its outcome: the results, or the refusal."""
    refusal = outcome.refusal
    if refusal is not None or outcome.results is None:
        shown_refusal = (
            _refusal(refusal.code, refusal.message, refusal.field)
            if refusal is not None
            else _refusal("not_verified", "Nothing was verified.", "run_id")
        )
        if args.json:
            emit_json({"ok": False, "refusal": shown_refusal})
        else:
            _print_refusal(shown_refusal)
        return 1
    if args.json:
        emit_json(outcome.results)
    else:
        _print_results(args.run_id, outcome.results, outcome.run)
    return 0 if outcome.results.get("passed") else VERIFY_FAILED


__all__ = ["EXTRACT", "VERIFY_FAILED", "criteria", "extract", "verified"]
