"""The host: the engine as a long-running process for one workspace.

It watches the IPC tree, starts worker processes, ingests their events, delivers steers,
gates completions and writes every change to the store. One host per workspace (`lock`).
"""
