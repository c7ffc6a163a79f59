"""``jarvis config check``: the operator's own file (`jarvis_tui.personal`) read as the console
reads it, every problem said; exit 0 when the console would use it all, 1 when not.
``jarvis config keys``: every binding of the console, by the id a ``[keymap]`` entry names, with
the keys it answers to once the operator's keymap is applied."""

from __future__ import annotations

import argparse

from jarvis_cli.output import console, data, emit_json, verdict_line


def check(args: argparse.Namespace) -> int:
    # The console's names (its themes and binding ids) come with Textual: loaded for this
    # command only.
    from jarvis_tui.keymap_ids import binding_ids, theme_names
    from jarvis_tui.personal import load_personal, unknown_names

    personal = load_personal()
    unknown = unknown_names(personal, theme_names(), binding_ids())
    problems = [p for p in (personal.problem, unknown) if p]
    if args.json:
        emit_json({
            "path": str(personal.path), "found": personal.found, "ok": not problems,
            "problems": problems, "settings": personal.config.to_json(),
        })  # fmt: skip
        return 1 if problems else 0
    out = console()
    if not personal.found:
        out.print(verdict_line(True, str(personal.path), "no such file: the console uses its "
                               "defaults"))  # fmt: skip
        return 0
    if not problems:
        out.print(verdict_line(True, str(personal.path), "the console uses every setting"))
        return 0
    out.print(verdict_line(False, str(personal.path), ""))
    for problem in problems:
        out.print(data(f"  {problem}"))
    return 1


def keys(args: argparse.Namespace) -> int:
    from jarvis_tui.keymap_ids import console_bindings
    from jarvis_tui.personal import load_personal

    keymap = load_personal().config.keymap
    found: dict[str, dict[str, str]] = {}
    for cls, binding in console_bindings():
        if binding.id and binding.id not in found:
            found[binding.id] = {
                "id": binding.id,
                "keys": keymap.get(binding.id, binding.key),
                "default_keys": binding.key,
                "action": binding.description or binding.action,
                "where": cls.__qualname__,
            }
    rows = [found[name] for name in sorted(found)]
    if args.json:
        emit_json({"bindings": rows})
        return 0
    out = console()
    width = max(len(row["id"]) for row in rows)
    keys_width = max(len(row["keys"]) for row in rows)
    for row in rows:
        moved = "" if row["keys"] == row["default_keys"] else f" (was {row['default_keys']})"
        out.print(
            data(f"{row['id']:<{width}}  {row['keys']:<{keys_width}}  {row['action']}{moved}")
        )
    return 0
