"""A stand-in for ``docker run -i --rm … IMAGE``: runs tests/nanoclaw/runner_fixture.py as if it
were the image's runner, with the ``-v`` mounts it was given standing for the container's paths
(``/workspace/ipc`` becomes ``NANOCLAW_IPC_DIR``, ``/workspace/group`` the working directory).
Its command line is recorded to ``$FAKE_CONTAINER_ARGV`` for the test to read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

RUNNER = Path(__file__).with_name("runner_fixture.py")
_VALUED = {"-v", "-e", "--user", "--name", "--network", "-w"}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--version"]:
        print("Docker version 0.0.0-fake")
        return 0
    record = os.environ.get("FAKE_CONTAINER_ARGV")
    if record:
        Path(record).write_text(json.dumps(argv))
    assert argv[0] == "run", argv
    mounts: dict[str, str] = {}
    at = 1
    while at < len(argv) and argv[at].startswith("-"):
        option = argv[at]
        if option in _VALUED:
            value = argv[at + 1]
            if option == "-v":
                source, target = value.split(":", 1)
                mounts[target] = source
            at += 2
        else:
            at += 1
    image = argv[at]
    assert image == "nanoclaw-agent:latest", argv
    env = {**os.environ, "NANOCLAW_IPC_DIR": mounts["/workspace/ipc"]}
    done = subprocess.run(
        [sys.executable, str(RUNNER)], cwd=mounts["/workspace/group"], env=env, check=False
    )  # fmt: skip  (stdin, stdout and stderr are passed through)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
