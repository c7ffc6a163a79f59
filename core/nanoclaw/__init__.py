"""NanoClaw compatibility: launching its container runner and writing what its agents read.

Small modules, each named for what it holds: the runner's framed stdout (`frames`), the task it
reads on stdin (`container_input`) and the worker prompt in it (`prompt`), how the host starts it
(`launch`), and the ``worker_runs.json`` snapshot a coordinator reads (`worker_runs`).
docs/nanoclaw.md describes them.
"""
