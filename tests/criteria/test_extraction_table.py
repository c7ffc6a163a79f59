"""Pattern extraction, row by row: each task text and exactly the criteria it must give.

The rows run without a repository, so the inferred commands are the defaults (``pytest`` and
``ruff check .``) and ``universal`` is off unless a test says otherwise; the traps at the end
are texts that look like criteria to a careless pattern and must give none.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from core.contracts.criteria import Criterion
from core.criteria.extract import Extraction, extract_criteria, task_text_of

C = dict[str, Any]


def file(path: str) -> C:
    return {
        "type": "file_exists",
        "path": path,
        "description": f"{path} must exist",
        "universal": False,
    }


def contains(path: str, pattern: str, shown: str | None = None) -> C:
    description = f'{path} must contain "{shown if shown is not None else pattern}"'
    return {
        "type": "content_match",
        "path": path,
        "pattern": pattern,
        "description": description,
        "universal": False,
    }


def content(path: str, pattern: str, description: str) -> C:
    return {
        "type": "content_match",
        "path": path,
        "pattern": pattern,
        "description": description,
        "universal": False,
    }


def run(kind: str, command: list[str], description: str) -> C:
    return {"type": kind, "command": command, "description": description, "universal": False}


def suite(command: list[str] | None = None, description: str = "Tests must pass") -> C:
    return run("test_pass", command or ["pytest"], description)


def quoted(kind: str, command: list[str]) -> C:
    shown = " ".join(command)
    verb = {"test_pass": "must pass", "no_lint_errors": "must report no errors"}.get(
        kind, "must succeed"
    )
    return run(kind, command, f"`{shown}` {verb}")


CHANGELOG = r"\d{4}-\d{2}-\d{2}"

# (task text, expected criteria, a note that must be logged or None)
ROWS: list[tuple[str, list[C], str | None]] = [
    # --- files --------------------------------------------------------------------------------
    ("Create a file at src/components/Header.tsx.", [file("src/components/Header.tsx")], None),
    (
        "Create src/components/Header.tsx, src/components/Footer.tsx and src/index.ts.",
        [
            file("src/components/Header.tsx"),
            file("src/components/Footer.tsx"),
            file("src/index.ts"),
        ],
        None,
    ),
    (
        "Create the following files: docs/index.md, docs/api.md.",
        [file("docs/index.md"), file("docs/api.md")],
        None,
    ),
    (
        "Create src/a.py and a test file tests/test_a.py.",
        [file("src/a.py"), file("tests/test_a.py")],
        None,
    ),
    ("Add a `Makefile` and a `Dockerfile`.", [file("Makefile"), file("Dockerfile")], None),
    (
        "Create a .gitignore and a .env.example file.",
        [file(".gitignore"), file(".env.example")],
        None,
    ),
    ("The file docs/guide.md must exist.", [file("docs/guide.md")], None),
    ("Make sure `scripts/deploy.sh` exists.", [file("scripts/deploy.sh")], None),
    ("Ensure that build/output.json exists.", [file("build/output.json")], None),
    (
        "Rename src/old_name.py to src/new_name.py.",
        [file("src/new_name.py")],
        "no criterion type can check that src/old_name.py is gone",
    ),
    ("Add “docs/intro.md”.", [file("docs/intro.md")], None),
    # Paths that leave the repository are never criteria, and the log says why.
    ("Create /etc/app.conf with the defaults.", [], "skipped file_exists /etc/app.conf"),
    ("Create ../shared/config.yaml for both.", [], "skipped file_exists ../shared/config.yaml"),
    ("Write ~/notes.md.", [], "skipped file_exists ~/notes.md"),
    ("Create a file at C:\\temp\\out.txt", [], "not absolute"),
    # --- content ------------------------------------------------------------------------------
    (
        'README.md must contain a section "## Installation" and "## Usage".',
        [contains("README.md", "## Installation"), contains("README.md", "## Usage")],
        None,
    ),
    ("Add a `## Usage` section to README.md.", [contains("README.md", "## Usage")], None),
    (
        "Create src/config.py. It must contain `DEBUG = False`.",
        [file("src/config.py"), contains("src/config.py", "DEBUG = False")],
        None,
    ),
    (
        '- Create src/a.py\n- It must contain "VALUE = 1"',
        [file("src/a.py"), contains("src/a.py", "VALUE = 1")],
        None,
    ),
    (
        "Create version.txt containing “1.2.3”.",
        [file("version.txt"), contains("version.txt", r"1\.2\.3", "1.2.3")],
        None,
    ),
    (
        "src/Header.tsx must export `Header`.",
        [content("src/Header.tsx", r"export\b.*\bHeader\b", "src/Header.tsx must export Header")],
        None,
    ),
    (
        "app/models.py should define `Invoice`.",
        [
            content(
                "app/models.py",
                r"(?m)^\s*(?:async\s+def|def|class)\s+Invoice\b",
                "app/models.py must define Invoice",
            )
        ],
        None,
    ),
    (
        r"CHANGELOG.md must match the regex `^## \[\d+\.\d+\.\d+\]`.",
        [
            content(
                "CHANGELOG.md",
                r"^## \[\d+\.\d+\.\d+\]",
                r"CHANGELOG.md must match /^## \[\d+\.\d+\.\d+\]/",
            )
        ],
        None,
    ),
    ('config.json must match the pattern "([a-z".', [], "the pattern does not compile"),
    ('The output must contain "OK".', [], "'OK' is required of no named file"),
    ("`README.md` must contain 'license'.", [contains("README.md", "license")], None),
    # --- tests --------------------------------------------------------------------------------
    ("All tests must pass.", [suite()], None),
    ("Make sure the existing tests still pass.", [suite()], None),
    ("Don't break any tests.", [suite()], None),
    (
        "All tests in tests/test_api.py must pass.",
        [suite(["pytest", "tests/test_api.py"], "Tests in tests/test_api.py must pass")],
        None,
    ),
    (
        "Tests in tests/api/ and tests/test_models.py should pass.",
        [
            suite(
                ["pytest", "tests/api/", "tests/test_models.py"],
                "Tests in tests/api/, tests/test_models.py must pass",
            )
        ],
        None,
    ),
    (
        "Create `tests/test_x.py`; `pytest tests/test_x.py` must pass.",
        [file("tests/test_x.py"), quoted("test_pass", ["pytest", "tests/test_x.py"])],
        None,
    ),
    ("'npm test' should pass", [quoted("test_pass", ["npm", "test"])], None),
    # --- commands -----------------------------------------------------------------------------
    ("Run `make check` before finishing.", [quoted("command_success", ["make", "check"])], None),
    (
        "`npm run build` must succeed, and `npm run lint` must pass.",
        [
            quoted("command_success", ["npm", "run", "build"]),
            quoted("no_lint_errors", ["npm", "run", "lint"]),
        ],
        None,
    ),
    (
        "Run `pytest` and `ruff check .`.",
        [quoted("test_pass", ["pytest"]), quoted("no_lint_errors", ["ruff", "check", "."])],
        None,
    ),
    (
        "The command `go vet ./...` must succeed.",
        [quoted("no_lint_errors", ["go", "vet", "./..."])],
        None,
    ),
    ("Run `rm -rf build && make` to clean up.", [], "shell syntax (&)"),
    ("Run `cat log.txt | grep ERROR`.", [], "shell syntax (|)"),
    ("Run `echo $HOME > out.txt`.", [], "shell syntax ($ >)"),
    ("Run `pytest tests/*.py`.", [], "glob"),
    ("Run `DEBUG=1 pytest`.", [], "environment variable"),
    # --- lint and types -----------------------------------------------------------------------
    (
        "No lint errors; no mypy errors.",
        [
            run("no_lint_errors", ["ruff", "check", "."], "No lint errors"),
            run("no_lint_errors", ["mypy", "."], "No mypy errors"),
        ],
        None,
    ),
    (
        "There must be no TypeScript errors.",
        [run("no_lint_errors", ["npx", "tsc", "--noEmit"], "No TypeScript errors")],
        None,
    ),
    (
        "ruff must be clean.",
        [run("no_lint_errors", ["ruff", "check", "."], "No ruff errors")],
        None,
    ),
    # --- changelog and backlog ----------------------------------------------------------------
    (
        "Update the changelog and mark the task done in the backlog.",
        [
            {
                "type": "changelog_updated",
                "path": "CHANGELOG.md",
                "pattern": CHANGELOG,
                "description": "Changelog entry added",
                "universal": False,
            },
            {
                "type": "backlog_updated",
                "path": "BACKLOG.md",
                "pattern": r"\[x\]",
                "description": "Backlog task marked complete",
                "universal": False,
            },
        ],
        None,
    ),
    (
        "Add an entry to docs/CHANGELOG.md.",
        [
            {
                "type": "changelog_updated",
                "path": "docs/CHANGELOG.md",
                "pattern": CHANGELOG,
                "description": "Changelog entry added",
                "universal": False,
            }
        ],
        None,
    ),
    # --- files worked on, named without a creation verb: they must exist afterwards ----------
    ("Update src/cli.py to accept --verbose.", [file("src/cli.py")], None),
    ("Edit `config/app.toml` and raise the pool size.", [file("config/app.toml")], None),
    ("Please modify lib/render.js so it escapes HTML.", [file("lib/render.js")], None),
    ("Change the default port in server/config.yaml.", [file("server/config.yaml")], None),
    ("Fix the off-by-one error in src/pager.py.", [file("src/pager.py")], None),
    ("Refactor app/views.py into smaller functions.", [file("app/views.py")], None),
    ("Add a function to utils.py.", [file("utils.py")], None),
    ("Update README.md and CONTRIBUTING.md.", [file("README.md"), file("CONTRIBUTING.md")], None),
    (
        "Add docs/faq.md and update docs/index.md.",
        [file("docs/faq.md"), file("docs/index.md")],
        None,
    ),
    ("scripts/greet.py should print a greeting.", [file("scripts/greet.py")], None),
    (
        "The new endpoint in api/routes.py must return 404 for unknown ids.",
        [file("api/routes.py")],
        None,
    ),
    (
        "- src/api/limits.py exists\n- docs/limits.md is present",
        [file("src/api/limits.py"), file("docs/limits.md")],
        None,
    ),
    (
        # out.json is what the program does, not a file for the task to add
        "Change tool.py so it writes out.json atomically.",
        [file("tool.py")],
        None,
    ),
    # --- copy and rename: both ends ---------------------------------------------------------
    (
        "Copy config/default.yaml to config/local.yaml.",
        [file("config/default.yaml"), file("config/local.yaml")],
        None,
    ),
    (
        "Duplicate templates/a.html as templates/b.html and change the title.",
        [file("templates/a.html"), file("templates/b.html")],
        None,
    ),
    (
        "Copy the logo from assets/logo.svg to public/logo.svg.",
        [file("assets/logo.svg"), file("public/logo.svg")],
        None,
    ),
    ("Move src/util.py into src/lib/.", [file("src/lib/util.py")], "src/util.py is gone"),
    ("Rename `docs/Guide.md` to `docs/guide.md`.", [file("docs/guide.md")], None),
    ("Renommez a.py en b.py.", [file("b.py")], None),
    ("Benenne a.py in b.py um.", [file("b.py")], None),
    ("Renombra a.py a b.py.", [file("b.py")], None),
    ("Kopiere a.py nach b.py.", [file("a.py"), file("b.py")], None),
    # --- writing tests without a command: the repository's test command --------------------
    ("Write tests for src/parser.py.", [file("src/parser.py"), suite()], None),
    ("Add unit tests for the billing module.", [suite()], None),
    ("Please add a regression test for issue 42.", [suite()], None),
    ("Cover the new branch with tests.", [suite()], None),
    ("Add a test that passes a None value to parse().", [suite()], None),
    (
        "Write tests for src/a.py; `pytest tests/test_a.py` must pass.",
        [file("src/a.py"), quoted("test_pass", ["pytest", "tests/test_a.py"])],
        None,
    ),
    ("Écris des tests pour le parseur.", [suite()], None),
    ("Schreibe Tests für den Parser.", [suite()], None),
    ("Escribe pruebas para el analizador.", [suite()], None),
    # --- linters and builds, run or rerun ---------------------------------------------------
    (
        "Rerun `ruff check .` after the change.",
        [quoted("no_lint_errors", ["ruff", "check", "."])],
        None,
    ),
    ("Re-run `npm run build`.", [quoted("command_success", ["npm", "run", "build"])], None),
    ("Then run the linter: `flake8 src`", [quoted("no_lint_errors", ["flake8", "src"])], None),
    (
        "Run the build (`make build`) once more.",
        [quoted("command_success", ["make", "build"])],
        None,
    ),
    (
        "Lint with `eslint .` and build with `npm run build`.",
        [
            quoted("no_lint_errors", ["eslint", "."]),
            quoted("command_success", ["npm", "run", "build"]),
        ],
        None,
    ),
    (
        "Run `cargo clippy` again until it is clean.",
        [quoted("no_lint_errors", ["cargo", "clippy"])],
        None,
    ),
    ("`tsc --noEmit` must come back clean.", [quoted("no_lint_errors", ["tsc", "--noEmit"])], None),
    # --- content: "in FILE" after the text, and exports named without quotes ---------------
    ("Make sure `## Usage` is in README.md.", [contains("README.md", "## Usage")], None),
    (
        "The line `VERSION = 2` must appear in src/version.py.",
        [contains("src/version.py", "VERSION = 2")],
        None,
    ),
    (
        "Must contain `CREATE TABLE` in db/schema.sql.",
        [contains("db/schema.sql", "CREATE TABLE")],
        None,
    ),
    (
        "src/index.ts must export createServer.",
        [
            content(
                "src/index.ts",
                r"export\b.*\bcreateServer\b",
                "src/index.ts must export createServer",
            )
        ],
        None,
    ),
    (
        "lib/api.js should export a function called fetchUser.",
        [content("lib/api.js", r"export\b.*\bfetchUser\b", "lib/api.js must export fetchUser")],
        None,
    ),
    (
        "Export `render` from src/view.ts.",
        [content("src/view.ts", r"export\b.*\brender\b", "src/view.ts must export render")],
        None,
    ),
    (
        "docs/a.md must exist and contain `## A`.",
        [file("docs/a.md"), contains("docs/a.md", "## A")],
        None,
    ),
    # --- paths with letters beyond ASCII ----------------------------------------------------
    ("Create docs/café.md.", [file("docs/café.md")], None),
    ("Update src/größen.py.", [file("src/größen.py")], None),
    ("Create 文档/说明.md.", [file("文档/说明.md")], None),
    # "İ" lower-cases to two characters: what follows it must still be found where it is.
    (
        "İ: Create src/İstanbul.py and UPDATE Docs/ÉTÉ.md.",
        [file("src/İstanbul.py"), file("Docs/ÉTÉ.md")],
        None,
    ),
    # --- French -----------------------------------------------------------------------------
    ("Crée src/app.py.", [file("src/app.py")], None),
    ("Créez le fichier docs/guide.md.", [file("docs/guide.md")], None),
    ("Mettez à jour setup.cfg.", [file("setup.cfg")], None),
    ("Modifiez src/vue.py pour afficher la date.", [file("src/vue.py")], None),
    ("Le fichier build/sortie.json doit exister.", [file("build/sortie.json")], None),
    ("Tous les tests doivent passer.", [suite()], None),
    ("Exécutez `pytest -q`.", [quoted("test_pass", ["pytest", "-q"])], None),
    ("`make build` doit réussir.", [quoted("command_success", ["make", "build"])], None),
    ("README.md doit contenir `## Licence`.", [contains("README.md", "## Licence")], None),
    # --- German -----------------------------------------------------------------------------
    ("Erstelle src/app.py.", [file("src/app.py")], None),
    ("Lege die Datei docs/handbuch.md an.", [file("docs/handbuch.md")], None),
    ("Aktualisiere setup.cfg.", [file("setup.cfg")], None),
    ("Bearbeite src/ansicht.py.", [file("src/ansicht.py")], None),
    ("Die Datei build/ausgabe.json muss existieren.", [file("build/ausgabe.json")], None),
    ("Alle Tests müssen bestehen.", [suite()], None),
    ("Führe `pytest -q` aus.", [quoted("test_pass", ["pytest", "-q"])], None),
    ("`make build` muss erfolgreich sein.", [quoted("command_success", ["make", "build"])], None),
    ("README.md muss `## Lizenz` enthalten.", [contains("README.md", "## Lizenz")], None),
    # --- Spanish ----------------------------------------------------------------------------
    ("Crea src/app.py.", [file("src/app.py")], None),
    ("Cree el archivo docs/guia.md.", [file("docs/guia.md")], None),
    ("Actualiza setup.cfg.", [file("setup.cfg")], None),
    ("Modifica src/vista.py para mostrar la fecha.", [file("src/vista.py")], None),
    ("El archivo build/salida.json debe existir.", [file("build/salida.json")], None),
    ("Todas las pruebas deben pasar.", [suite()], None),
    ("Ejecuta `pytest -q`.", [quoted("test_pass", ["pytest", "-q"])], None),
    ("`make build` debe funcionar.", [quoted("command_success", ["make", "build"])], None),
    ("README.md debe contener `## Licencia`.", [contains("README.md", "## Licencia")], None),
    # --- more ways of naming a file to work on ---------------------------------------------
    ("We need a SECURITY.md in the repository root.", [file("SECURITY.md")], None),
    (
        "Break lib/huge.py up into lib/io.py and lib/calc.py.",
        [file("lib/io.py"), file("lib/calc.py")],
        None,
    ),
    ("Rename settings.ini -> settings.toml.", [file("settings.toml")], None),
    ("The helpers should live in src/util/text.py.", [file("src/util/text.py")], None),
    ("Put the new fixtures in tests/conftest.py.", [file("tests/conftest.py")], None),
    ("Make sure app/main.py handles SIGTERM.", [file("app/main.py")], None),
    ("In web/forms.py, validate the e-mail field.", [file("web/forms.py")], None),
    ("Move the constants to src/constants.py.", [file("src/constants.py")], None),
    ("Add the new retry policy in net/policy.py.", [file("net/policy.py")], None),
    ("Update both a.py and b.py.", [file("a.py"), file("b.py")], None),
    ("Set the version to 2.0.1 in setup.cfg.", [file("setup.cfg")], None),
    ("Die Datei docs/betrieb.md bitte um ein Kapitel ergänzen.", [file("docs/betrieb.md")], None),
    ("Behebe den Absturz in src/start.py.", [file("src/start.py")], None),
    ("Hay que actualizar src/red.py.", [file("src/red.py")], None),
    ("Remove the debug prints in jobs/sync.py.", [file("jobs/sync.py")], None),
    ("Generate a JSON schema at schemas/order.json.", [file("schemas/order.json")], None),
    ("Write the upgrade guide in docs/upgrade.md.", [file("docs/upgrade.md")], None),
    ("Convert notes.txt into Markdown as notes.md.", [file("notes.md")], None),
    ("Add a README.md in the folder scripts/.", [file("scripts/README.md")], None),
    ("Lege eine neue Hilfsdatei src/hilfe.py an.", [file("src/hilfe.py")], None),
    ("Kopiere die Vorlage a.html nach b.html.", [file("a.html"), file("b.html")], None),
    ("Cambia el nombre de la clase de src/modelo.py.", [file("src/modelo.py")], None),
    # --- more ways of asking for tests and commands -----------------------------------------
    (
        "`make a` and `make b` should both succeed.",
        [quoted("command_success", ["make", "a"]), quoted("command_success", ["make", "b"])],
        None,
    ),
    ("Il faut que `make build` réussisse.", [quoted("command_success", ["make", "build"])], None),
    ("Keep the existing tests green.", [suite()], None),
    ("Schreibe einen Integrationstest.", [suite()], None),
    ("Añade una prueba para el caso vacío.", [suite()], None),
    (
        "Run the script with `python tools/check.py --all`.",
        [quoted("command_success", ["python", "tools/check.py", "--all"])],
        None,
    ),
    (
        "`make docs` is failing on CI; please fix it.",
        [quoted("command_success", ["make", "docs"])],
        None,
    ),
    (
        "Insert a heading named `## Limits` into docs/api.md.",
        [contains("docs/api.md", "## Limits")],
        None,
    ),
    (
        "- docs/CHANGES.md updated",
        [
            {
                "type": "changelog_updated",
                "path": "docs/CHANGES.md",
                "pattern": CHANGELOG,
                "description": "Changelog entry added",
                "universal": False,
            }
        ],
        None,
    ),
    (
        "Mettez à jour le changelog.",
        [
            {
                "type": "changelog_updated",
                "path": "CHANGELOG.md",
                "pattern": CHANGELOG,
                "description": "Changelog entry added",
                "universal": False,
            }
        ],
        None,
    ),
    (
        "Aktualisiere das Changelog und hake die Aufgabe im Backlog ab.",
        [
            {
                "type": "changelog_updated",
                "path": "CHANGELOG.md",
                "pattern": CHANGELOG,
                "description": "Changelog entry added",
                "universal": False,
            },
            {
                "type": "backlog_updated",
                "path": "BACKLOG.md",
                "pattern": r"\[x\]",
                "description": "Backlog task marked complete",
                "universal": False,
            },
        ],
        None,
    ),
    (
        "Marca la tarea como hecha en el backlog.",
        [
            {
                "type": "backlog_updated",
                "path": "BACKLOG.md",
                "pattern": r"\[x\]",
                "description": "Backlog task marked complete",
                "universal": False,
            }
        ],
        None,
    ),
    # --- traps: these look like criteria to a careless pattern --------------------------------
    ("Use the helper, e.g. the one in utils, i.e. not the old one, etc.", [], None),
    ("Bump the version to v1.2.3 and support Python 3.12.", [], None),
    (
        "Meeting at 9 a.m. to discuss the U.S. rollout; add src/rollout.py.",
        [file("src/rollout.py")],
        None,
    ),
    (
        "See https://example.com/docs/setup.py and www.example.org/a/b.py, or mail "
        "dev@example.com; then create setup.py.",
        [file("setup.py")],
        None,
    ),
    ("Create example.com/docs/page.md", [], None),
    (
        "Create app.config.local.json and archive.tar.gz.",
        [file("app.config.local.json"), file("archive.tar.gz")],
        None,
    ),
    (
        "Create a Node.js script at scripts/run.js and a Vue.js page.",
        [file("scripts/run.js")],
        None,
    ),
    ("Create src/app.py that reads config.json.", [file("src/app.py")], None),
    ("Add `src/new.py`, e.g. by copying src/old.py.", [file("src/new.py")], None),
    ("If config.local.json exists, load it.", [], None),
    ("Create the directory src/utils/.", [], None),
    ("The tests must not fail.", [], None),
    ("Do not run `git push --force`.", [], None),
    # Negations, in every language: a file not to touch is no criterion.
    ("Do not touch src/legacy.py.", [], None),
    ("Don't edit config/prod.yaml.", [], None),
    ("Never modify migrations/0001_init.py.", [], None),
    ("Without changing src/api.py, add logging.", [], None),
    ("Ne modifie pas src/a.py.", [], None),
    ("Ne touchez pas à src/a.py.", [], None),
    ("Ändere src/a.py nicht.", [], None),
    ("Bearbeite src/a.py auf keinen Fall.", [], None),
    ("No modifiques src/a.py.", [], None),
    ("src/a.py must not change.", [], None),
    # Files named only as examples.
    ("Update the config, e.g. config/dev.yaml.", [], None),
    ("Edit a settings file (for example settings/local.py).", [], None),
    ("Use something like lib/cache.py as a model.", [], None),
    ("Update the docs, i.e. docs/a.md and docs/b.md.", [], None),
    ("Mets à jour la configuration, par exemple config/dev.yaml.", [], None),
    ("Aktualisiere die Konfiguration, z. B. config/dev.yaml.", [], None),
    ("Actualiza la configuración, por ejemplo config/dev.yaml.", [], None),
    ("Remove scripts/old.sh.", [], None),
    ("Delete tmp/cache.json from the repository.", [], None),
    (
        # A Python module has no export statement: what it defines, imports or lists in __all__.
        "After the refactor, src/app.py must still export `make_app`.",
        [
            content(
                "src/app.py",
                r"(?m)^(?:(?:async\s+)?def|class)\s+make_app\b"
                r"|^\s*(?:from\s+\S+\s+)?import\s.*\bmake_app\b|^make_app\s*[:=]"
                r"|__all__[^\]]*['\"]make_app['\"]",
                "src/app.py must export make_app",
            )
        ],
        None,
    ),
    ("The script that creates out.json is too slow.", [], None),
    ("Make sure nothing in legacy/api.py changes.", [], None),
    ("Die Datei src/a.py nicht ändern.", [], None),
    ("`make docs` is failing, but that is a known issue; ignore it.", [], None),
    ('The "Save" button must pass validation.', [], None),
    ("The user's 'name' field must be required; don't use \"x\".", [], None),
    ("Fix the bug described at https://github.com/org/repo/issues/12.", [], None),
    (
        "Example:\n```\ntouch src/should_not.py\npytest must pass\n```\nCreate src/real.py.",
        [file("src/real.py")],
        "ignored fenced code blocks",
    ),
]


@pytest.mark.parametrize(("text", "expected", "note"), ROWS, ids=[r[0][:50] for r in ROWS])
def test_row(text: str, expected: list[C], note: str | None) -> None:
    result = extract_criteria(text, universal=False)
    assert result.criteria == expected
    assert result.source == "patterns"
    if note is not None:
        assert any(note in n for n in result.notes), result.notes


def test_the_table_is_large_enough() -> None:
    assert len(ROWS) >= 35


ADAPTER: TypeAdapter[Any] = TypeAdapter(Criterion)


@pytest.mark.parametrize("universal", [False, True])
def test_every_criterion_of_every_row_is_a_valid_criterion(universal: bool) -> None:
    for text, _, _ in ROWS:
        for criterion in extract_criteria(text, universal=universal).criteria:
            model = ADAPTER.validate_python(criterion)
            assert getattr(model, "shell", False) is False  # task text never meets a shell
            assert criterion["universal"] is (criterion in universal_defaults())


def universal_defaults() -> list[C]:
    return [
        {
            "type": "test_pass",
            "command": ["pytest"],
            "description": "All existing tests must pass",
            "universal": True,
        },
        {
            "type": "no_lint_errors",
            "command": ["ruff", "check", "."],
            "description": "No linting or type errors",
            "universal": True,
        },
        {
            "type": "changelog_updated",
            "path": "CHANGELOG.md",
            "pattern": CHANGELOG,
            "description": "Changelog entry added for today",
            "universal": True,
        },
        {
            "type": "backlog_updated",
            "path": "BACKLOG.md",
            "pattern": r"\[x\]",
            "description": "Backlog task marked complete",
            "universal": True,
        },
    ]


def test_no_explicit_criteria_gives_only_the_universal_checklist() -> None:
    # The document: "default to universal criteria when no explicit criteria are found".
    result = extract_criteria("Refactor the auth module.")
    assert result.criteria == universal_defaults()


def test_universal_criteria_follow_the_task_criteria() -> None:
    result = extract_criteria("Create src/a.py.")
    assert result.criteria == [file("src/a.py"), *universal_defaults()]


def test_a_task_command_equal_to_the_universal_one_appears_once_as_the_tasks() -> None:
    result = extract_criteria("All tests must pass and there must be no lint errors.")
    assert result.criteria == [
        suite(),
        run("no_lint_errors", ["ruff", "check", "."], "No lint errors"),
        *universal_defaults()[2:],
    ]
    assert sum("already asked for by the task" in n for n in result.notes) == 2


def test_a_narrower_task_test_command_does_not_replace_the_universal_one() -> None:
    result = extract_criteria("`pytest tests/test_a.py` must pass.")
    assert result.criteria == [
        quoted("test_pass", ["pytest", "tests/test_a.py"]),
        *universal_defaults(),
    ]


def test_the_same_criterion_asked_twice_is_kept_once() -> None:
    result = extract_criteria("Create src/a.py. The file src/a.py must exist.", universal=False)
    assert result.criteria == [file("src/a.py")]


def test_criteria_keep_the_order_of_the_text() -> None:
    text = "`make build` must succeed.\n\nCreate docs/a.md.\n\nAll tests must pass."
    kinds = [c["type"] for c in extract_criteria(text, universal=False).criteria]
    assert kinds == ["command_success", "file_exists", "test_pass"]


def test_the_universal_checklist_uses_the_repositorys_files_and_commands(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"scripts": {"test": "jest", "lint": "eslint ."}}')
    (tmp_path / "HISTORY.md").write_text("# History\n")
    (tmp_path / "TODO.md").write_text("- [ ] a\n")
    result = extract_criteria("Tidy up.", repo=tmp_path)
    assert [(c["type"], c.get("command"), c.get("path")) for c in result.criteria] == [
        ("test_pass", ["npm", "test"], None),
        ("no_lint_errors", ["npm", "run", "lint"], None),
        ("changelog_updated", None, "HISTORY.md"),
        ("backlog_updated", None, "TODO.md"),
    ]
    assert "commands from package.json: test `npm test`, lint `npm run lint`" in result.notes


def test_generic_tests_use_the_repositorys_test_command(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "x"\n')
    result = extract_criteria("Tests in tests/api/ must pass.", repo=tmp_path, universal=False)
    # cargo cannot be pointed at a folder of tests, so the whole suite runs, and the log says so
    assert result.criteria == [suite(["cargo", "test"], "Tests in tests/api/ must pass")]
    assert any("cannot be narrowed" in n for n in result.notes)


def test_type_errors_use_the_ecosystems_checker(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.org/x\n")
    result = extract_criteria("No type errors.", repo=tmp_path, universal=False)
    assert result.criteria == [run("no_lint_errors", ["go", "vet", "./..."], "No type errors")]


@pytest.mark.parametrize(
    ("manifest", "body", "pattern"),
    [
        ("package.json", '{"name": "x"}', r'"lodash"\s*:'),
        ("Cargo.toml", '[package]\nname = "x"\n', r"(?m)^\s*lodash\s*="),
        (
            "pyproject.toml",
            '[project]\nname = "x"\n',
            r"(?im)(?:^|[\"'\s])(?:lodash)(?=[\s\[<>=!~;,\"']|$)",
        ),
    ],
)
def test_a_required_package_becomes_a_match_in_the_manifest(
    tmp_path: Path, manifest: str, body: str, pattern: str
) -> None:
    (tmp_path / manifest).write_text(body)
    result = extract_criteria(
        "The package `lodash` must be installed.", repo=tmp_path, universal=False
    )
    assert result.criteria == [
        content(manifest, pattern, f"lodash must be a dependency in {manifest}")
    ]


def test_python_dependency_pattern_accepts_equivalent_spellings(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    result = extract_criteria(
        "Add `pytest-cov` as a dev dependency.", repo=tmp_path, universal=False
    )
    pattern = re.compile(result.criteria[0]["pattern"])
    assert pattern.search('dependencies = ["Pytest_Cov>=4"]')
    assert pattern.search('dev = [\n  "pytest-cov",\n]')
    assert not pattern.search('dependencies = ["pytest-covers"]')


def test_a_dependency_without_a_manifest_is_skipped_with_a_note() -> None:
    result = extract_criteria("The package `requests` must be installed.", universal=False)
    assert result.criteria == []
    assert any("no dependency manifest" in n for n in result.notes)


def test_extraction_is_a_frozen_record() -> None:
    result = extract_criteria("Create a.py.", universal=False)
    assert isinstance(result, Extraction)
    with pytest.raises(AttributeError):
        result.source = "model"  # type: ignore[misc]


def test_odd_input_gives_no_criteria_and_no_error() -> None:
    assert extract_criteria("", universal=False).criteria == []
    assert extract_criteria("``` unclosed fence\nCreate a.py", universal=False).criteria == []
    assert extract_criteria(None, universal=False).criteria == []  # type: ignore[arg-type]


# --- task_text_of -----------------------------------------------------------------------------


def test_task_text_of_a_jarvis_dispatch_reads_input_and_acceptance_tests() -> None:
    dispatch = {
        "run_id": "r1",
        "input": "Create src/a.py.",
        "acceptance_tests": ["All tests must pass.", "`make lint` must pass."],
    }
    assert task_text_of(dispatch) == (
        "Create src/a.py.\n\nAll tests must pass.\n\n`make lint` must pass."
    )


def test_task_text_of_an_openclaw_request_reads_the_goal() -> None:
    request = {
        "task_id": "t1",
        "goal": {
            "title": "Add a header",
            "description": "Create src/Header.tsx.",
            "acceptance_criteria": ["src/Header.tsx must export `Header`."],
            "test_plan": ["`npm test` must pass."],
        },
    }
    text = task_text_of(request)
    assert text == (
        "Add a header\n\nCreate src/Header.tsx.\n\nsrc/Header.tsx must export `Header`."
        "\n\n`npm test` must pass."
    )
    assert [c["type"] for c in extract_criteria(text, universal=False).criteria] == [
        "file_exists",
        "content_match",
        "test_pass",
    ]


def test_task_text_of_reads_free_task_and_description_strings() -> None:
    assert task_text_of({"task": "Do A.", "description": "Do B."}) == "Do A.\n\nDo B."


def test_task_text_of_ignores_pieces_of_the_wrong_type() -> None:
    odd = {"input": 3, "acceptance_tests": ["ok", 4, None, "  "], "goal": ["x"], "task": None}
    assert task_text_of(odd) == "ok"
    assert task_text_of({"goal": "Create a.py."}) == "Create a.py."
    assert task_text_of({}) == ""
    assert task_text_of([]) == ""  # type: ignore[arg-type]


def test_pieces_do_not_run_into_each_other() -> None:
    # Without a paragraph break, "README.md" would be read as the subject of the next piece.
    text = task_text_of({"input": "Update README.md", "acceptance_tests": ["must contain `x`"]})
    assert extract_criteria(text, universal=False).criteria == [file("README.md")]


def test_a_package_named_without_quotes_becomes_a_match_in_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "x"}')
    result = extract_criteria(
        "The package lodash must be installed.", repo=tmp_path, universal=False
    )
    assert result.criteria == [
        content("package.json", r'"lodash"\s*:', "lodash must be a dependency in package.json")
    ]
