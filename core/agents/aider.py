"""Aider: ``aider --message-file FILE --yes-always --no-pretty --no-stream …``.

Aider has no machine-readable output; this reads the plain lines it prints (Aider-AI/aider
0.86, ``aider/coders/base_coder.py``, ``aider/repo.py``, ``aider/io.py``):

- the banner: ``Aider v0.86.1``, then ``Main model: … with diff edit format``, ``Git repo: …``,
  ``Repo-map: …`` (passed over), ``Added FILE to the chat.``;
- the model's reply, printed whole (``--no-stream``) and plain (``--no-pretty``): edit blocks
  and prose, the answer a completion block would be in;
- ``Tokens: 4.2k sent, 1.1k cache write, 2.0k cache hit, 310 received. Cost: $0.02 message,
  $0.05 session.`` after each reply (``Cost:`` on a line of its own when a reply both wrote and
  hit the cache; no cost when the model's prices are unknown). Token figures are rounded
  (``format_tokens``: ``1.2k``, ``12k``) and per reply; the session cost is a running total;
- ``Applied edit to FILE``, ``Did not apply edit to FILE (--dry-run)``, ``Creating empty file
  FILE``, ``Commit 1a2b3c4 message`` (a short sha), ``Running COMMAND`` (a shell command the reply
  proposed; ``--yes-always`` declines those, as they need an explicit yes), test output
  (``--auto-test``), ``Retrying in 0.5 seconds...``;
- questions, when shown: ``Attempt to fix test errors? (Y)es/(N)o [Yes]: y``;
- errors, as plain lines: ``litellm.AuthenticationError: …``, ``The LLM did not conform to the
  edit format.``, ``# 1 SEARCH/REPLACE block failed to match!``, ``Unable to commit: …``.

Plain text cannot tell aider's own lines from a reply that prints the same words; this adapter
takes such a line for aider's. ``final_text`` is the last reply: the unrecognised lines right
before the last ``Tokens:`` report, at most `MAX_FINAL_CHARS` of their end.

Aider has no sessions, but it can restore a chat from its history file into a new process
(``--restore-chat-history``, ``coders/base_coder.py``): given a folder of its own
(`LineAdapter.state_dir`), the adapter names a session, keeps that session's history and input
files there (never in the checkout), and a turn given the session restores its chat. The
prompt goes in a file there too (``--message-file``): aider writes its command line into the
chat history, and a prompt of several lines given as ``--message=`` is read back from it, on
restoring, as a reply of its own.
"""

from __future__ import annotations

import re
import secrets
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Final

from core.agents.base import MAX_FINAL_CHARS, LineAdapter
from core.agents.events import AgentEvent, Phase, first_line, plain
from core.agents.tool_calls import phase_of_command

_NUMBER = r"\d{1,12}(?:\.\d{1,6})?k?"
_TOKENS = re.compile(
    rf"Tokens: (?P<sent>{_NUMBER}) sent(?:, (?P<write>{_NUMBER}) cache write)?"
    rf"(?:, (?P<hit>{_NUMBER}) cache hit)?, (?P<received>{_NUMBER}) received\."
    r"(?: Cost: \$(?P<message>\d{1,12}(?:\.\d{1,12})?) message,"
    r" \$(?P<session>\d{1,12}(?:\.\d{1,12})?) session\.)?"
)
_COST = re.compile(
    r"Cost: \$(?P<message>\d{1,12}(?:\.\d{1,12})?) message,"
    r" \$(?P<session>\d{1,12}(?:\.\d{1,12})?) session\."
)
_VERSION = re.compile(r"Aider v(\S{1,40})")
_APPLIED = re.compile(r"Applied edit to (.+)")
_DRY_RUN = re.compile(r"Did not apply edit to (.+) \(--dry-run\)")
_CREATED = re.compile(r"Creating empty file (.+)")
_COMMIT = re.compile(r"Commit ([0-9a-f]{7,40}) (.*)")
_ADDED = re.compile(r"Added (.+?) to the chat( \(read-only\))?\.?")
_RUNNING = re.compile(r"Running (.+)")
_RETRY = re.compile(r"Retrying in ([\d.]{1,12}) seconds\.\.\.")
_QUESTION = re.compile(
    r"(?P<question>.{1,500}?\?) \(Y\)es/\(N\)o[^\[]{0,60} \[[^\]]{0,20}\]: ?(?P<answer>\S*)"
)
_TEST_SUMMARY = re.compile(r"=+ (?P<what>[^=]{1,200}) =+")
_TEST_COUNTS = re.compile(r"\b(?:passed|failed|errors?|skipped|xfailed|xpassed|no tests ran)\b")
_UNITTEST = re.compile(r"Ran \d+ tests? in [\d.]+s")
_ERRORS = re.compile(
    r"litellm\.\w+(?:Error|Exception)\b.*"
    r"|The API provider\b.*"
    r"|The LLM did not conform to the edit format\."
    r"|# \d+ SEARCH/REPLACE blocks? failed to match!"
    r"|Unable to commit: .*"
    r"|Empty response received from LLM.*"
    r"|Only \d+ reflections allowed, stopping\."
    r"|Error: .*"
    r"|Traceback \(most recent call last\):"
    r"|Model .* has hit a token limit!.*"
)
#: Banner and notice lines: not progress, and not part of a reply.
_PASSED_OVER = re.compile(
    r"(?:Main model|Model|Weak model|Editor model|Git repo|Repo-map|Warning|Note): .*"
    r"|https?://\S+"
    r"|Use /help .*"
    r"|Restored previous conversation history\."
    r"|Multiline mode: .*"
    r"|Added \d+ lines? of output to the chat\."
)
#: How every line above starts (a question holds ``(Y)es/(N)o`` instead): a reply line that
#: starts otherwise is known for one at once, without trying each pattern.
_OWN_START = re.compile(
    r"Tokens: |Cost: |Applied |Commit |Added |Running |Did not |Creating |Retrying |Aider v"
    r"|=|Ran |litellm\.|The |# \d|Unable |Empty |Only |Error: |Traceback |Model|Main model"
    r"|Weak model|Editor model|Git repo|Repo-map|Warning|Note|https?://|Use /help|Restored"
    r"|Multiline"
)
#: Aider's own lines are short (an error quoting a response body runs to a few kB); longer ones
#: are reply text, and no pattern is tried on them.
_OWN_LINE_CHARS: Final = 8_192
#: What Jarvis always runs aider with, each for a reason:
UNATTENDED: Final = (
    "--yes-always",  # answer its questions (create a file, add one to the chat) with yes
    "--no-pretty",  # plain lines, which the adapter reads
    "--no-stream",  # each reply whole, with its usage
    "--no-gitignore",  # else it adds .aider* to .gitignore, and leaves that uncommitted
    "--no-check-update",  # no look-up of a newer release on PyPI
    "--no-show-release-notes",  # a new release's first run offers them: a browser, with yes
    "--no-analytics",  # never asks, sends nothing
    "--no-show-model-warnings",  # a model it knows no limits of offers its docs: a browser
    "--no-detect-urls",  # with yes to everything, each URL in a prompt is fetched into the chat
)
#: A session name the adapter made (and will take back): no path can hide in it.
_SESSION = re.compile(r"aider-[0-9a-f]{16}")
_ANSWERS = {"y": "yes", "n": "no", "a": "all", "s": "skip all", "d": "don't ask again"}
_QUESTION_PHASES: Final[tuple[tuple[str, Phase], ...]] = (
    ("test errors", "testing"),
    ("lint errors", "testing"),
    ("shell command", "tool"),
    ("to the chat", "reading"),
    ("create new file", "editing"),
    ("allow edits", "editing"),
)


def _tokens(figure: str | None) -> int:
    """``1.2k`` → 1200: aider's rounded token figures, as whole tokens."""
    if not figure:
        return 0
    if figure.endswith("k"):
        return round(float(figure[:-1]) * 1000)
    return round(float(figure))


class AiderAdapter(LineAdapter):
    """Aider's plain output (see the module docstring for the lines it recognises)."""

    name: ClassVar[str] = "aider"
    #: Its repo-map cache, made in the repository's top folder; the runner removes it.
    own_files: ClassVar[tuple[str, ...]] = (".aider.tags.cache.v3", ".aider.tags.cache.v4")

    def __init__(self, *, cwd: str | None = None, extra_args: Sequence[str] = ()) -> None:
        super().__init__(cwd=cwd, extra_args=extra_args)
        self._reply: deque[str] = deque()
        self._reply_chars = 0
        self._answer: str | None = None
        self._replies = 0
        self._edits = 0
        self._commits = 0
        self._error_after_reply: str | None = None

    def argv(
        self,
        executable: Sequence[str],
        prompt: str,
        *,
        model: str | None = None,
        session_id: str | None = None,
    ) -> list[str]:
        """``aider --message-file=F UNATTENDED… --chat-history-file=H --input-history-file=I
        [--restore-chat-history] [--model=M] …``, the files in `state_dir`.

        The prompt is the file's text as it is, except that a prompt starting with ``/`` or
        ``!`` (which aider would run as one of its commands: ``!`` runs a shell) gets a space
        in front. ``session_id``, a session this adapter named, restores that session's chat;
        any other starts a new one. Writes the message file (the one file an adapter writes,
        in the folder it was given). Without a `state_dir`: ``--message=PROMPT``, and aider's
        files in its working directory, with no session to resume.
        """
        if prompt[:1] in ("/", "!"):
            prompt = " " + prompt
        argv = [*executable]
        if self.state_dir is None:
            argv += [f"--message={prompt}", *UNATTENDED]
        else:
            resumed = session_id is not None and _SESSION.fullmatch(session_id) is not None
            session = session_id if resumed and session_id else f"aider-{secrets.token_hex(8)}"
            self._set_session(session)
            folder = Path(self.state_dir)
            message = folder / f"{session}.message.md"
            message.write_text(prompt, encoding="utf-8", errors="replace")
            argv += [
                f"--message-file={message}",
                *UNATTENDED,
                f"--chat-history-file={folder / f'{session}.chat.history.md'}",
                f"--input-history-file={folder / f'{session}.input.history'}",
            ]
            if resumed:
                argv.append("--restore-chat-history")
        if model:
            argv.append(f"--model={model}")
        argv.extend(self.extra_args)
        return argv

    # --- reading -------------------------------------------------------------------------------

    def _parse(self, line: bytes) -> list[AgentEvent]:
        text = plain(line.decode("utf-8", "replace")).rstrip("\r\n")
        stripped = text.strip()
        if not stripped:
            self._keep(text)
            return []
        events = self._recognise(stripped)
        if events is None:
            self._keep(text)
            return []
        if not stripped.startswith(("Tokens: ", "Cost: ")):
            # A reply is printed whole, right before its usage report: aider's own lines
            # before it (banner, test output, questions) are no part of it.
            self._take_reply()
        return events

    def _recognise(self, line: str) -> list[AgentEvent] | None:
        """The events of one of aider's own lines; None for a line of the reply."""
        if len(line) > _OWN_LINE_CHARS or (not _OWN_START.match(line) and "(Y)es/(N)o" not in line):
            return None
        if line.startswith("Tokens: ") and (match := _TOKENS.fullmatch(line)):
            return self._reply_done(match)
        if match := _COST.fullmatch(line):
            self._cost(match.group("session"))
            return []
        if _PASSED_OVER.fullmatch(line):
            return []
        if match := _APPLIED.fullmatch(line):
            self._edits += 1
            return [self._emit("editing", f"applied edit to {match.group(1)}", "edit")]
        if match := _COMMIT.fullmatch(line):
            self._commits += 1
            sha, message = match.groups()
            return [self._emit("committing", f"commit {sha}: {message}", "git")]
        if match := _ADDED.fullmatch(line):
            read_only = " (read-only)" if match.group(2) else ""
            return [self._emit("reading", f"added {match.group(1)} to the chat{read_only}")]
        if match := _RUNNING.fullmatch(line):
            command = match.group(1)
            return [self._emit(phase_of_command(command), f"run: {command}", "shell")]
        if match := _DRY_RUN.fullmatch(line):
            return [self._emit("editing", f"would edit {match.group(1)} (dry run)", "edit")]
        if match := _CREATED.fullmatch(line):
            return [self._emit("editing", f"created {match.group(1)}", "edit")]
        if match := _QUESTION.fullmatch(line):
            return [self._question(match.group("question"), match.group("answer"))]
        if (match := _TEST_SUMMARY.fullmatch(line)) and _TEST_COUNTS.search(match["what"]):
            return [self._emit("testing", f"tests: {match.group('what').strip()}")]
        if _UNITTEST.fullmatch(line):
            return [self._emit("testing", f"tests: {line}")]
        if _ERRORS.fullmatch(line):
            self._error_after_reply = line
            return [self._emit("error", line, error=line)]
        if match := _RETRY.fullmatch(line):
            return [self._emit("message", f"retrying in {match.group(1)} seconds")]
        if match := _VERSION.match(line):
            return [self._emit("message", f"aider v{match.group(1)} started")]
        return None

    def _keep(self, text: str) -> None:
        """A line of the reply, kept in a bounded window of its end."""
        self._reply.append(text)
        self._reply_chars += len(text) + 1
        while self._reply_chars > MAX_FINAL_CHARS and len(self._reply) > 1:
            self._reply_chars -= len(self._reply.popleft()) + 1
        if self._reply_chars > MAX_FINAL_CHARS:  # one line longer than the window
            self._reply[0] = self._reply[0][-MAX_FINAL_CHARS:]
            self._reply_chars = len(self._reply[0]) + 1

    def _take_reply(self) -> str:
        text = "\n".join(self._reply).strip("\n")
        self._reply.clear()
        self._reply_chars = 0
        return text

    def _reply_done(self, match: re.Match[str]) -> list[AgentEvent]:
        self._replies += 1
        self._error_after_reply = None
        self._answer = self._take_reply()
        sent = _tokens(match.group("sent")) + _tokens(match.group("hit"))
        self._add(sent, _tokens(match.group("received")))
        self._cost(match.group("session"))
        line = first_line(self._answer)
        return [self._emit("message", f"replied: {line}" if line else "replied")]

    def _cost(self, session: str | None) -> None:
        if session is not None:
            self._add(cost=self._since("cost", float(session)))

    def _question(self, question: str, answer: str) -> AgentEvent:
        lowered = question.lower()
        phase: Phase = next((p for key, p in _QUESTION_PHASES if key in lowered), "message")
        said = _ANSWERS.get(answer[:1].lower(), answer or "no answer")
        return self._emit(phase, f"{question} {said}")

    def _end(self) -> list[AgentEvent]:
        self._mark_ended()
        if self._error_after_reply is not None:
            why = self._error_after_reply
            return [self._emit("error", f"stopped: {why}", final_text=self._answer, error=why)]
        if not self._replies:
            # Aider reports usage after every reply: without a report, none was complete.
            partial = self._take_reply() or None
            why = "no complete reply"
            return [self._emit("error", f"aider printed {why}", final_text=partial, error=why)]
        summary = f"finished: {self._edits} edits, {self._commits} commits"
        return [self._emit("done", summary, final_text=self._answer)]
