"""The simulated fleet: a worker that fakes a coding agent, and the demo built on it.

`simworker` speaks the worker side of docs/ipc.md (the host's default worker command);
`demo_seed`, `demo_tasks`, `demo_fleet` and `demo_repos` give `jarvis demo` its history, its
tasks, its coordinator and its repositories; `samples` checks the bundled ``sample_runs/``.
Everything here uses the engine (`core`) like any other client; the engine never imports it.
"""
