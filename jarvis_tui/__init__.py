"""Jarvis TUI: the operator console (`jarvis tui`; the command line is `jarvis_cli`)."""

import os

#: The console's frame-rate cap. Textual reads ``TEXTUAL_FPS`` once, when it is first imported,
#: which is why it is set here, before any module of this package can import Textual.
FRAME_RATE = 240

# Textual paints at most this often, and after a frame that took longer than one period it
# skips to the period after next. At its default of 60 that made a key wait up to 33 ms for
# its frame behind a busy one (the run table's cursor p99 went from ~45 ms to ~20 ms at 240).
# Frames are only drawn when something changed, so an idle console still draws nothing. An
# operator's own TEXTUAL_FPS wins.
os.environ.setdefault("TEXTUAL_FPS", str(FRAME_RATE))
