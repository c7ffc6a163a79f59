"""NanoClaw compatibility: launching its container runner and writing what its agents read.

Small modules, each named for what it holds: the runner's framed stdout (`frames`), the task it
reads on stdin (`container_input`) and the worker prompt in it (`prompt`), how the host starts it
(`launch`), the ``worker_runs.json`` snapshot a coordinator reads (`worker_runs`), and the
back-fill of a coordinator's ``required_fields`` (`required_fields`).
docs/nanoclaw.md describes them.
"""
