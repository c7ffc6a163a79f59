"""Unified diff parser: one test per format feature, plus never-raise and linear-time checks."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.contracts import diffparse
from core.contracts.diffparse import AddedLine, parse_diff, unquote_c
from tests.work import growth, python_steps

MODIFY = """\
diff --git a/src/app.py b/src/app.py
index 1111111..2222222 100644
--- a/src/app.py
+++ b/src/app.py
@@ -1,4 +1,5 @@
 import os
-import sys
+import sys  # noqa
+import json
 
 def main():
@@ -10,2 +11,3 @@ def main():
     pass
+    return 0
 # end
"""


def test_modified_file_counts_and_added_line_numbers() -> None:
    diff = parse_diff(MODIFY)
    assert diff.ok
    (f,) = diff.files
    assert (f.old_path, f.new_path, f.status) == ("src/app.py", "src/app.py", "modified")
    assert (f.additions, f.deletions) == (3, 1)
    assert f.added_lines == (
        AddedLine(2, "import sys  # noqa"),
        AddedLine(3, "import json"),
        AddedLine(12, "    return 0"),
    )
    assert (diff.files_changed, diff.additions, diff.deletions) == (1, 3, 1)


def test_added_file_from_dev_null() -> None:
    diff = parse_diff(
        "diff --git a/n.txt b/n.txt\nnew file mode 100644\nindex 0000000..1\n"
        "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    )
    (f,) = diff.files
    assert (f.old_path, f.new_path, f.status, f.new_mode) == (None, "n.txt", "added", "100644")
    assert [a.line for a in f.added_lines] == [1, 2]


def test_deleted_file_to_dev_null() -> None:
    diff = parse_diff(
        "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\nindex 1..0000000\n"
        "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n"
    )
    (f,) = diff.files
    assert (f.old_path, f.new_path, f.status, f.deletions) == ("old.txt", None, "deleted", 2)
    assert f.old_mode == "100644"
    assert f.paths == ("old.txt",)


def test_pure_rename_without_hunks() -> None:
    diff = parse_diff(
        "diff --git a/a.py b/b.py\nsimilarity index 100%\nrename from a.py\nrename to b.py\n"
    )
    assert diff.ok
    (f,) = diff.files
    assert (f.old_path, f.new_path, f.status, f.similarity) == ("a.py", "b.py", "renamed", 100)
    assert f.paths == ("a.py", "b.py")


def test_rename_with_changes() -> None:
    diff = parse_diff(
        "diff --git a/a.py b/b.py\nsimilarity index 80%\nrename from a.py\nrename to b.py\n"
        "index 1..2 100644\n--- a/a.py\n+++ b/b.py\n@@ -1 +1 @@\n-x\n+y\n"
    )
    (f,) = diff.files
    assert (f.status, f.similarity, f.additions, f.deletions) == ("renamed", 80, 1, 1)


def test_copy() -> None:
    diff = parse_diff(
        "diff --git a/a.py b/c.py\nsimilarity index 95%\ncopy from a.py\ncopy to c.py\n"
    )
    (f,) = diff.files
    assert (f.old_path, f.new_path, f.status) == ("a.py", "c.py", "copied")


def test_mode_change_only() -> None:
    diff = parse_diff("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n")
    (f,) = diff.files
    assert (f.status, f.old_mode, f.new_mode, f.mode_changed) == (
        "modified",
        "100644",
        "100755",
        True,
    )


def test_bad_mode_is_a_problem() -> None:
    diff = parse_diff("diff --git a/x b/x\nold mode 644\nnew mode 100755\n")
    assert [p.code for p in diff.problems] == ["bad_mode"]


def test_binary_files_differ() -> None:
    diff = parse_diff(
        "diff --git a/logo.png b/logo.png\nindex 1..2 100644\n"
        "Binary files a/logo.png and b/logo.png differ\n"
    )
    (f,) = diff.files
    assert f.is_binary and f.path == "logo.png"


def test_git_binary_patch_is_skipped_and_next_file_parsed() -> None:
    diff = parse_diff(
        "diff --git a/img.bin b/img.bin\nnew file mode 100644\nindex 0..1\nGIT binary patch\n"
        "literal 12\n+password = 'looks like text but is base85'\n\nliteral 0\nHcmV?d00001\n\n"
        + MODIFY
    )
    assert diff.ok
    assert [f.path for f in diff.files] == ["img.bin", "src/app.py"]
    assert diff.files[0].is_binary and diff.files[0].status == "added"
    assert diff.files[0].added_lines == ()


def test_plain_binary_files_line_without_git_header() -> None:
    diff = parse_diff("Binary files a/x.bin and b/x.bin differ\n")
    (f,) = diff.files
    assert f.is_binary and f.paths == ("x.bin",)


def test_quoted_paths_with_spaces_and_octal_utf8() -> None:
    diff = parse_diff(
        'diff --git "a/docs/caf\\303\\251 menu.md" "b/docs/caf\\303\\251 menu.md"\n'
        "index 1..2 100644\n"
        '--- "a/docs/caf\\303\\251 menu.md"\n'
        '+++ "b/docs/caf\\303\\251 menu.md"\n'
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    assert diff.ok
    assert diff.files[0].path == "docs/café menu.md"


def test_unquoted_path_with_spaces() -> None:
    diff = parse_diff("diff --git a/my file.txt b/my file.txt\nold mode 100644\nnew mode 100755\n")
    assert diff.files[0].path == "my file.txt"


def test_rename_with_spaces_uses_rename_lines() -> None:
    diff = parse_diff(
        "diff --git a/a b/c b/a b/d\nsimilarity index 100%\nrename from a b/c\nrename to a b/d\n"
    )
    assert diff.ok
    assert diff.files[0].paths == ("a b/c", "a b/d")


def test_unquote_c() -> None:
    assert unquote_c('"a\\tb\\"c\\\\"rest') == ('a\tb"c\\', 11)
    assert unquote_c('"unterminated') == (None, 0)
    assert unquote_c("plain") == (None, 0)


def test_no_newline_at_end_markers() -> None:
    diff = parse_diff(
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n"
        "+new\n\\ No newline at end of file\n"
    )
    assert diff.ok
    assert (diff.additions, diff.deletions) == (1, 1)


def test_crlf_line_endings() -> None:
    diff = parse_diff(MODIFY.replace("\n", "\r\n"))
    assert diff.ok
    assert diff.files[0].path == "src/app.py"
    assert diff.files[0].added_lines[1] == AddedLine(3, "import json")


def test_plain_unified_diff_without_git_header() -> None:
    diff = parse_diff(
        "--- a/src/x.c\t2024-01-01 10:00:00.000000000 +0000\n"
        "+++ b/src/x.c\t2024-01-02 10:00:00.000000000 +0000\n"
        "@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        "--- a/src/y.c\n+++ b/src/y.c\n@@ -1 +1,2 @@\n y\n+z\n"
    )
    assert diff.ok
    assert [(f.path, f.additions) for f in diff.files] == [("src/x.c", 1), ("src/y.c", 1)]


def test_gnu_diff_r_header_lines() -> None:
    diff = parse_diff("diff -ru old/x new/x\n--- old/x\n+++ new/x\n@@ -1 +1 @@\n-a\n+b\n")
    assert diff.ok
    assert diff.files[0].paths == ("old/x", "new/x")


def test_format_patch_preamble_and_signature_are_ignored() -> None:
    text = (
        "From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] fix\n\n---\n src/app.py | 3 ++-\n\n"
        + MODIFY
        + "-- \n2.39.5\n"
    )
    diff = parse_diff(text)
    assert diff.ok, diff.problems
    assert diff.files_changed == 1


def test_empty_context_line_without_space() -> None:
    diff = parse_diff("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n")
    assert diff.ok


def test_empty_patch_has_no_files_and_no_problems() -> None:
    for text in ("", "\n", "  \n"):
        diff = parse_diff(text)
        assert diff.files == () and diff.ok


def test_text_that_is_not_a_diff() -> None:
    assert [p.code for p in parse_diff("hello world\n").problems] == ["not_a_diff"]


def test_truncated_hunk() -> None:
    diff = parse_diff("--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n a\n-b\n+c\n")
    assert "truncated_hunk" in [p.code for p in diff.problems]


def test_truncated_hunk_followed_by_next_file() -> None:
    diff = parse_diff("--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n a\n" + MODIFY)
    assert [p.code for p in diff.problems] == ["truncated_hunk"]
    assert [f.path for f in diff.files] == ["x", "src/app.py"]


def test_extra_lines_after_hunk_counts_are_problems_but_still_reported() -> None:
    diff = parse_diff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+hidden = 1\n")
    assert [p.code for p in diff.problems] == ["line_outside_hunk"]
    assert [a.text for a in diff.files[0].added_lines] == ["b", "hidden = 1"]


def test_hunk_count_mismatch() -> None:
    diff = parse_diff("--- a/x\n+++ b/x\n@@ -1,2 +1,1 @@\n+a\n+b\n")
    assert "hunk_count_mismatch" in [p.code for p in diff.problems]


def test_bad_hunk_header() -> None:
    diff = parse_diff("--- a/x\n+++ b/x\n@@ nonsense @@\n+a\n")
    assert "bad_hunk_header" in [p.code for p in diff.problems]


def test_hunk_without_file() -> None:
    assert [p.code for p in parse_diff("@@ -1 +1 @@\n-a\n+b\n").problems][0] == (
        "hunk_without_file"
    )


def test_combined_diff_is_unsupported() -> None:
    diff = parse_diff("diff --cc x\nindex 1,2..3\n@@@ -1,1 -1,1 +1,1 @@@\n- a\n +b\n")
    assert [p.code for p in diff.problems] == ["unsupported_combined_diff"]


def test_inconsistent_header_paths() -> None:
    diff = parse_diff("diff --git a/x b/x\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n")
    assert [p.code for p in diff.problems] == ["inconsistent_paths"]


def test_bad_file_header() -> None:
    diff = parse_diff('diff --git "a/unterminated\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n')
    assert "bad_file_header" in [p.code for p in diff.problems]


def test_huge_numbers_in_hunk_header_do_not_raise() -> None:
    diff = parse_diff("--- a/x\n+++ b/x\n@@ -1," + "9" * 5000 + " +1 @@\n+a\n")
    assert not diff.ok


def test_problems_are_capped() -> None:
    diff = parse_diff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n" + "+extra\n" * 10_000)
    assert len(diff.problems) == 100


def test_bytes_input_with_invalid_utf8() -> None:
    diff = parse_diff(b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-\xff\n+\xfe ok\n")
    assert diff.ok
    assert diff.files[0].added_lines[0].text == "\ufffd ok"


def _steps_for_files(files: int) -> int:
    one = MODIFY.replace("src/app.py", "src/f.py")
    diff, steps = python_steps(lambda: parse_diff(one * files), diffparse)
    assert diff.ok and diff.files_changed == files
    return steps


def test_parsing_is_one_pass_twice_the_patch_is_twice_the_work() -> None:
    # Counted in lines of the parser's Python, not timed: a parser that went back over earlier
    # lines would grow faster than the patch. How fast a 20 MB patch parses is a benchmark
    # figure (tests/bench/bench_contracts.py).
    assert 1.9 <= growth(_steps_for_files, 500) <= 2.1


def test_twenty_megabytes_parse() -> None:
    one = MODIFY.replace("src/app.py", "src/f.py")
    diff = parse_diff(one * (20 * 1024 * 1024 // len(one)))
    assert diff.ok and diff.files_changed > 50_000


@pytest.mark.parametrize(
    "make",
    [lambda n: "+" * n, lambda n: "@" * n, lambda n: "diff --git " + "a " * (n // 2)],
    ids=["plus", "at", "git-header"],
)
def test_a_pathological_line_costs_the_same_however_long(make: Callable[[int], str]) -> None:
    def steps(length: int) -> int:
        return python_steps(lambda: parse_diff(make(length) + "\n"), diffparse)[1]

    assert growth(steps, 50_000) <= 1.05


_DIFFISH = st.lists(
    st.sampled_from(
        [
            "diff --git a/x b/x",
            "--- a/x",
            "+++ b/x",
            "--- /dev/null",
            "+++ /dev/null",
            "@@ -1 +1 @@",
            "@@ -1,2 +1,3 @@",
            "@@ -0,0 +1 @@",
            "+added",
            "-removed",
            " context",
            "",
            "\\ No newline at end of file",
            "new file mode 100644",
            "deleted file mode 100644",
            "rename from a",
            "rename to b",
            "similarity index 50%",
            "GIT binary patch",
            "Binary files a/x and b/x differ",
            'diff --git "a/q\\"" b/q',
            "diff --cc x",
        ]
    )
    | st.text(max_size=30),
    max_size=40,
).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(_DIFFISH)
def test_diff_like_text_never_raises(text: str) -> None:
    diff = parse_diff(text)
    assert diff.files_changed >= 0
    for f in diff.files:
        assert f.paths


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=500) | st.binary(max_size=500))
def test_arbitrary_text_never_raises(data: str | bytes) -> None:
    assert isinstance(parse_diff(data).problems, tuple)
