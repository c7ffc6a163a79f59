"""Rules for files: which files a task asks to exist when it is done.

A file must exist afterwards when the task

* creates it: "create X", "add a new file X", "write X", "lege die Datei X an";
* works on it: "update X", "edit X", "fix the bug in X", "add a function to X";
* makes it the subject of a requirement: "X should print …", "X must exist", or lists it in
  an acceptance list as "X exists";
* copies it (both ends exist afterwards), or renames or moves something to it.

It does not when the verb is negated ("do not touch X", "ne modifie pas X", "ändere X nicht"),
when the file is named only as an example ("e.g. X", "such as X", "par exemple X", "z. B. X"),
when a program is described ("so it writes out.json"), or when the file should go away ("X must
be deleted"). A renamed file's old name should be gone afterwards, but none of the seven
criterion types can say that a path is absent; a note says so instead.
"""

from __future__ import annotations

import posixpath
import re

from core.criteria.extract_base import Found
from core.criteria.extract_text import PRODUCT_NAMES, Block, FoundPath
from core.criteria.extract_words import (
    AT,
    CONTAIN,
    CONVERT,
    COPY,
    CREATE,
    CREATE_SEPARABLE,
    DEFINE,
    EXAMPLE,
    EXIST,
    EXPORT,
    FILLERS,
    GONE,
    INTO,
    LIVES,
    MODAL,
    MOVE,
    NEGATION,
    NEGATION_AFTER,
    SPLIT,
    STILL,
    TO,
    UPDATE,
    UPDATE_SEPARABLE,
    WORK_WITH,
)

__all__ = ["add_file", "files", "negated", "path_list", "wanted"]

_FILLER_WORDS = FILLERS + "|" + "|".join(re.escape(p) for p in PRODUCT_NAMES)
# German compounds name the kind of file: "eine neue Konfigurationsdatei X".
_FILLER_RUN = re.compile(
    rf"(?:\s?\b(?:{_FILLER_WORDS}|[\w-]{{1,30}}datei(?:en)?)(?=[\s:])){{0,8}}\s?:?"
)
_LIST_SEP = re.compile(r"\s?,\s?(?:and\s|et\s|und\s|y\s)?|\s(?:and|et|und|y)\s|\s?&\s")

_CREATE = re.compile(rf"\b{CREATE}\b")
_CREATE_SEPARABLE = re.compile(rf"\b{CREATE_SEPARABLE}\b")
_UPDATE = re.compile(rf"\b{UPDATE}\b")
_UPDATE_SEPARABLE = re.compile(rf"\b{UPDATE_SEPARABLE}\b")
_WORK_WITH = re.compile(rf"\b(?:{WORK_WITH}|{UPDATE})\b")
# "the off-by-one error in", "a function to", "version to 1.4.2 in": a short object, then the
# preposition before the file. Each preposition in reach is tried, nearest first.
_INTO = re.compile(rf"\s{INTO}\s")
_INTO_TO = re.compile(rf"\s(?:{INTO}|{TO})\s")
_AT = re.compile(rf"\s{AT}\s")
# "add a README.md in the folder scripts/": the file goes in that folder.
_IN_FOLDER = re.compile(
    r"\s(?:in|into|inside|under|dans|sous|im|in|unter|en)\s(?:(?:the|le|la|den|die|el)\s)?"
    r"(?:(?:folder|directory|dir|dossier|répertoire|ordner|verzeichnis|carpeta|directorio)\s)?",
)
_CONVERT = re.compile(rf"\b{CONVERT}\b")
_OBJECT_REACH = 240
_OBJECT_STOP = re.compile(r"[.;:!?,](?:\s|$)|[\x01\x02()]")
_WORDS = re.compile(r"\S{1,512}")
# German separable verbs end with their particle: "lege X an", "passe X an".
_PARTICLE_AN = re.compile(r"\san\b")

_MUST_EXIST = re.compile(rf"\s{MODAL}\s(?:{STILL}\s)?{EXIST}\b")
# "X should print ...": a requirement of which the file is the subject. Not one that it must go
# away, not one about content (the content rules read those), not one that tests pass.
_REQUIREMENT = re.compile(
    rf"\s{MODAL}\s(?:{STILL}\s)?"
    rf"(?!(?:{STILL}\s)?(?:{GONE}|{CONTAIN}|{EXPORT}|{DEFINE}|match\w{{0,3}}|pass\w{{0,3}}"
    rf"|succeed\w{{0,3}}"
    r"|fail\w{0,6}|réussi\w{0,4}|bestehen|durchlaufen|pasar)\b)[^\s\x01\x02.;:!?]",
)
_ENSURE = re.compile(
    r"\b(?:ensure|make\ssure|verify|check|assure[sz]?-(?:toi|vous)|vérifie[sz]?"
    r"|stelle\ssicher|stellen\ssie\ssicher|prüfe|asegúrate\sde|verifica)"
    r"(?:\s(?:that|que|qu'|dass|de\sque))?,?(?:\s(?:the|le|la|die|el)\s(?:file|fichier|datei|archivo))?\s$",
)
_EXISTS = re.compile(
    r"\s(?:exists|is\s(?:created|present)|existe|est\sprésente?|existiert|ist\svorhanden"
    r"|está\spresente)\b",
)
# What an acceptance list says of a file: "- src/a.py exists", "- README.md updated".
_LISTED = re.compile(
    r"\s(?:exists|is\s(?:created|present)|(?:is\s|was\s)?(?:updated|created|added|modified"
    r"|changed|edited)|existe|mise?\sà\sjour|modifiée?|créée?|existiert|aktualisiert|erstellt"
    r"|actualizad[oa]|cread[oa]|modificad[oa])\s?\.?$",
)
# An acceptance list's item that is only "X exists".
_ITEM_START = re.compile(r"(?:[-*+]|\d{1,9}[.)])?\s?(?:the\s(?:file\s)?)?")

_SPLIT = re.compile(rf"\b{SPLIT}\b")
_SPLIT_INTO = re.compile(r"\s(?:up\s)?(?:into|in|en|auf|in)\s")
_LIVES = re.compile(
    rf"\b(?:{MODAL}\s)?(?:{STILL}\s)?{LIVES}\s(?:in|into|inside|under|dans|sous|in|im|en)\s"
    r"(?:(?:the|le|la|die|den|el)\s)?(?:(?:file|fichier|datei|archivo)\s)?",
)
# "make sure X handles SIGTERM": the file is the subject of what must be made sure of.
_ENSURED_VERB = re.compile(
    r"\s(?!(?:(?:is|are|does|do|was|has)\s)?(?:not|no|never|deleted|removed|gone|absent|nothing"
    r"|pas|nicht|kein)\b)(?:does\s|is\s)?[^\s\x01\x02.;:!?,]",
)
# "In web/forms.py, validate ...": the file the sentence works in.
_IN_FILE_FIRST = re.compile(
    r"(?:^|[.;:!?]\s|^(?:[-*+]|\d{1,9}[.)])\s)(?:in|inside|within|dans|im|en)\s"
    r"(?:(?:the|le|la|die|der|el)\s)?(?:(?:file|fichier|datei|archivo)\s)?$",
)
_COMMA = re.compile(r"\s?,")
# German infinitives last: "die Datei X bitte um ein Kapitel ergänzen".
_GERMAN_LAST = re.compile(
    r"(?P<between>(?:\s[^\s\x01.;:!?,]{1,40}){0,8}?)\s(?:ergänzen|aktualisieren|anpassen"
    r"|bearbeiten|ändern|erweitern|korrigieren|überarbeiten|erstellen|anlegen|schreiben"
    r"|hinzufügen)\b",
)
_MOVE = re.compile(rf"\b{MOVE}\b")
_COPY = re.compile(rf"\b{COPY}\b")
_FROM = re.compile(r"(?:\s[^\s.;:!?,]{1,40}){0,4}?\s(?:from|de|depuis|von|aus|desde)(?=\s)")
_TO = re.compile(
    rf"\s{TO}\s(?:(?:the|le|la|die|den|el)\s)?(?:(?:folder|dossier|ordner|carpeta)\s)?"
)

_NEGATED_BEFORE = re.compile(
    rf"(?:\b{NEGATION}|n['’]t|\bn['’])(?P<between>(?:\s[^\s.;:!?,]{{1,30}}){{0,2}})\s?$"
)
_NOT_A_NEGATION = re.compile(r"\b(?:forget|oublie\w{0,2}|vergiss|olvides)\b")
_NEGATED_AFTER = re.compile(rf"\s{NEGATION_AFTER}\b")
_NEGATION_WORD = re.compile(rf"\b{NEGATION}\b|n['’]t\b")
# A file after "e.g.", "such as", "par exemple" in the same sentence is an example.
_EXAMPLE_BEFORE = re.compile(rf"\b{EXAMPLE}(?:(?![.;:!?](?:\s|$))[^\x01]){{0,70}}$")
# "if X exists", "whether X should ...": a condition, not a requirement.
_CONDITION_BEFORE = re.compile(
    r"\b(?:if|unless|whether|when|si|wenn|falls|ob|cuando)\b(?:(?![.;:!?](?:\s|$)).){0,70}$",
)
# Verbs describe a program, not the task, after "it", "that", "which": "so it writes out.json".
_DESCRIBES = re.compile(
    r"\b(?:it|that|which|this|they|script|program|function|tool|job|code|command|service"
    r"|il|elle|qui|es|er|sie|welche[rs]?|él|ella|se)\s$"
    r"|(?<!\bhay\s)(?<!\btiene\s)(?<!\btienes\s)(?<!\btienen\s)\bque\s$",  # not "hay que"
)


def path_list(block: Block, pos: int) -> list[FoundPath]:
    """Paths listed from ``pos`` on: "a.py", "a.py, b.py and a c.py file", after filler words."""
    found: list[FoundPath] = []
    while True:
        fillers = _FILLER_RUN.match(block.lower, pos)
        hit = block.path_at(fillers.end() if fillers else pos)
        if hit is None:
            return found
        found.append(hit)
        sep = _LIST_SEP.match(block.lower, hit.end)
        if sep is None:
            return found
        pos = sep.end()


def _into(block: Block, pos: int, joiners: re.Pattern[str]) -> list[FoundPath]:
    """The paths after a short object and a preposition from ``pos``: "a function to X"."""
    end = min(len(block.lower), pos + _OBJECT_REACH)
    for joiner in joiners.finditer(block.lower, pos, end):
        between = block.lower[pos : joiner.start()]
        if len(_WORDS.findall(between)) > 6 or _OBJECT_STOP.search(between):
            return []
        if _NEGATION_WORD.search(between):
            return []  # "ändere nichts an X"
        hits = path_list(block, joiner.end())
        if hits:
            return hits
    return []


def negated(block: Block, verb_start: int) -> bool:
    """Whether the verb at ``verb_start`` is negated: "do not edit", "ne modifie pas"."""
    found = _NEGATED_BEFORE.search(block.before(verb_start))
    return found is not None and not _NOT_A_NEGATION.search(found.group("between"))


def wanted(block: Block, verb_start: int, hits: list[FoundPath]) -> list[FoundPath]:
    """``hits`` that a verb at ``verb_start`` really asks for: not negated, not examples."""
    if not hits or negated(block, verb_start):
        return []
    if _NEGATED_AFTER.match(block.lower, hits[-1].end):
        return []  # "ändere src/a.py nicht"
    return [hit for hit in hits if not _EXAMPLE_BEFORE.search(block.before(hit.start))]


def add_file(found: Found, block: Block, hit: FoundPath, path: str | None = None) -> None:
    """``file_exists`` for ``hit`` (or for ``path``, derived from it), or a note why not."""
    if hit.is_dir and path is None:
        return
    path = path or hit.path
    if hit.problem:
        found.skip(f"file_exists {path}", hit.problem)
        return
    criterion = {"type": "file_exists", "path": path, "description": f"{path} must exist"}
    found.add(block.offset + hit.start, criterion)


def _add_all(found: Found, block: Block, verb_start: int, hits: list[FoundPath]) -> None:
    for hit in wanted(block, verb_start, hits):
        add_file(found, block, hit)


def _created(found: Found, block: Block) -> None:
    for match in _CREATE.finditer(block.lower):
        if _DESCRIBES.search(block.before(match.start())):
            continue
        hits = path_list(block, match.end())
        if not hits:  # "generate a schema at X", "write the guide in X"
            hits = _into(block, match.end(), _AT)
        elif not hits[-1].is_dir and "/" not in hits[-1].path:
            folder = _IN_FOLDER.match(block.lower, hits[-1].end)
            into = block.path_at(folder.end()) if folder else None
            if into is not None and into.is_dir and len(hits) == 1:
                if wanted(block, match.start(), hits):
                    add_file(found, block, hits[0], posixpath.join(into.path, hits[0].path))
                continue
        _add_all(found, block, match.start(), hits)
    for match in _CREATE_SEPARABLE.finditer(block.lower):
        hits = path_list(block, match.end())
        if hits and _PARTICLE_AN.match(block.lower, hits[-1].end):
            _add_all(found, block, match.start(), hits)


def _worked_on(found: Found, block: Block) -> None:
    for match in _UPDATE.finditer(block.lower):
        _add_all(found, block, match.start(), path_list(block, match.end()))
    for match in _UPDATE_SEPARABLE.finditer(block.lower):
        hits = path_list(block, match.end())
        if hits and _PARTICLE_AN.match(block.lower, hits[-1].end):
            _add_all(found, block, match.start(), hits)
    for match in _WORK_WITH.finditer(block.lower):
        _add_all(found, block, match.start(), _into(block, match.end(), _INTO))
    for match in _SPLIT.finditer(block.lower):
        fillers = _FILLER_RUN.match(block.lower, match.end())
        source = block.path_at(fillers.end() if fillers else match.end())
        joiner = _SPLIT_INTO.match(block.lower, source.end) if source else None
        if joiner:
            _add_all(found, block, match.start(), path_list(block, joiner.end()))
    for match in _CONVERT.finditer(block.lower):
        fillers = _FILLER_RUN.match(block.lower, match.end())
        source = block.path_at(fillers.end() if fillers else match.end())
        if source is not None:
            _add_all(found, block, match.start(), _into(block, source.end, _INTO_TO))
    for match in _LIVES.finditer(block.lower):
        _add_all(found, block, match.start(), path_list(block, match.end()))
    for hit in list(block.paths.values()):
        german = _GERMAN_LAST.match(block.lower, hit.end)
        if german and not _NEGATION_WORD.search(german.group("between")):
            _add_all(found, block, hit.start, [hit])


def _required(found: Found, block: Block) -> None:
    for hit in list(block.paths.values()):
        if hit.quote is not None and hit.quote.start in block.used:
            continue
        before = block.before(hit.start)
        if _CONDITION_BEFORE.search(before) or _EXAMPLE_BEFORE.search(before):
            continue
        ensured = _ENSURE.search(before) and _ENSURED_VERB.match(block.lower, hit.end)
        listed = (
            hit.start <= 16
            and _ITEM_START.fullmatch(block.lower[: hit.start]) is not None
            and _LISTED.match(block.lower, hit.end) is not None
        )
        required = _MUST_EXIST.match(block.lower, hit.end) or _REQUIREMENT.match(
            block.lower, hit.end
        )
        works_in = _IN_FILE_FIRST.search(before) and _COMMA.match(block.lower, hit.end)
        if required or ensured or listed or works_in:
            add_file(found, block, hit)


def _two_ends(block: Block, verb_end: int) -> tuple[FoundPath, FoundPath, str] | None:
    """The source and target of a copy or a move, and the target's file path."""
    fillers = _FILLER_RUN.match(block.lower, verb_end)
    source = block.path_at(fillers.end() if fillers else verb_end)
    if source is None:
        after = _FROM.match(block.lower, verb_end)  # "copy the logo from X to Y"
        source = block.path_at(after.end()) if after else None
    to = _TO.match(block.lower, source.end) if source else None
    target = block.path_at(to.end()) if to else None
    if source is None or target is None or source.is_dir:
        return None
    path = target.path
    if target.is_dir:  # "move src/util.py into src/lib/": the file keeps its name
        path = posixpath.join(target.path, posixpath.basename(source.path))
    return source, target, path


def _copied_and_moved(found: Found, block: Block) -> None:
    for match in _COPY.finditer(block.lower):
        ends = _two_ends(block, match.end())
        if ends and wanted(block, match.start(), [ends[0], ends[1]]):
            source, target, path = ends
            add_file(found, block, source)
            add_file(found, block, target, path)
    for match in _MOVE.finditer(block.lower):
        ends = _two_ends(block, match.end())
        if ends is None:  # "move the constants to X": X must exist, whatever moves there
            _add_all(found, block, match.start(), _into(block, match.end(), _INTO_TO))
        elif wanted(block, match.start(), [ends[0], ends[1]]):
            source, target, path = ends
            add_file(found, block, target, path)
            found.notes.append(
                f"not checked: no criterion type can check that {source.path} is gone "
                "after it is moved"
            )


def files(found: Found, block: Block) -> None:
    """Every file ``block`` asks to exist when the task is done."""
    _created(found, block)
    _worked_on(found, block)
    _required(found, block)
    _copied_and_moved(found, block)
