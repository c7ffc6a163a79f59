"""Jarvis TUI: the operator console and the `jarvis` command line."""
