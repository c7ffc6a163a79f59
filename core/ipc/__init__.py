"""The file layer of the IPC tree between the host and its workers (see docs/ipc.md).

`layout` names and classifies paths, `files` reads, writes and quarantines them safely, and
`payloads` validates what they contain. Nothing here knows about the store or the lifecycle.
"""
