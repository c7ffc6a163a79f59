"""Coding agents as workers: one adapter per agent turns its output into progress events.

`registry.adapter_for` gives the adapter for an agent's name; `base.AgentAdapter` is the protocol
they follow and `events.AgentEvent` what they produce. Nothing here starts a process.
"""
