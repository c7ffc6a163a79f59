"""Acceptance criteria extracted from a task, through the front door (`jarvis criteria
extract`): what a dispatch of the task would get, and why. Imported only by the command that
extracts: the extractor is many regular expressions."""

from __future__ import annotations

from core.contracts.dispatch_kinds import recognise
from core.criteria.at_dispatch import at_most_the_cap, universal_note
from core.criteria.extract import Extraction, extract_criteria, task_text_of
from core.criteria.model_extract import extract_with_model

__all__ = [
    "Extraction",
    "at_most_the_cap",
    "extract_criteria",
    "extract_with_model",
    "recognise",
    "task_text_of",
    "universal_note",
]
