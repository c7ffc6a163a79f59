"""Make text from workers inert before it reaches an operator's terminal.

Worker output, file names and error messages that quote them may carry terminal escape sequences
(which a terminal would execute as commands: retitle the window, rewrite the screen, in some
terminals worse) or console markup (which Rich or Textual would interpret as styling). Every
piece of such text goes through `inert` before display; it keeps printable text and new lines and
shows everything else as a visible ``\\xNN`` escape. `shown` also masks any secret the engine's
scanner recognises: a worker that echoes a token into its progress must not put it on a screen.

Both rules live in the engine (`core.text.inert`, `core.contracts.secrets_scan.mask_secrets`),
which also masks worker text once, as it is stored; the console applies them again on display
so that rows stored before that, or by an older engine, are shown safely too.
"""

from __future__ import annotations

from functools import lru_cache

from core.service.text import inert, mask_secrets

__all__ = ["CACHED_UP_TO", "inert", "one_line", "shown"]


def shown(text: object) -> str:
    """Worker-supplied ``text`` as the console may show it: secrets masked, controls escaped.

    The result is still plain text: put it in a `rich.text.Text` (never a markup string).
    """
    text = str(text)
    if len(text) > CACHED_UP_TO:
        return inert(mask_secrets(text))
    return _shown(text)


#: Texts up to this long are remembered: run ids, lanes, phases, progress summaries.
CACHED_UP_TO = 256


# The same run ids, lanes and summaries are shown again on every cursor move and poll; the
# secret scan over them was 4% of the console's main thread with a key held. Short texts only,
# so the cache stays within a few MB (8,192 × 256 characters at most).
@lru_cache(maxsize=8192)
def _shown(text: str) -> str:
    return inert(mask_secrets(text))


def one_line(text: object, limit: int = 200) -> str:
    """`shown` text on one line (new lines as ``⏎``), cut to ``limit`` characters."""
    flat = shown(text).replace("\r\n", "\n").replace("\n", " ⏎ ").replace("\t", " ")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
