"""Small real repositories for the demo's projects, so its runs work on real git.

Each project the demo's tasks name (`jarvis_sim.demo_tasks.TASKS`) gets a bare repository under
``<workspace>/demo-repos/`` holding a first commit of the files its tasks talk about, and an
entry in the demo's ``jarvis.toml``. Bare, so approving a run in the demo merges it: no one's
working tree holds their ``main``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from core.contracts.names import relative_path_problem
from core.repos.git import git
from jarvis_sim.demo_tasks import TASKS

#: Under the workspace: the demo's repositories, one bare repository per project.
DEMO_REPOS = "demo-repos"
#: Who made the demo repositories' first commits.
DEMO_IDENTITY = {
    "GIT_AUTHOR_NAME": "Jarvis demo",
    "GIT_AUTHOR_EMAIL": "demo@localhost",
    "GIT_COMMITTER_NAME": "Jarvis demo",
    "GIT_COMMITTER_EMAIL": "demo@localhost",
}
_SUFFIXES = (".py", ".tsx", ".ts", ".css", ".md", ".toml")


def _files_of(project: str) -> list[str]:
    """The paths the project's tasks name: the files a first commit should hold."""
    found: dict[str, None] = {}
    for task in TASKS:
        if task.repo != project:
            continue
        for word in task.text.split():
            word = word.strip("'\".,;:()")
            if "/" in word or word.endswith(_SUFFIXES):
                if word.endswith(_SUFFIXES) and relative_path_problem(word) is None:
                    found.setdefault(word, None)
    return list(found)


def _content(path: str, project: str) -> str:
    if path.endswith(".py"):
        return f'"""{path} of {project}."""\n'
    if path.endswith((".tsx", ".ts")):
        return f"// {path} of {project}\nexport {{}};\n"
    if path.endswith(".css"):
        return f"/* {path} of {project} */\n"
    if path.endswith(".toml"):
        return '[project]\nname = "demo"\nversion = "2.3.9"\n'
    return f"# {path}\n"


def make_demo_repos(workspace_root: Path) -> dict[str, Path]:
    """Make a bare repository for every project of the demo's tasks; ``{owner/name: path}``.

    Raises:
        GitError: git is missing or failed.
    """
    root = workspace_root / DEMO_REPOS
    made: dict[str, Path] = {}
    for project in dict.fromkeys(task.repo for task in TASKS):
        name = project.rsplit("/", 1)[-1]
        bare = root / f"{name}.git"
        scratch = root / f".{name}-first-commit"
        scratch.mkdir(parents=True)
        git(["init", "--quiet", "-b", "main"], cwd=scratch)
        (scratch / "README.md").write_text(f"# {project}\n\nA demo project of Jarvis.\n")
        for path in _files_of(project):
            target = scratch / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_content(path, project))
        git(["add", "--all"], cwd=scratch)
        git(["commit", "--quiet", "--no-verify", "-m", "First commit"], cwd=scratch,
            env=DEMO_IDENTITY)  # fmt: skip
        git(["clone", "--quiet", "--bare", str(scratch), str(bare)], cwd=root)
        shutil.rmtree(scratch)
        made[project] = bare
    return made


def repos_config(made: dict[str, Path], workspace_root: Path) -> str:
    """The ``[repos]`` tables of ``jarvis.toml`` for the demo's repositories."""
    return "".join(
        f'\n[repos."{name}"]\npath = "{path.relative_to(workspace_root)}"\nbase_ref = "main"\n'
        for name, path in made.items()
    )
