"""``jarvis completion bash|zsh``: scripts the shells accept, that complete the commands, the
verbs and their options as the parser has them (real bash and zsh, no stand-ins)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.jarvis_cli import jarvis
from tests.processes import HANG_GUARD_S


def script(tmp_path: Path, shell: str) -> Path:
    done = jarvis("completion", shell)
    assert done.code == 0, done
    path = tmp_path / f"jarvis.{shell}"
    path.write_text(done.stdout)
    return path


def bash_completes(path: Path, *words: str) -> list[str]:
    """What bash offers for the last of ``words`` after ``jarvis``, as a tab would ask it."""
    quoted = " ".join(f"'{w}'" for w in ("jarvis", *words))
    program = (
        f"source '{path}'\n"
        f'COMP_WORDS=({quoted}); COMP_CWORD={len(words)}; COMP_LINE="${{COMP_WORDS[*]}}"\n'
        "COMP_POINT=${#COMP_LINE}; _shtab_jarvis; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True,
                          text=True, timeout=HANG_GUARD_S, check=True)  # fmt: skip
    return [line for line in done.stdout.splitlines() if line]


def test_the_bash_script_is_valid_and_completes_commands_verbs_and_options(
    tmp_path: Path,
) -> None:
    path = script(tmp_path, "bash")
    subprocess.run(["bash", "-n", str(path)], check=True, timeout=HANG_GUARD_S)
    assert bash_completes(path, "ap") == ["approve"]
    assert bash_completes(path, "quar") == ["quarantine"]
    assert "--state" in bash_completes(path, "retry", "--st")
    assert bash_completes(path, "cancel", "--rea") == ["--reason"]
    assert bash_completes(path, "completion", "") == ["bash", "zsh"]
    assert "show" in bash_completes(path, "")


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (apt install zsh)")
def test_the_zsh_script_is_valid_and_registers_for_jarvis(tmp_path: Path) -> None:
    path = script(tmp_path, "zsh")
    subprocess.run(["zsh", "-n", str(path)], check=True, timeout=HANG_GUARD_S)
    # Installed as the docs say: a file named _jarvis in a folder on $fpath, then compinit.
    folder = tmp_path / "zfunc"
    folder.mkdir()
    shutil.copy(path, folder / "_jarvis")
    program = (
        f"fpath=('{folder}' $fpath); autoload -Uz compinit; compinit -u -d '{tmp_path}/zcd'\n"
        "print -r -- $_comps[jarvis]; autoload -Uz _jarvis; print -r -- ${+functions[_jarvis]}"
    )
    done = subprocess.run(["zsh", "-f", "-c", program], capture_output=True, text=True,
                          timeout=HANG_GUARD_S, check=True)  # fmt: skip
    assert done.stdout.split() == ["_jarvis", "1"]
    # A tab in a real interactive zsh (zpty): `jarvis ap` becomes `jarvis approve`. zpty -r -m
    # waits for the pattern, so the test waits on the completion, not on a clock.
    typed = (
        "zmodload zsh/zpty\n"
        "zpty z zsh -f -i\n"
        f"zpty -w z \"PS1='> '; fpath=('{folder}' \\$fpath); autoload -Uz compinit; "
        f"compinit -u -d '{tmp_path}/zcd2'\"\n"
        "zpty -w -n z $'jarvis ap\\t'\n"
        "zpty -r -m z out '*jarvis approve*' && print -r -- completed\n"
        "zpty -d z\n"
    )
    done = subprocess.run(["zsh", "-f", "-c", typed], capture_output=True, text=True,
                          timeout=HANG_GUARD_S, check=True)  # fmt: skip
    assert done.stdout.strip().endswith("completed"), done


def test_an_unknown_shell_is_a_usage_error() -> None:
    done = jarvis("completion", "fish", "--json")
    assert done.code == 2 and done.json()["error"]["code"] == "usage"
