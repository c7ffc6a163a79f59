"""Arguments that keep an allowlisted tool from running unattended: paths outside the checkout,
and options that have the tool load or run code the command names, in every form a tool's own
parser reads (separate, glued, ``=``, clusters, abbreviations, go's single dash).

What is decided from words here is what `decide` and verification decide; the end-to-end proof
(a real host, a real make) is tests/host/test_criteria_arguments_e2e.py.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from core.criteria.allowlist import (
    DEFAULT_ALLOWLIST,
    DEFAULT_POLICY,
    NOT_LISTED,
    allowlisted,
    approval_reason,
    command_key,
    decide,
    needs_approval,
)
from core.criteria.tool_arguments import TOOLS, argument_problem, outside_path

# Everything the allowlist admitted before that touches nothing outside the checkout.
SAFE = [
    "make", "make test", "make -j4 test", "make -j 4 test", "make -k -s test", "make -C build test",
    "make -Cbuild test", "make --directory=build test", "make -f build/Makefile test",
    "make -I include test", "make V=1 test", "make test CFLAGS=-O2", "make lint PYTHON=python3.11",
    "pytest", "pytest -q", "pytest tests/test_x.py", "pytest tests/test_x.py::test_a -x -q",
    "pytest -k 'not slow and api'", "pytest -m unit", "pytest -p no:cacheprovider",
    "pytest -pno:cacheprovider", "pytest -qp no:randomly", "pytest -W error",
    "pytest -W error::DeprecationWarning", "pytest -Werror::UserWarning",
    "pytest --pythonwarnings=ignore::ResourceWarning", "pytest -o log_cli=true",
    "pytest --override-ini=xfail_strict=true", "pytest --rootdir=. tests", "pytest -c pytest.ini",
    "pytest --basetemp=.tmp", "pytest --junitxml=reports/junit.xml", "pytest --cov=src",
    "pytest --cov-report=html:reports/cov", "pytest -n 4", "pytest -rA", "pytest --co",
    "py.test -q tests", "python -m pytest -q", "python3 -u -m pytest tests",
    "python3 -W error::DeprecationWarning -m pytest", "python3 -X dev -m pytest",
    "ruff check .", "ruff check --fix src", "ruff format --check .",
    "ruff check --config ruff.toml",
    "ruff check --config 'line-length = 100'", "flake8", "flake8 --config setup.cfg src",
    "mypy .", "mypy core --strict", "mypy --config-file mypy.ini", "mypy -p core",
    "pyright", "pyright -p pyrightconfig.json", "pylint src", "pylint --output-format=json src",
    "pylint -f colorized src", "black --check .", "isort --check-only --diff .", "tox",
    "tox -e py311", "tox -e lint -- -x", "nox", "nox -s tests", "eslint .", "eslint -f json src",
    "eslint --format=stylish .", "eslint -c .eslintrc.json --ext .ts src", "tsc --noEmit",
    "tsc -p tsconfig.json", "jest", "jest --ci --coverage", "jest --testEnvironment=node",
    "jest --config jest.config.js", "jest -c jest.config.js", "vitest run", "vitest --run",
    "vitest --reporter=dot", "vitest --environment jsdom", "vitest --coverage",
    "prettier --check .",
    "prettier --write src", "npm test", "npm t", "npm test -- --coverage", "npm run lint",
    "npm run lint -- --fix", "npm run test:unit", "npm test --silent", "npm test --if-present",
    "yarn test", "yarn lint", "pnpm test", "cargo test", "cargo test --all",
    "cargo build --release",
    "cargo clippy -- -D warnings", "cargo test -p core --features a,b", "cargo fmt -- --check",
    "cargo test --manifest-path sub/Cargo.toml", "go test ./...", "go test -run TestA -v ./...",
    "go vet ./...", "go build -o bin/app ./cmd/app", "go build -ldflags=-s",
    "go build -ldflags '-s -w -X main.v=1'", "go build -ldflags=-extldflags=-static",
    "gradle test", "gradle build", "gradle check --tests com.acme.FooTest", "gradle test -x lint",
    "gradle test clean", "gradlew check --info", "mvn test", "mvn verify -q", "mvn test clean",
    "mvn test -Dtest=FooTest", "mvn verify -pl core -am", "mvnw package -DskipTests",
    "make -Cbuild/sub test", "make -Iinclude/sub test", "pytest -ktest_a/b", "npm test -- -c",
    "npm test -- --config jest.config.js", "cargo test -- --config x", "tox -e lint -- -x",
]  # fmt: skip


@pytest.mark.parametrize("command", SAFE)
def test_safe_arguments_still_run_unattended(command: str) -> None:
    argv = shlex.split(command)
    assert approval_reason(argv, DEFAULT_POLICY) is None, command
    assert allowlisted(argv, DEFAULT_POLICY) and not needs_approval(argv, DEFAULT_POLICY)


OUTSIDE = "names a path outside the checkout"
CODE = "loads or runs code the command names"

# (command, what the reason must say)
NEEDS_APPROVAL = [
    # make: another folder, makefile or include folder outside, code on the command line
    ("make -C /tmp/evil x", f"{OUTSIDE} ('/tmp/evil')"),
    ("make -C/tmp/evil x", f"{OUTSIDE} ('/tmp/evil')"),
    ("make -sC/tmp/evil x", f"{OUTSIDE} ('/tmp/evil')"),
    ("make --directory=/tmp/evil x", f"{OUTSIDE} ('/tmp/evil')"),
    ("make --directory /tmp/evil x", f"{OUTSIDE} ('/tmp/evil')"),
    ("make --dir=/tmp/evil x", f"{OUTSIDE} ('/tmp/evil')"),
    ("make -C ../other x", f"{OUTSIDE} ('../other')"),
    ("make -C build/../../other x", f"{OUTSIDE} ('build/../../other')"),
    ("make -C ~/other x", f"{OUTSIDE} ('~/other')"),
    ("make -C ~ x", f"{OUTSIDE} ('~')"),
    ("make -f /tmp/evil/Makefile", f"{OUTSIDE} ('/tmp/evil/Makefile')"),
    ("make -f/tmp/evil/Makefile", f"{OUTSIDE} ('/tmp/evil/Makefile')"),
    ("make --file=/tmp/evil/Makefile", f"{OUTSIDE} ('/tmp/evil/Makefile')"),
    ("make --makefile /tmp/evil/Makefile", f"{OUTSIDE} ('/tmp/evil/Makefile')"),
    ("make -I /tmp/evil test", f"{OUTSIDE} ('/tmp/evil')"),
    ("make -I../evil test", f"{OUTSIDE} ('../evil')"),
    ("make --include-dir=/tmp/evil test", f"{OUTSIDE} ('/tmp/evil')"),
    ("make --eval='$(shell touch x)' test", "passes `--eval=$(shell touch x)`"),
    ("make --eval '$(shell touch x)' test", "passes `--eval`"),
    ("make --ev='$(shell touch x)' test", "passes `--ev=$(shell touch x)` (make's `--eval`)"),
    ("make -E '$(shell touch x)' test", "passes `-E`"),
    ("make -E'$(shell touch x)' test", "passes `-E$(shell touch x)`"),
    ("make -ksE'$(shell touch x)' test", "passes `-E$(shell touch x)`"),
    ("make 'A:=$(shell touch x)' test", "sets the make variable `A:=$(shell touch x)`"),
    ("make 'A!=touch x' test", "sets the make variable `A!=touch x`"),
    ("make 'A=$(shell touch x)' test", "sets the make variable"),
    ("make 'ARGS=x; touch y' test", "sets the make variable"),
    ("make 'ARGS=`touch y`' test", "sets the make variable"),
    ("make SHELL=bash test", "sets the make variable `SHELL=bash`"),
    ("make MAKEFLAGS=-e test", "sets the make variable `MAKEFLAGS=-e`"),
    ("make SHELL=/tmp/evil test", f"{OUTSIDE} ('/tmp/evil')"),
    ("make PREFIX=/usr/local install", f"{OUTSIDE} ('/usr/local')"),
    ("make @args test", "reads more arguments from a file"),
    # pytest: paths, plugins, module imports, ini overrides, remote and paste
    ("pytest /tmp/evil/test_x.py", f"{OUTSIDE} ('/tmp/evil/test_x.py')"),
    ("pytest ../other/tests", f"{OUTSIDE} ('../other/tests')"),
    ("pytest ~/tests", f"{OUTSIDE} ('~/tests')"),
    ("pytest --rootdir=/", f"{OUTSIDE} ('/')"),
    ("pytest --rootdir /tmp", f"{OUTSIDE} ('/tmp')"),
    ("pytest -c /tmp/evil/pytest.ini", f"{OUTSIDE} ('/tmp/evil/pytest.ini')"),
    ("pytest -c/tmp/evil/pytest.ini", f"{OUTSIDE} ('/tmp/evil/pytest.ini')"),
    ("pytest --config-file=/tmp/evil.ini", f"{OUTSIDE} ('/tmp/evil.ini')"),
    ("pytest --confcutdir=/", f"{OUTSIDE} ('/')"),
    ("pytest --basetemp=/home", f"{OUTSIDE} ('/home')"),
    ("pytest --junitxml=/tmp/out.xml", f"{OUTSIDE} ('/tmp/out.xml')"),
    ("pytest --cov-report=html:/tmp/cov", f"{OUTSIDE} ('/tmp/cov')"),
    ("pytest -p evil", "passes `-p evil`"),
    ("pytest -pevil", "passes `-pevil`"),
    ("pytest -qpevil", "passes `-pevil`"),
    ("pytest -p pip.__main__", "passes `-p pip.__main__`"),
    ("pytest --pyargs json", "passes `--pyargs`"),
    ("pytest -W error::evil.Warning", "passes `-W error::evil.Warning`"),
    ("pytest -Werror::evil.Warning", "passes `-Werror::evil.Warning`"),
    ("pytest --pythonwarnings=error::evil.W", "passes `--pythonwarnings=error::evil.W`"),
    ("pytest -o addopts=-pevil", "passes `-o addopts=-pevil`"),
    ("pytest -o pythonpath=evil", "passes `-o pythonpath=evil`"),
    ("pytest --override-ini=cache_dir=x", "passes `--override-ini=cache_dir=x`"),
    ("pytest --pdbcls=evil:Pdb", "passes `--pdbcls=evil:Pdb`"),
    ("pytest --tx ssh=host -n 2", "passes `--tx`"),
    ("pytest --pastebin=all", "passes `--pastebin=all`"),
    ("pytest @args.txt", "passes '@args.txt', which reads more arguments from a file"),
    ("python -m pytest -p evil", "passes `-p evil`"),
    ("python3 -W error::pip.__main__.X -m pytest", "passes `-W error::pip.__main__.X`"),
    ("python3 -X pycache_prefix=/tmp/x -m pytest", f"{OUTSIDE} ('/tmp/x')"),
    # linters and type checkers
    ("ruff check /etc", f"{OUTSIDE} ('/etc')"),
    ("ruff check --config /tmp/ruff.toml", f"{OUTSIDE} ('/tmp/ruff.toml')"),
    ("ruff check --config \"extend = '/tmp/ruff.toml'\"", f"{OUTSIDE} ('/tmp/ruff.toml')"),
    ("flake8 --append-config=/tmp/x.cfg", f"{OUTSIDE} ('/tmp/x.cfg')"),
    ("mypy --python-executable python3", "passes `--python-executable`"),
    ("mypy --python-exec=evil", "(mypy's `--python-executable`)"),
    ("mypy --install-types --non-interactive", "passes `--install-types`"),
    ("mypy @files.txt", "reads more arguments from a file"),
    ("pyright --pythonpath evil", "passes `--pythonpath`"),
    ("pylint --init-hook='import os' src", "passes `--init-hook=import os`"),
    ("pylint --load-plugins=evil src", "passes `--load-plugins=evil`"),
    ("pylint --output-format=evil.Reporter src", "passes `--output-format=evil.Reporter`"),
    ("black /etc", f"{OUTSIDE} ('/etc')"),
    ("isort --settings-path=/tmp/isort.cfg .", f"{OUTSIDE} ('/tmp/isort.cfg')"),
    ("tox -x testenv.commands=touch", "passes `-x`"),
    ("tox --override=testenv.commands=touch", "passes `--override=testenv.commands=touch`"),
    ("tox --force-dep evil", "passes `--force-dep`"),
    ("tox e -e py -- touch x", "asks tox for 'e', which runs any program"),
    ("tox exec -- touch x", "asks tox for 'exec', which runs any program"),
    ("tox -c /tmp/tox.ini", f"{OUTSIDE} ('/tmp/tox.ini')"),
    ("nox -f /tmp/noxfile.py", f"{OUTSIDE} ('/tmp/noxfile.py')"),
    ("eslint --plugin evil .", "passes `--plugin`"),
    ("eslint --parser evil .", "passes `--parser`"),
    ("eslint -f evil .", "passes `-f evil`"),
    ("eslint --format=./evil.js .", "passes `--format=./evil.js`"),
    ("eslint --inspect-config", "passes `--inspect-config`"),
    ("eslint --rulesdir /tmp/rules .", f"{OUTSIDE} ('/tmp/rules')"),
    ("tsc -p /tmp/tsconfig.json", f"{OUTSIDE} ('/tmp/tsconfig.json')"),
    ("tsc --outDir /tmp/out", f"{OUTSIDE} ('/tmp/out')"),
    ("jest --setupFiles=evil", "passes `--setupFiles=evil`"),
    ("jest --setup-files=evil", "passes `--setup-files=evil` (jest's `--setupFiles`)"),
    ("jest --testRunner evil", "passes `--testRunner`"),
    ("jest --testEnvironment=evil", "passes `--testEnvironment=evil`"),
    ("jest --config '{\"globalSetup\":\"evil\"}'", "passes `--config {\"globalSetup\":\"evil\"}`"),
    ("jest --rootDir /tmp", f"{OUTSIDE} ('/tmp')"),
    ("vitest --inspect", "passes `--inspect`"),
    ("vitest --api.port=3000", "passes `--api.port=3000`, with which vitest"),
    ("vitest --reporter=./evil.js", "passes `--reporter=./evil.js`"),
    ("vitest --environment evil", "passes `--environment evil`"),
    ("vitest --config /tmp/vitest.config.ts", f"{OUTSIDE} ('/tmp/vitest.config.ts')"),
    ("prettier --plugin=evil --check .", "passes `--plugin=evil`"),
    ("prettier --write /etc", f"{OUTSIDE} ('/etc')"),
    # package managers: a prefix elsewhere, npm configuration that names a program
    ("npm test --prefix /tmp/evil", f"{OUTSIDE} ('/tmp/evil')"),
    ("npm test --prefix=/tmp/evil", f"{OUTSIDE} ('/tmp/evil')"),
    ("npm test -C /tmp/evil", f"{OUTSIDE} ('/tmp/evil')"),
    ("npm test --script-shell=evil", "passes `--script-shell=evil`"),
    ("npm test --script-sh evil", "(npm's `--script-shell`)"),
    ("npm test --script_shell=evil", "(npm's `--script-shell`)"),
    ("npm test --node-options=--require=evil", "passes `--node-options=--require=evil`"),
    ("npm test --userconfig /tmp/npmrc", f"{OUTSIDE} ('/tmp/npmrc')"),
    ("npm run lint -- --config /tmp/eslintrc", f"{OUTSIDE} ('/tmp/eslintrc')"),
    ("npm test -- @args", "reads more arguments from a file"),
    ("make -- 'A:=$(shell touch x)' test", "sets the make variable"),
    ("pytest -- /tmp/evil", f"{OUTSIDE} ('/tmp/evil')"),
    ("tox -e py -- ../x", f"{OUTSIDE} ('../x')"),
    ("yarn test --cwd /tmp/evil", f"{OUTSIDE} ('/tmp/evil')"),
    ("yarn lint --inspect", "passes `--inspect`"),
    ("pnpm test --dir=/tmp/evil", f"{OUTSIDE} ('/tmp/evil')"),
    ("pnpm test --config.script-shell=evil", "passes `--config.script-shell=evil`"),
    ("cargo test --manifest-path /tmp/evil/Cargo.toml", f"{OUTSIDE} ('/tmp/evil/Cargo.toml')"),
    ("cargo test --manifest-path=../evil/Cargo.toml", f"{OUTSIDE} ('../evil/Cargo.toml')"),
    ("cargo test -C /tmp/evil", f"{OUTSIDE} ('/tmp/evil')"),
    ("cargo test --target-dir /tmp/t", f"{OUTSIDE} ('/tmp/t')"),
    ("cargo test --config 'build.rustc-wrapper=\"evil\"'", "passes `--config`"),
    ("cargo test --config=net.offline=true", "passes `--config=net.offline=true`"),
    ("cargo build -Zunstable-options", "passes `-Zunstable-options`"),
    ("cargo test -- --logfile /tmp/log", f"{OUTSIDE} ('/tmp/log')"),
    ("go test -C /tmp/evil ./...", f"{OUTSIDE} ('/tmp/evil')"),
    ("go test ../...", f"{OUTSIDE} ('../...')"),
    ("go test -exec evil ./...", "passes `-exec` (go's `--exec`)"),
    ("go test --exec=evil ./...", "passes `--exec=evil`"),
    ("go build -toolexec=evil ./...", "passes `-toolexec=evil` (go's `--toolexec`)"),
    ("go vet -vettool=evil ./...", "passes `-vettool=evil` (go's `--vettool`)"),
    ("go build -ldflags=-extld=evil ./...", "passes `-ldflags=-extld=evil`"),
    ("go build -ldflags '-linkmode external -extld evil'", "passes `-ldflags -linkmode"),
    ("go build -gccgoflags=-wrapper ./...", "passes `-gccgoflags=-wrapper`"),
    ("go test -overlay=/tmp/overlay.json ./...", f"{OUTSIDE} ('/tmp/overlay.json')"),
    ("go build -o /usr/local/bin/app ./cmd", f"{OUTSIDE} ('/usr/local/bin/app')"),
    # build tools whose extra positional words are tasks: only the harmless ones
    ("gradle test publish", "asks gradle for 'publish'"),
    ("gradle build run", "asks gradle for 'run'"),
    ("gradle test -I /tmp/init.gradle", f"{OUTSIDE} ('/tmp/init.gradle')"),
    ("gradle test --init-script=/tmp/init.gradle", f"{OUTSIDE} ('/tmp/init.gradle')"),
    ("gradle test -p /tmp/evil", f"{OUTSIDE} ('/tmp/evil')"),
    ("gradle test -Dorg.gradle.java.home=/tmp/jdk", f"{OUTSIDE} ('/tmp/jdk')"),
    ("gradlew check -g /tmp/home", f"{OUTSIDE} ('/tmp/home')"),
    ("mvn test deploy", "asks mvn for 'deploy'"),
    ("mvn test install", "asks mvn for 'install'"),
    ("mvn test exec:exec", "asks mvn for 'exec:exec'"),
    ("mvn verify -f /tmp/evil/pom.xml", f"{OUTSIDE} ('/tmp/evil/pom.xml')"),
    ("mvn test -s /tmp/settings.xml", f"{OUTSIDE} ('/tmp/settings.xml')"),
    ("mvn test -Dmaven.repo.local=/tmp/m2", f"{OUTSIDE} ('/tmp/m2')"),
    ("mvnw package -Dmaven.ext.class.path=/tmp/evil.jar", f"{OUTSIDE} ('/tmp/evil.jar')"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "why"), NEEDS_APPROVAL)
def test_dangerous_arguments_wait_for_approval(command: str, why: str) -> None:
    argv = shlex.split(command)
    reason = approval_reason(argv, DEFAULT_POLICY)
    assert reason is not None and why in reason, (command, reason)
    assert not allowlisted(argv, DEFAULT_POLICY) and needs_approval(argv, DEFAULT_POLICY)


def test_every_tool_on_the_default_allowlist_has_a_table() -> None:
    # A tool added to the list without one would run with any arguments at all.
    assert set(TOOLS) == set(DEFAULT_ALLOWLIST)


def test_the_operators_own_tools_are_not_inspected() -> None:
    policy = replace(DEFAULT_POLICY, allowlist=DEFAULT_POLICY.allowlist | {"hatch"})
    assert approval_reason(["hatch", "run", "/opt/x"], policy) is None
    assert argument_problem("hatch", ["/opt/x"]) is None


def test_an_approved_command_runs_whatever_its_arguments(tmp_path: Path) -> None:
    argv = ["make", "-C", "/tmp/evil", "x"]
    policy = replace(DEFAULT_POLICY, approved=frozenset({command_key(argv)}))
    assert not needs_approval(argv, policy)
    decision = decide(argv, policy, shell=False, search_path="/usr/bin:/bin", cwd=tmp_path,
                      checkout=tmp_path)  # fmt: skip
    assert decision.verdict in ("run", "missing")  # missing only where make is not installed


def test_an_unknown_tool_is_still_refused_for_not_being_listed() -> None:
    assert approval_reason(["curl", "/etc/passwd"], DEFAULT_POLICY) == NOT_LISTED


@pytest.mark.parametrize(
    ("word", "base", "outside"),
    [
        ("../x", "sub", None),  # from sub/, ../x is the checkout's x
        ("../../x", "sub", "../../x"),
        ("a/../b", ".", None),
        ("a/../../b", ".", "a/../../b"),
        ("./...", ".", None),
        ("...", ".", None),
        ("--flag=a,b", ".", None),
        ("--flag=a,/b", ".", "/b"),
        ("-I/abs", ".", "/abs"),
        ("-kx/y", ".", None),
        ("-Xfoo/bar", ".", None),
        ("tests/a.py::TestA::test_b", ".", None),
        ("file:///srv/x", ".", "///srv/x"),
        ("name~1", ".", None),
        ("~user/x", ".", "~user/x"),
    ],
)
def test_what_counts_as_outside(word: str, base: str, outside: str | None) -> None:
    assert outside_path(word, base) == outside


def test_decide_reads_dot_dot_from_the_criterions_working_folder(tmp_path: Path) -> None:
    checkout = tmp_path.resolve()
    (checkout / "sub").mkdir()
    sub = checkout / "sub"
    inside = decide(["pytest", "../tests"], DEFAULT_POLICY, shell=False,
                    search_path="/nonexistent", cwd=sub, checkout=checkout)  # fmt: skip
    assert inside.verdict == "missing"  # judged safe; only pytest itself is not on this PATH
    above = decide(["pytest", "../tests"], DEFAULT_POLICY, shell=False,
                   search_path="/nonexistent", cwd=checkout, checkout=checkout)  # fmt: skip
    assert above.verdict == "needs_approval"
    assert above.reason == f"{OUTSIDE} ('../tests')"


# -- extraction: such a command is kept, and marked as waiting --------------------------------


@pytest.mark.parametrize(
    ("text", "command", "why"),
    [
        ("Run `make -C /tmp/evil x`.", ["make", "-C", "/tmp/evil", "x"],
         f"{OUTSIDE} ('/tmp/evil')"),
        ("`pytest /tmp/evil/test_x.py` passes.", ["pytest", "/tmp/evil/test_x.py"],
         f"{OUTSIDE} ('/tmp/evil/test_x.py')"),
        ("Make sure `make --eval=x test` succeeds.", ["make", "--eval=x", "test"],
         "passes `--eval=x`"),
        ("Run `pytest -p evil` again.", ["pytest", "-p", "evil"], "passes `-p evil`"),
        ("Run `npm test --prefix=../other`.", ["npm", "test", "--prefix=../other"],
         f"{OUTSIDE} ('../other')"),
        ("`cargo test --config x` must pass.", ["cargo", "test", "--config", "x"],
         "passes `--config`"),
    ],
)  # fmt: skip
def test_an_extracted_command_that_reaches_outside_is_marked_as_waiting(
    text: str, command: list[str], why: str
) -> None:
    from core.criteria.extract import extract_criteria

    result = extract_criteria(text, universal=False)
    assert [c["command"] for c in result.criteria] == [command]
    waits = f"`{shlex.join(command)}` waits for an operator's approval before it runs: it {why}"
    assert result.notes[0].startswith(waits), result.notes
    assert needs_approval(command, DEFAULT_POLICY)


def test_a_safe_extracted_command_carries_no_such_note() -> None:
    from core.criteria.extract import extract_criteria

    result = extract_criteria("Run `make test` and `pytest -q tests`.", universal=False)
    assert [c["command"] for c in result.criteria] == [["make", "test"], ["pytest", "-q", "tests"]]
    assert not any("approval" in note for note in result.notes)


def test_criteria_a_dispatch_lists_are_marked_too() -> None:
    from core.criteria.at_dispatch import criteria_for_dispatch

    listed = {"type": "command_success", "command": ["make", "-C", "/tmp/evil", "x"],
              "description": "builds"}  # fmt: skip
    extraction, _ = criteria_for_dispatch({"acceptance_criteria": [listed]})
    assert extraction.notes[0] == (
        "`make -C /tmp/evil x` waits for an operator's approval before it runs: it names a path "
        "outside the checkout ('/tmp/evil')"
    )


# -- verification: a real make never runs a makefile outside the checkout ---------------------


def test_verification_does_not_run_make_in_a_folder_outside_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.criteria.verify import verify_criterion

    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "pwned"
    (evil / "Makefile").write_text(f"x:\n\ttouch {marker}\n")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "Makefile").write_text("x:\n\ttrue\n")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    for command in (
        ["make", "-C", str(evil), "x"],
        ["make", f"-C{evil}", "x"],
        ["make", f"--directory={evil}", "x"],
        ["make", "-f", str(evil / "Makefile"), "x"],
        ["make", f"--eval=include {evil}/Makefile", "x"],
        ["make", "-C", "../evil", "x"],
    ):
        criterion = {"type": "command_success", "command": command, "description": "builds"}
        outcome = verify_criterion(criterion, checkout.resolve(), DEFAULT_POLICY)
        assert outcome.status == "needs_approval", (command, outcome.output)
        assert outcome.output.startswith(f"needs approval: `{shlex.join(command)}` ")
    assert not marker.exists()
    # The same make, asked for the checkout's own target, runs.
    plain = {"type": "command_success", "command": ["make", "x"], "description": "builds"}
    assert verify_criterion(plain, checkout.resolve(), DEFAULT_POLICY).status == "passed"
