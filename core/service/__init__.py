"""The front door of the engine: everything the console and the command line ask of it.

The front ends (`jarvis_tui`, `jarvis_cli`) import from the engine only this package and the
lifecycle's enums (`core.lifecycle`): an import-linter contract holds it, and
tests/core/test_front_door.py keeps that contract's list whole. Behind the door the engine may
move its modules as it likes; the front ends see typed reads of an open store (`fleet.Fleet`),
one `act(request) -> outcome` for every operator action (`actions`, the registry of them), the
store's own errors (`errors`), and the engine's helpers for showing what it holds (`stages`,
`text`, `diffs`, `logs`).

Importing this package imports nothing: each module loads what it needs, so a command that only
parses its arguments pays for none of the engine.
"""
