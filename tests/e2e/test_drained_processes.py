"""The shared process drivers read everything a process writes, whatever the test is doing.

Each case has the child write far more than a pipe or a terminal buffers after the point where
the test stops looking, then exit: a driver that stopped reading would leave the child blocked in
its write and the wait would never end.
"""

from __future__ import annotations

import sys

import pytest

from tests.processes import PipedProcess, PtyProcess

#: Far beyond a pipe's 64 KiB and a terminal's few KiB.
FLOOD = 1 << 20

#: Say ready, wait for a key, then flood the terminal and say goodbye.
KEY_THEN_FLOOD = (
    "import sys\n"
    "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
    "sys.stdin.read(1)\n"
    f"sys.stdout.write('x' * {FLOOD}); sys.stdout.write('bye\\n'); sys.stdout.flush()\n"
)


def test_a_terminal_is_read_to_the_end_while_the_test_waits_for_the_exit() -> None:
    with PtyProcess([sys.executable, "-c", KEY_THEN_FLOOD]) as child:
        child.wait_for(b"ready", "the child's greeting")
        child.write(b"q\n")
        assert child.wait() == 0  # the test read nothing after the key
        assert child.output.count(b"x") == FLOOD
        assert child.output.rstrip().endswith(b"bye")


def test_both_pipes_are_read_while_the_test_waits_for_the_exit() -> None:
    code = (
        "import sys\n"
        f"sys.stdout.write('o' * {FLOOD}); sys.stderr.write('e' * {FLOOD})\n"
        "sys.stdout.write('\\nend\\n')\n"
    )
    with PipedProcess([sys.executable, "-c", code]) as child:
        out, err = child.communicate()
    assert child.returncode == 0
    assert out.count("o") == FLOOD and out.endswith("end\n")
    assert err == "e" * FLOOD


def test_lines_are_taken_one_at_a_time_as_they_come() -> None:
    code = "import sys\nprint('one', flush=True)\nsys.stdin.close()\nprint('two', flush=True)\n"
    with PipedProcess([sys.executable, "-c", code]) as child:
        assert child.next_line() == "one"
        assert child.next_line() == "two"
        assert child.wait() == 0


def test_waiting_for_output_a_finished_process_never_wrote_fails_at_once_saying_so() -> None:
    with PipedProcess([sys.executable, "-c", "print('something else')"]) as child:
        with pytest.raises(AssertionError, match=r"never showed on stdout \(it was closed\)"):
            child.wait_for_stdout(b"the awaited line", "the awaited line")
    with PtyProcess([sys.executable, "-c", "print('something else')"]) as child:
        with pytest.raises(AssertionError, match=r"never showed \(the terminal was closed\)"):
            child.wait_for(b"the awaited line", "the awaited line")
