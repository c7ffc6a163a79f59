"""Contracts: what a valid dispatch, completion, request, result or record is, and why not.

Every public validator here takes raw input (bytes or text, or an already-parsed object), returns
a report whose errors are `core.contracts.errors.FieldError` values, and never raises on bad
input. See docs/contracts.md for every rule and code.
"""
