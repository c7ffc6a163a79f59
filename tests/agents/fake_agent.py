"""A stand-in agent program that records how it was started: its working directory, ``$PWD``,
its command line and what its stdin held, as JSON in the file ``FAKE_RECORD`` names (one line
per start, appended). It then prints a short run in the format of the agent named by
``FAKE_FORMAT`` (``opencode``, or ``aider``'s plain lines), so the runner sees a finished turn.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    stdin = "" if sys.stdin.isatty() else sys.stdin.read()
    record = {"cwd": os.getcwd(), "pwd": os.environ.get("PWD"), "argv": argv, "stdin": stdin}
    with open(os.environ["FAKE_RECORD"], "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    if os.environ.get("FAKE_FORMAT") == "aider":
        print("Aider v0.86.2")
        print("Done.")
        print("Tokens: 1.2k sent, 80 received.")
        return 0
    session = {"type": "step_start", "sessionID": "ses_fake", "part": {"type": "step-start"}}
    print(json.dumps(session))
    text = {"type": "text", "sessionID": "ses_fake", "part": {"type": "text", "text": "Done."}}
    print(json.dumps(text))
    tokens = {"input": 10, "output": 2, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    finish = {"reason": "stop", "cost": 0, "tokens": tokens}
    print(json.dumps({"type": "step_finish", "sessionID": "ses_fake", "part": finish}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
