"""A run's diff, on real repositories: where it is read, its files, its patch read lazily and a
page at a time, and every line of worker text masked and made inert."""

from __future__ import annotations

import itertools
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.repos.diff import (
    MAX_LINE_CHARS,
    DiffRefusal,
    DiffSource,
    diff_files,
    finding_files,
    index_patch,
    iter_patch_lines,
    line_kind,
    patch_page,
    run_diff_source,
    search_patch,
    shown_line,
)
from core.repos.git import GitError
from core.store.sqlite_store import SqliteStore
from core.text import unsafe
from tests.core.store_helpers import make_run
from tests.diffrepo import FAKE_KEY, build_diff_repo, dated_commit, record_diff
from tests.gitrepo import run_git


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "jarvis.db")
    yield opened
    opened.close()


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, str]:
    return build_diff_repo(tmp_path / "repo")


def patch(repo: tuple[Path, str, str]) -> list[str]:
    path, base, head = repo
    with iter_patch_lines(path, base, head) as lines:
        return list(lines)


# -- where ---------------------------------------------------------------------------------------


def test_a_run_that_does_not_exist_is_not_found(store: SqliteStore) -> None:
    found = run_diff_source(store, "run-nope")
    assert found == DiffRefusal("not_found", "There is no run run-nope.")


def test_a_run_with_no_checked_commit_has_no_diff_and_says_why(store: SqliteStore) -> None:
    make_run(store, "r1", RunState.RUNNING)
    found = run_diff_source(store, "r1")
    assert isinstance(found, DiffRefusal) and found.code == "no_diff"
    assert found.message.startswith("Run r1 has no checked commit yet")


def test_a_checkout_with_no_repository_has_no_diff(store: SqliteStore, tmp_path: Path) -> None:
    from core.repos import records
    from core.repos.claims import ClaimCheck

    make_run(store, "r1", RunState.FAILED_CONTRACT)
    with store.transaction() as tx:
        records.record_check(tx, "r1", 1, "", ClaimCheck([]))  # what the host records then
    found = run_diff_source(store, "r1")
    assert isinstance(found, DiffRefusal) and found.code == "no_diff"
    assert "held no git repository" in found.message


def test_the_diff_is_read_from_the_configured_repository_even_with_its_worktree_gone(
    store: SqliteStore, repo: tuple[Path, str, str], tmp_path: Path
) -> None:
    path, base, head = repo
    make_run(store, "r1", RunState.REVIEW_REQUESTED)
    record_diff(store, "r1", path, base, head, checkout=tmp_path / "removed-worktree")
    found = run_diff_source(store, "r1")
    assert found == DiffSource("r1", 1, path, base, head)


def test_without_a_configured_repository_the_diff_is_read_from_the_checkout(
    store: SqliteStore, repo: tuple[Path, str, str]
) -> None:
    path, base, head = repo
    make_run(store, "r1", RunState.REVIEW_REQUESTED)
    record_diff(store, "r1", path, base, head, configured=False)
    found = run_diff_source(store, "r1")
    assert isinstance(found, DiffSource) and found.repo == path


def test_the_latest_checked_attempt_is_the_one_shown(
    store: SqliteStore, repo: tuple[Path, str, str]
) -> None:
    path, base, head = repo
    make_run(store, "r1", RunState.REVIEW_REQUESTED)
    record_diff(store, "r1", path, base, base, attempt=1)
    record_diff(store, "r1", path, base, head, attempt=2)
    found = run_diff_source(store, "r1")
    assert isinstance(found, DiffSource) and (found.attempt, found.head) == (2, head)


def test_commits_no_longer_in_the_repository_are_no_diff(
    store: SqliteStore, repo: tuple[Path, str, str], tmp_path: Path
) -> None:
    path, base, head = repo
    make_run(store, "r1", RunState.REVIEW_REQUESTED)
    record_diff(store, "r1", path, base, head)
    other = tmp_path / "other"
    other.mkdir()
    run_git(other, "init", "--quiet", "-b", "main")
    with store.transaction() as tx:
        tx.execute("UPDATE run_git SET repo_dir = ? WHERE run_id = 'r1'", [str(other)])
    found = run_diff_source(store, "r1")
    assert isinstance(found, DiffRefusal) and "no longer holds run r1's commits" in found.message
    with store.transaction() as tx:
        tx.execute("UPDATE run_git SET repo_dir = ? WHERE run_id = 'r1'", [str(tmp_path / "x")])
    found = run_diff_source(store, "r1")
    assert isinstance(found, DiffRefusal) and "no longer there" in found.message


# -- files and the patch -------------------------------------------------------------------------


def test_the_files_with_their_counts(repo: tuple[Path, str, str]) -> None:
    files = {f.path: (f.status, f.additions, f.deletions) for f in diff_files(*repo)}
    assert files == {
        "docs/long.md": ("A", 60, 0),
        "notes/hostile.txt": ("A", 3, 0),
        "scripts/deploy.sh": ("A", 3, 0),
        "src/app.py": ("M", 2, 2),
    }


def test_the_patch_is_gits_unified_diff_line_by_line(repo: tuple[Path, str, str]) -> None:
    path, base, head = repo
    lines = patch(repo)
    expected = run_git(path, "diff", "--no-renames", base, head).splitlines()
    assert len(lines) == len(expected)
    # The same lines as git's own, but for what is masked.
    same = [a == b for a, b in zip(lines, expected, strict=True)]
    assert same.count(False) == 1
    assert [line_kind(line) for line in lines[:6]] == ["file", "meta", "meta", "file", "file",
                                                         "hunk"]  # fmt: skip


def test_git_is_told_to_ignore_a_repositorys_own_diff_programs(
    repo: tuple[Path, str, str], tmp_path: Path
) -> None:
    # A worker can write the repository's configuration: an external diff and a text
    # conversion would run its commands on the operator's machine.
    path, base, head = repo
    marker = tmp_path / "ran"
    run_git(path, "config", "diff.external", f"touch {marker}; true")
    run_git(path, "config", "diff.evil.textconv", f"touch {marker}; cat")
    (path / ".git" / "info" / "attributes").write_text("* diff=evil\n")
    run_git(path, "config", "diff.noprefix", "true")
    lines = patch(repo)
    assert not marker.exists()
    assert lines[0] == "diff --git a/docs/long.md b/docs/long.md"


def test_a_file_named_like_an_option_is_only_a_path(tmp_path: Path) -> None:
    path, base, _head = build_diff_repo(tmp_path / "repo")
    head = dated_commit(path, {"--output=x": "oops\n", "*": "star\n"}, "odd names")
    with iter_patch_lines(path, base, head, paths=["--output=x"]) as lines:
        got = list(lines)
    assert got[0] == "diff --git a/--output=x b/--output=x"
    assert not (path / "x").exists()
    with iter_patch_lines(path, base, head, paths=["*"]) as lines:
        star = [line for line in lines if line.startswith("diff --git")]
    assert star == ["diff --git a/* b/*"]  # literally `*`, not every file


def test_a_bad_commit_is_a_git_error_with_gits_sentence(repo: tuple[Path, str, str]) -> None:
    path, base, _head = repo
    with pytest.raises(GitError, match="failed"), iter_patch_lines(path, base, "0" * 40) as lines:
        list(lines)


# -- lazily ----------------------------------------------------------------------------------


@pytest.fixture
def large(tmp_path: Path) -> tuple[Path, str, str]:
    """A patch of about 200,000 lines (4 MB): far more than a pipe and a read buffer hold."""
    path, base, _ = build_diff_repo(tmp_path / "repo")
    files = {
        f"gen/part{n}.txt": "".join(f"generated line {i} of part {n}\n" for i in range(20_000))
        for n in range(10)
    }
    head = dated_commit(path, files, "generate")
    return path, base, head


def test_a_reader_that_stops_early_ends_git_before_it_wrote_the_patch(
    large: tuple[Path, str, str],
) -> None:
    path, base, head = large
    with iter_patch_lines(path, base, head) as lines:
        first = list(itertools.islice(lines, 10))
    assert first[0] == "diff --git a/gen/part0.txt b/gen/part0.txt"
    assert lines.lines_read == 10 and lines.bytes_read < 1000
    # git was blocked on a full pipe with most of the patch unwritten, and was ended.
    assert lines.stopped and not lines.finished
    assert lines._stream is not None and lines._stream.returncode == -signal.SIGKILL


def test_a_reader_read_to_the_end_lets_git_finish(repo: tuple[Path, str, str]) -> None:
    path, base, head = repo
    with iter_patch_lines(path, base, head) as lines:
        count = sum(1 for _ in lines)
    assert count > 60 and lines.finished and not lines.stopped


def test_a_page_reads_only_up_to_its_end(large: tuple[Path, str, str]) -> None:
    path, base, head = large
    page = patch_page(path, base, head, 100, 50)
    assert len(page.lines) == 50 and page.more
    assert page.lines_read == 151  # the 100 before it, its 50, and one to know more follow
    whole = patch_page(path, base, head, 0, 10**9)
    assert page.lines == whole.lines[100:150]


def test_with_an_index_a_deep_page_reads_only_its_own_file(large: tuple[Path, str, str]) -> None:
    path, base, head = large
    files = [f.path for f in diff_files(path, base, head)]
    index = index_patch(path, base, head, files=files)
    assert index is not None and index.narrowable
    assert [span.path for span in index.spans] == files
    part9 = index.spans[files.index("gen/part9.txt")]
    start = part9.start + 5_000
    page = patch_page(path, base, head, start, 100, index=index)
    # The lines before the page in its own file, and the page: nothing of the nine before.
    assert page.lines_read <= 5_000 + 101
    plain = patch_page(path, base, head, start, 100)
    assert page.lines == plain.lines and plain.lines_read > 150_000
    assert page.lines[0] == "+generated line 4994 of part 9"
    last = patch_page(path, base, head, index.lines - 3, 100, index=index)
    assert len(last.lines) == 3 and not last.more


def test_an_index_counts_lines_and_finds_each_files_first_hunk(
    repo: tuple[Path, str, str],
) -> None:
    path, base, head = repo
    lines = patch(repo)
    index = index_patch(path, base, head, files=[f.path for f in diff_files(*repo)])
    assert index is not None and index.lines == len(lines)
    hunk = index.first_hunk("scripts/deploy.sh")
    assert hunk is not None and lines[hunk].startswith("@@ ")
    assert lines[index.spans[index.span_at(hunk)].start] == (
        "diff --git a/scripts/deploy.sh b/scripts/deploy.sh"
    )
    assert index.first_hunk("not/in/it") is None
    assert index_patch(path, base, head, stop=lambda: True) is None


def test_a_type_change_is_one_file_in_the_index(tmp_path: Path) -> None:
    path, base, _ = build_diff_repo(tmp_path / "repo")
    (path / "README.md").unlink()
    (path / "README.md").symlink_to("src/app.py")
    head = dated_commit(path, {}, "link")
    index = index_patch(path, base, head, files=[f.path for f in diff_files(path, base, head)])
    assert index is not None and index.narrowable
    assert [span.path for span in index.spans] == ["README.md"]


def test_search_finds_lines_by_what_is_shown(repo: tuple[Path, str, str]) -> None:
    path, base, head = repo
    lines = patch(repo)
    found = search_patch(path, base, head, "LINE 7 OF")
    assert found is not None and not found.more
    assert [lines[n] for n in found.matches] == ["+line 7 of the long file"]
    # A secret is found by nothing but its mask: a search cannot probe for its value.
    assert search_patch(path, base, head, FAKE_KEY[:20]) == type(found)(FAKE_KEY[:20], [], False)
    assert found and search_patch(path, base, head, "sk-a****") is not None
    capped = search_patch(path, base, head, "line", limit=5)
    assert capped is not None and len(capped.matches) == 5 and capped.more


# -- inert, masked, bounded ------------------------------------------------------------------------


def test_worker_text_in_the_patch_is_masked_and_shown_inert(repo: tuple[Path, str, str]) -> None:
    lines = patch(repo)
    joined = "\n".join(lines)
    assert FAKE_KEY not in joined and FAKE_KEY[10:30] not in joined
    assert "+key = 'sk-a****'" in lines
    hostile = next(line for line in lines if "pwned" in line)
    assert "\x1b" in hostile  # the engine hands out the text; showing it is made inert
    shown = shown_line(hostile)
    assert not unsafe(keep_lines=False, keep_tabs=False).search(shown)
    assert shown.startswith("+\\x1b]0;pwned\\x07\\x1b[2J\\x1b]8;;http://evil.test")
    assert shown.endswith(" [bold]x[/]")  # markup is text: nothing here reads it
    assert shown_line("+\tindented") == "+       indented"


def test_a_private_keys_body_is_masked_line_by_line(tmp_path: Path) -> None:
    path, base, _ = build_diff_repo(tmp_path / "repo")
    body = ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "VTLw7onLRnrq0"]
    key = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----\n"])
    head = dated_commit(path, {"deploy/key.pem": key, "z.txt": "after\n"}, "a key")
    lines = patch((path, base, head))
    assert not any(part in line for part in body for line in lines)
    at = lines.index("+-----BEGIN RSA PRIVATE KEY-----")
    assert lines[at + 1 : at + 4] == ["+****", "+****", "+-----END RSA PRIVATE KEY-----"]
    assert "+after" in lines  # masking stops at the end marker


def test_a_very_long_line_is_cut_with_a_marker_and_its_length(tmp_path: Path) -> None:
    path, base, _ = build_diff_repo(tmp_path / "repo")
    head = dated_commit(path, {"min.js": "x" * 500_000 + "\n", "after.txt": "after\n"}, "min")
    lines = patch((path, base, head))
    long = next(line for line in lines if line.startswith("+xxx"))
    assert long == "+" + "x" * (MAX_LINE_CHARS - 1) + " … [line cut: 500,001 bytes]"
    assert "+after" in lines  # the rest of the line was skipped, not taken for new lines


def test_findings_name_the_diffs_files_their_gates_name() -> None:
    files = ["docs/long.md", "scripts/deploy.sh", "src/app.py", "src/app.pyc"]
    gates = [
        {"attempt": 1, "name": "scope_check", "passed": 0, "detail": "src/app.py is out"},
        {"attempt": 2, "name": "files_match_diff", "passed": 0,
         "detail": "changed but unclaimed: scripts/deploy.sh, src/app.py."},
        {"attempt": 2, "name": "risk_level", "passed": 1, "detail": "docs/long.md is fine"},
        {"attempt": 2, "name": "tests_pass", "passed": 0, "detail": "docs/long.md failed"},
    ]  # fmt: skip
    assert finding_files(gates, files) == ["scripts/deploy.sh", "src/app.py"]
    secret = [{"attempt": 1, "name": "secrets", "passed": 0, "detail": "docs/long.md:3 key"}]
    assert finding_files(secret, files) == ["docs/long.md"]
    assert finding_files([], files) == []
