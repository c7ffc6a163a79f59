"""``jarvis validate …`` and ``jarvis fingerprint``: the contract checks as commands."""

from __future__ import annotations

import argparse
from typing import Any

from rich.text import Text

from core.service.documents import (
    MAX_DOCUMENT_BYTES,
    MAX_OUTPUT_BYTES,
    ValidationReport,
    error_classes,
    evaluate_completion,
    fingerprint,
    gate_results,
    normalize_url,
    parse_planner_output,
    validate_any_dispatch,
    validate_dispatch,
    validate_record,
    validate_request,
)
from jarvis_cli.inputs import UsageError, existing_dir, read_input
from jarvis_cli.output import (
    console,
    emit_json,
    errors_table,
    escape,
    gates_table,
    verdict_line,
)

#: Planner output is free model text around the JSON; allow more than a bare document.
_MAX_PLANNER_BYTES = 4 * MAX_DOCUMENT_BYTES


def _show_report(report: ValidationReport, source: str) -> None:
    out = console()
    data = report.to_json()
    note = source if report.valid else f"{source} — {len(report.errors)} error(s)"
    out.print(
        verdict_line(report.valid, f"{'valid' if report.valid else 'invalid'} {report.kind}", note)
    )
    if data["errors"]:
        out.print(errors_table(data["errors"]))
    if data["warnings"]:
        out.print(errors_table(data["warnings"], title="warnings"))


def _report_exit(report: ValidationReport, args: argparse.Namespace, source: str) -> int:
    if args.json:
        emit_json(report.to_json())
    else:
        _show_report(report, source)
    return 0 if report.valid else 1


def dispatch(args: argparse.Namespace) -> int:
    data = read_input(args.path, limit=MAX_DOCUMENT_BYTES)
    return _report_exit(validate_any_dispatch(data, as_kind=args.as_kind), args, args.path)


def completion(args: argparse.Namespace) -> int:
    dispatch_report = validate_dispatch(read_input(args.dispatch, limit=MAX_DOCUMENT_BYTES))
    if not dispatch_report.valid or dispatch_report.document is None:
        # Gating against a broken dispatch would judge the worker by rules it was never given.
        first = dispatch_report.errors[0].message if dispatch_report.errors else "invalid"
        raise UsageError(
            "invalid_dispatch",
            f"The dispatch {args.dispatch} is invalid ({len(dispatch_report.errors)} error(s); "
            f"first: {first}); run `jarvis validate dispatch` on it.",
        )
    output = read_input(args.output, limit=MAX_OUTPUT_BYTES)
    verdict = evaluate_completion(dispatch_report.document, output)
    if args.json:
        emit_json(verdict.to_json())
    else:
        out = console()
        out.print(verdict_line(verdict.passed, verdict.state, args.output))
        out.print(gates_table([g.to_json() for g in verdict.gates]))
    return 0 if verdict.passed else 1


def request(args: argparse.Namespace) -> int:
    report = validate_request(read_input(args.path, limit=MAX_DOCUMENT_BYTES))
    return _report_exit(report, args, args.path)


def results(args: argparse.Namespace) -> int:
    request_doc = read_input(args.request, limit=MAX_DOCUMENT_BYTES)
    folder = existing_dir(args.dir)
    verdict = gate_results(request_doc, folder).to_json()
    blocked = verdict["merge_mode"] == "blocked"
    if args.json:
        emit_json(verdict)
    else:
        out = console()
        out.print(
            verdict_line(
                not blocked,
                f"risk {verdict['risk']} — {verdict['merge_mode']}",
                f"{verdict['files_changed']} file(s), +{verdict['additions']} "
                f"-{verdict['deletions']}",
            )
        )
        findings = [
            {"field": f.get("path", ""), "code": f.get("code", ""), "message": f.get("message", "")}
            for f in verdict["findings"]
        ]
        if findings:
            out.print(errors_table(findings, title="findings"))
        if verdict.get("errors"):
            out.print(errors_table(verdict["errors"]))
    return 1 if blocked else 0


def record(args: argparse.Namespace) -> int:
    report = validate_record(read_input(args.path, limit=MAX_DOCUMENT_BYTES))
    return _report_exit(report, args, args.path)


def planner(args: argparse.Namespace) -> int:
    result = parse_planner_output(read_input(args.path, limit=_MAX_PLANNER_BYTES)).to_json()
    if args.json:
        emit_json(result)
    else:
        out = console()
        how = "repaired" if result["repaired"] else ("strict" if result["ok"] else "")
        label = f"planner.v1 {how}".strip() if result["ok"] else str(result["error_code"])
        out.print(verdict_line(bool(result["ok"]), label, args.path))
        if result.get("errors"):
            out.print(errors_table(result["errors"]))
    return 0 if result["ok"] else 1


def fingerprint_command(args: argparse.Namespace) -> int:
    classes = error_classes()
    if args.error_class not in classes:
        raise UsageError(
            "unknown_error_class",
            f"--class must be one of {', '.join(classes)}.",
        )
    result: dict[str, Any] = {
        "normalized_url": normalize_url(args.url),
        "fingerprint": fingerprint(
            args.error_class, args.error_code, args.step_id, args.selector, args.url
        ),
    }
    if args.json:
        emit_json(result)
    else:
        out = console()
        out.print(Text.assemble(("fingerprint     ", "dim"), escape(result["fingerprint"])))
        out.print(Text.assemble(("normalized_url  ", "dim"), escape(result["normalized_url"])))
    return 0
