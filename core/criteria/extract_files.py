"""Rules for files: which files a task asks to exist when it is done."""

from __future__ import annotations

import re

from core.criteria.extract_base import Found
from core.criteria.extract_text import PRODUCT_NAMES, Block, FoundPath

_CREATE = re.compile(
    r"\b(?:creat(?:e|es|ed|ing)|add(?:s|ed|ing)?|writ(?:e|es|ing)|generat(?:e|es|ed|ing)"
    r"|scaffold|introduc(?:e|es|ed)|set\sup|new)\b",
    re.I,
)
_FILLERS = (
    "a|an|the|new|empty|blank|small|simple|basic|minimal|separate|dedicated|file|files|module"
    "|modules|script|scripts|component|components|test|tests|unit|integration|config"
    "|configuration|page|pages|class|workflow|document|doc|migration|fixture|fixtures|template"
    "|stylesheet|helper|helpers|entry|point|readme|license|python|typescript|javascript|markdown"
    "|json|yaml|toml|shell|bash|react|github|actions|ci|following|called|named|at|in|under|as"
    "|" + "|".join(re.escape(p) for p in PRODUCT_NAMES)
)
_FILLER_RUN = re.compile(rf"(?:\s?\b(?:{_FILLERS})(?=[\s:])){{0,8}}\s?:?", re.I)
_LIST_SEP = re.compile(r"\s?,\s?(?:and\s)?|\sand\s|\s?&\s", re.I)
_MUST_EXIST = re.compile(
    r"\s(?:must|should|shall|will|needs?\sto|has\sto)\s(?:(?:now|also|still)\s)?"
    r"(?:exist|be\s(?:created|added|generated|written|present))\b",
    re.I,
)
_ENSURE = re.compile(r"\b(?:ensure|make\ssure|verify|check)(?:\sthat)?(?:\sthe\sfile)?\s$", re.I)
_EXISTS = re.compile(r"\s(?:exists|is\s(?:created|present))\b", re.I)
_MOVE = re.compile(r"\b(?:renam|mov)(?:e|es|ed|ing)\b", re.I)
_MOVE_TO = re.compile(r"\s(?:to|as|into)\b", re.I)


def _path_list(block: Block, pos: int) -> list[FoundPath]:
    """Paths listed from ``pos`` on: "a.py", "a.py, b.py and a c.py file", after filler words."""
    found: list[FoundPath] = []
    while True:
        fillers = _FILLER_RUN.match(block.plain, pos)
        hit = block.path_at(fillers.end() if fillers else pos)
        if hit is None:
            return found
        found.append(hit)
        sep = _LIST_SEP.match(block.plain, hit.end)
        if sep is None:
            return found
        pos = sep.end()


def _file_exists(found: Found, block: Block, hit: FoundPath) -> None:
    if hit.is_dir:
        return
    if hit.problem:
        found.skip(f"file_exists {hit.path}", hit.problem)
        return
    at = block.offset + hit.start
    found.add(
        at, {"type": "file_exists", "path": hit.path, "description": f"{hit.path} must exist"}
    )


def files(found: Found, block: Block) -> None:
    for match in _CREATE.finditer(block.plain):
        for hit in _path_list(block, match.end()):
            _file_exists(found, block, hit)
    for hit in list(block.paths.values()):
        if hit.quote is not None and hit.quote.start in block.used:
            continue
        ensured = _ENSURE.search(block.before(hit.start)) and _EXISTS.match(block.plain, hit.end)
        if _MUST_EXIST.match(block.plain, hit.end) or ensured:
            _file_exists(found, block, hit)
    for match in _MOVE.finditer(block.plain):
        source = block.path_at(match.end())
        to = _MOVE_TO.match(block.plain, source.end) if source else None
        target = block.path_at(to.end()) if to else None
        if target is not None:
            _file_exists(found, block, target)
