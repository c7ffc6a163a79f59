"""The run store: runs, their history and the journal change feed.

`SqliteStore` is the only backend today. Callers use its `transaction()` (a unit of work with
`Transaction`'s operations) and its read methods; a PostgreSQL backend would provide the same
two surfaces, so moving is a change of backend, not of callers.
"""
