"""The Jarvis engine: contracts, gates, lifecycle, store and IPC.

Kept deliberately light: importing ``core`` imports nothing else, so the name (which other
distributions could also use) costs nothing until a submodule is asked for. The engine never
imports ``textual``, ``rich`` or ``jarvis_tui``; ``tests/core/test_import_hygiene.py`` proves it.
"""
