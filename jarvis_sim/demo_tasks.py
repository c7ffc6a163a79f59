"""Realistic tasks for the demo: what the seeded history and the live fleet dispatch.

Each `DemoTask` becomes a valid Jarvis dispatch (`build_dispatch`) whose ``input`` names the
files the work is about, so the simulated worker's progress reads like real work on them. The
simulated scenario rides in the input as a ``sim:<scenario>`` token, as the simulated worker
expects; ``ok`` is its default and needs no token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.contracts.dispatch import P0_COMPLETION_FIELDS

WORKER_LANES = ("jarvis-worker-1", "jarvis-worker-2", "jarvis-worker-3", "jarvis-worker-4")


@dataclass(frozen=True, slots=True)
class DemoTask:
    task_type: str
    repo: str
    slug: str
    """The branch is ``jarvis-<slug>-<the run's number>``."""
    text: str
    tests: tuple[str, ...]
    ui: bool = False


_ENGINE = ("pytest -q", "ruff check .")
_BILLING = ("pytest tests -q", "mypy billing")
_INFRA = ("pytest -q",)

TASKS: tuple[DemoTask, ...] = (
    DemoTask("fix", "acme-labs/fleet-engine", "steer-expiry",
             "Fix steer expiry in engine/steering.py so a steer sent to a finished run is "
             "expired instead of staying pending.", _ENGINE),
    DemoTask("refactor", "acme-labs/fleet-engine", "scheduler-split",
             "Split engine/scheduler.py into a queue module and a lane-limits module without "
             "changing the public API.", _ENGINE),
    DemoTask("fix", "acme-labs/fleet-engine", "journal-off-by-one",
             "Fix the off-by-one in engine/journal.py that re-sends the last journal row after "
             "a reconnect.", _ENGINE),
    DemoTask("test", "acme-labs/fleet-engine", "lifecycle-model-test",
             "Cover the retry table in engine/lifecycle.py with a model-based test in "
             "tests/test_lifecycle_model.py.", _ENGINE),
    DemoTask("analyze", "acme-labs/fleet-engine", "flaky-flood-test",
             "Find out why tests/test_ingest.py fails one run in fifty on 2-core runners and "
             "report the root cause with a fix.", _ENGINE),
    DemoTask("implement", "acme-labs/fleet-engine", "runs-pagination",
             "Add cursor pagination on updated_at to GET /runs in api/routes/runs.py.", _ENGINE),
    DemoTask("implement", "acme-labs/billing-api", "invoice-vat-footer",
             "Add the customer's VAT number to the invoice PDF footer in billing/pdf/footer.py.",
             _BILLING),
    DemoTask("test", "acme-labs/billing-api", "rounding-properties",
             "Add property tests for half-up currency rounding in billing/money.py at every "
             "scale the ledger uses.", _BILLING),
    DemoTask("fix", "acme-labs/billing-api", "webhook-backoff",
             "Make the webhook retry in billing/webhooks/retry.py back off exponentially with "
             "jitter, capped at five minutes.", _BILLING),
    DemoTask("fix", "acme-labs/billing-api", "csv-trailing-comma",
             "Stop billing/export/csv.py from writing a trailing comma when an invoice has no "
             "notes.", _BILLING),
    DemoTask("code", "acme-labs/billing-api", "bank-client-httpx",
             "Move the bank client in billing/clients/bank.py to httpx with explicit connect "
             "and read timeouts.", _BILLING),
    DemoTask("implement", "acme-labs/billing-api", "healthz",
             "Expose /healthz in billing/api/server.py returning the build sha and the ledger "
             "status as JSON.", _BILLING),
    DemoTask("fix", "acme-labs/infra-tools", "nightly-utc",
             "Default the nightly report in ops/cron/nightly.py to UTC when TZ is not set.",
             _INFRA),
    DemoTask("refactor", "acme-labs/infra-tools", "deploy-argparse",
             "Replace the hand-written flag parsing in tools/deploy.py with argparse, keeping "
             "every flag and its default.", _INFRA),
    DemoTask("implement", "acme-labs/infra-tools", "migrate-dry-run",
             "Add a --dry-run flag to tools/migrate.py that prints the SQL without applying it.",
             _INFRA),
    DemoTask("implement", "acme-labs/infra-tools", "agent-json-logs",
             "Log JSON lines with the run_id on every line from ops/agent/main.py.", _INFRA),
    DemoTask("release", "acme-labs/infra-tools", "release-2-4-0",
             "Prepare release 2.4.0: bump the version in pyproject.toml and write the "
             "CHANGELOG.md entry.", _INFRA),
    DemoTask("implement", "acme-labs/infra-tools", "restart-runbook",
             "Write docs/runbooks/host-restart.md on restarting the host without losing runs.",
             _INFRA),
    DemoTask("fix", "acme-labs/fleet-dashboard", "run-table-ellipsis",
             "Truncate long branch names in src/components/RunTable.tsx with an ellipsis "
             "instead of wrapping the row.",
             ("npm run build", "npm test -- RunTable",
              "The run table keeps one line per run at 80 columns"), ui=True),
    DemoTask("implement", "acme-labs/fleet-dashboard", "key-legend",
             "Add a legend of every keyboard binding to src/components/Footer.tsx.",
             ("npm run build", "npm test -- Footer",
              "The footer lists the q, r and s bindings"), ui=True),
    DemoTask("fix", "acme-labs/fleet-dashboard", "disabled-contrast",
             "Raise the contrast of disabled buttons in src/styles/theme.css to at least 4.5:1 "
             "in the dark theme.",
             ("npm run build", "npm run lint",
              "Disabled buttons report a contrast ratio of at least 4.5"), ui=True),
    DemoTask("fix", "acme-labs/fleet-dashboard", "login-error-text",
             "Show the server's error message in src/pages/Login.tsx instead of 'Unknown "
             "error'.",
             ("npm run build", "npm test -- Login",
              "A wrong password shows 'Invalid credentials'"), ui=True),
)  # fmt: skip


def build_dispatch(
    task: DemoTask,
    run_id: str,
    *,
    scenario: str = "ok",
    request_id: str | None = None,
    priority: str | None = None,
) -> dict[str, Any]:
    """A valid Jarvis dispatch for ``task``; ``scenario`` picks the simulated worker's play."""
    required = [*P0_COMPLETION_FIELDS, "pr_url"]
    contract: dict[str, Any] = {"required_fields": required}
    text = task.text if scenario == "ok" else f"{task.text} sim:{scenario}"
    doc: dict[str, Any] = {
        "run_id": run_id,
        "task_type": task.task_type,
        "context_intent": "fresh",
        "input": text,
        "repo": task.repo,
        # One branch per run: two runs of one task at once would otherwise want one branch.
        "branch": f"jarvis-{task.slug}-{run_id.rsplit('-', 1)[-1]}",
        "acceptance_tests": list(task.tests),
        "output_contract": contract,
        # A simulated worker changes no real code, so the universal checklist (tests, lint,
        # changelog, backlog) could never pass in its checkout; the task's own criteria stay.
        "universal_criteria": False,
    }
    if task.ui:
        doc["ui_impacting"] = True
        contract["browser_evidence_required"] = True
        required.append("browser_evidence")
    if request_id:
        doc["request_id"] = request_id
    if priority:
        doc["priority"] = priority
    return doc
