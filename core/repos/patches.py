"""A change as git shows it, read whole up to a cap: what the scope and risk gate judges."""

from __future__ import annotations

import subprocess
from pathlib import Path

from core.repos.git import GIT_TIMEOUT_S, OWN_SESSION, GitError, git_command, git_env

#: The git options every diff Jarvis reads is made with: no colour, no external diff driver or
#: text conversion configured by the repository, renames as a deletion and an addition, paths
#: from the repository's top with the usual a/ b/ prefixes whatever the user's config says.
PATCH_OPTIONS = (
    "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-relative",
    "--src-prefix=a/", "--dst-prefix=b/",
)  # fmt: skip


def read_patch(repo: Path, base: str, head: str, cap: int) -> tuple[str, bool]:
    """The unified diff from ``base`` to ``head`` (full shas), and whether it was over ``cap``
    bytes (then the text is empty: a cut patch would be judged on part of the change).

    Reads at most ``cap + 1`` bytes and stops git there.

    Raises:
        GitError: git failed.
    """
    args = git_command(["diff", *PATCH_OPTIONS, "--end-of-options", base, head, "--"])
    try:
        proc = subprocess.Popen(
            args, cwd=repo, env=git_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL, start_new_session=OWN_SESSION,
        )  # fmt: skip
    except OSError as exc:
        raise GitError(f"git could not be started in {repo}: {exc.strerror or exc}.") from None
    assert proc.stdout is not None and proc.stderr is not None
    try:
        data = proc.stdout.read(cap + 1)
        if len(data) > cap:
            proc.kill()
            proc.wait()
            return "", True
        err = proc.stderr.read()
        code = proc.wait(GIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise GitError(
            f"`git diff` took longer than {GIT_TIMEOUT_S:g} s and was stopped."
        ) from None
    finally:
        proc.stdout.close()
        proc.stderr.close()
    if code != 0:
        said = " ".join(err.decode("utf-8", "replace").split())[:600]
        raise GitError(f"`git diff` failed: {said}", code, said)
    return data.decode("utf-8", "replace"), False
