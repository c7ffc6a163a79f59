"""Rules for content: text a file must hold, names it must export, packages it must list.

Content is asked for with a quote (``README.md must contain `## Usage```), so a criterion never
rests on a guess at where a phrase ends. The file it is asked of is, in order of preference:
the path right before the verb ("X must contain"), the path after the quote ("must contain `Q`
in X", "`Q` must appear in X"), or, after "it", "the file" or a requirement with no subject of
its own (Spanish "debe contener", a clause that starts with "must"), the file named last. A
name to export or define may also be written bare, when it plainly is an identifier
("src/index.ts must export createServer", "a function called fetchUser").
"""

from __future__ import annotations

import re

from core.criteria.extract_base import Context, Found, literal
from core.criteria.extract_text import Block, FoundPath, Quote
from core.criteria.extract_words import CONTAIN, DEFINE, EXIST, EXPORT, MODAL, STILL

_WHAT = (
    "a|an|the|line|lines|string|text|section|heading|header|title|entry|key|word|phrase|comment"
    "|note|function|class|method|setting|value|field|constant|variable|component|called|named"
    "|with|exact|exactly|literal|default|new|following|statement|import|block"
    "|le|la|les|un|une|ligne|section|texte|titre|fonction|classe|constante|appelée?|nommée?"
    "|den|die|das|einen|eine|ein|abschnitt|zeile|text|funktion|klasse|konstante|namens"
    "|el|los|las|una|línea|sección|texto|título|función|clase|constante|llamad[oa]"
)
_KIND = (
    rf"(?:(?P<contain>{CONTAIN})"
    r"|(?P<regex>match(?:es)?\s(?:the\s)?(?:regex|regexp|regular\sexpression|pattern))"
    rf"|(?P<export>{EXPORT})|(?P<define>{DEFINE}))"
)
_KINDS = ("contain", "regex", "export", "define")
_CONTENT_VERB = re.compile(
    rf"(?:\s(?P<modal>{MODAL}))?(?:\s{STILL})?\s{_KIND}(?:\s(?:{_WHAT})(?=\s)){{0,8}}\s(?=\x01)",
)
# German puts the verb last: "README.md muss `## Lizenz` enthalten".
_MODAL_FIRST = re.compile(
    r"\s(?P<modal>muss|müssen|soll|sollen|sollte|sollten)(?:\s(?:" + _WHAT + r")(?=\s)){0,8}"
    r"\s(?=\x01)",
)
_VERB_LAST = re.compile(
    r"\s(?:(?P<contain>enthalten|beinhalten)|(?P<export>exportieren)|(?P<define>definieren))\b",
)
# A bare name to export or define: "must export createServer", "a function called fetchUser".
_BARE_NAME = re.compile(
    rf"(?:\s{MODAL})?(?:\s{STILL})?\s(?:(?P<export>{EXPORT})|(?P<define>{DEFINE}))"
    rf"(?P<what>(?:\s(?:{_WHAT})(?=\s)){{0,8}})\s(?P<name>[A-Za-z_]\w{{0,127}})(?=[\s.,;:!?)]|$)",
)
_NAMED = re.compile(r"\b(?:called|named|appelée?|nommée?|namens|llamad[oa])\b")
_IDENTIFIER_LIKE = re.compile(r"[A-Za-z_]\w{0,127}(?:[A-Z_0-9])\w{0,127}|[A-Z][A-Z0-9_]{1,127}")
# The file after the quote: "must contain `Q` in X", "`Q` must appear in X".
_IN_FILE = re.compile(
    r"\s(?:in|inside|within|dans|im|en)\s(?:(?:the|le|la|die|der|el)\s)?"
    r"(?:(?:file|fichier|datei|archivo)\s)?",
)
_APPEARS_IN = re.compile(
    rf"\s(?:{MODAL}\s)?(?:{STILL}\s)?"
    r"(?:is|be|appears?|shows?\sup|exists?|is\s(?:present|included)|be\s(?:present|included)"
    r"|est|être|figure|figurer|apparaît|apparaître|steht|stehen|vorkommen|está|estar|aparece"
    r"|aparecer|figurar)"
    r"(?:\s(?:somewhere|also|still|aussi|auch|también))?"
    r"\s(?:in|inside|within|dans|im|en)\s(?:(?:the|le|la|die|der|el)\s)?"
    r"(?:(?:file|fichier|datei|archivo)\s)?",
)
# Imperatives naming the file after the quote: "export `render` from src/view.ts".
_EXPORT_FROM = re.compile(
    rf"\b(?:(?P<export>export|exporte|exportiere|exporta)|(?P<define>define|définis|definiere))"
    rf"(?:\s(?:{_WHAT})(?=\s)){{0,8}}\s(?=\x01)",
)
_FROM_FILE = re.compile(
    r"\s(?:from|in|de|dans|aus|desde|en)\s(?:(?:the|le|la|die|der|el)\s)?"
    r"(?:(?:file|fichier|datei|archivo)\s)?",
)
_PRONOUN = re.compile(
    r"(?:^|\W)(?:it|this\sfile|that\sfile|the\sfile|the\snew\sfile|il|elle|ce\sfichier"
    r"|le\sfichier|er|sie|es|diese\sdatei|die\sdatei|este\sarchivo|el\sarchivo)$",
)
# "X must exist and contain `Q`": the same subject goes on.
_EXIST_AND = re.compile(rf"(?:{EXIST}|exists?|existe|existiert)\s(?:and|et|und|y)$")
# A requirement that starts its clause has no subject of its own: "…; debe contener `Q`".
_CLAUSE_START = re.compile(r"(?:^|[;:.])\s?$")
_ADD_QUOTE = re.compile(
    r"\b(?:add|append|insert|put|write|ajout(?:e|ez|er)|füg(?:e|en)|añad(?:e|ir|a))"
    rf"(?:s|ed|ing)?\s(?:(?:{_WHAT})\s){{0,4}}(?=\x01)",
)
_ADD_TARGET = re.compile(
    rf"(?:\s(?:{_WHAT})(?=\s)){{0,8}}\s(?:to|in|into|inside|à|au|dans|zu|zur|in|im|a|al|en)\s"
    r"(?:(?:the|le|la|die|der|el)\s)?(?:(?:file|fichier|datei|archivo)\s)?",
)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w{0,255}")


def _content_pattern(kind: str, text: str, path: str) -> tuple[str, str]:
    """The pattern and description for one content requirement of the given kind."""
    if kind == "regex":
        return text, f"{path} must match /{text}/"
    if kind in ("export", "define") and _IDENTIFIER.fullmatch(text):
        if kind == "export" and path.endswith(".py"):
            # Python has no export statement: a module exports what it defines, imports, assigns
            # or lists in __all__.
            pattern = (
                rf"(?m)^(?:(?:async\s+)?def|class)\s+{text}\b"
                rf"|^\s*(?:from\s+\S+\s+)?import\s.*\b{text}\b|^{text}\s*[:=]"
                rf"|__all__[^\]]*['\"]{text}['\"]"
            )
            return pattern, f"{path} must export {text}"
        if kind == "export":
            return rf"export\b.*\b{text}\b", f"{path} must export {text}"
        if path.endswith(".py"):
            return rf"(?m)^\s*(?:async\s+def|def|class)\s+{text}\b", f"{path} must define {text}"
        return rf"\b{text}\b", f"{path} must define {text}"
    return literal(text), f'{path} must contain "{text}"'


def _content(found: Found, block: Block, subject: FoundPath, kind: str, text: str, at: int) -> None:
    what = f"content_match for {text!r}"
    if subject.problem or subject.is_dir:
        found.skip(what, subject.problem or f"{subject.path} is a folder")
        return
    pattern, description = _content_pattern(kind, text, subject.path)
    try:
        re.compile(pattern)
    except re.error as exc:
        found.skip(what, f"the pattern does not compile ({exc})")
        return
    criterion = {"type": "content_match", "path": subject.path, "pattern": pattern}
    found.add(block.offset + at, {**criterion, "description": description})


def _quoted(found: Found, block: Block, subject: FoundPath, kind: str, quotes: list[Quote]) -> None:
    for quote in quotes:
        block.used.add(quote.start)
        _content(found, block, subject, kind, quote.inner, quote.start)


def _file_after(block: Block, pos: int, joiner: re.Pattern[str]) -> FoundPath | None:
    found = joiner.match(block.lower, pos)
    return block.path_at(found.end()) if found else None


def _subject(
    block: Block, match: re.Match[str], quotes: list[Quote], last: FoundPath | None
) -> FoundPath | None:
    """The file a content requirement at ``match`` is asked of, if one can be told."""
    start = match.start()
    named = block.path_ending_at(start) or _file_after(block, quotes[-1].end, _IN_FILE)
    if named is not None:
        return named
    before = block.before(start)
    earlier = block.last_path_before(start)
    if _PRONOUN.search(before) or _EXIST_AND.search(before):
        return earlier or last  # "It must contain ..." after a file named in an earlier item
    if match.group("modal") and _CLAUSE_START.search(before):
        return earlier or last
    return None


def _kind(match: re.Match[str]) -> str:
    return next(k for k in _KINDS if k in match.groupdict() and match.group(k))


def _asked_before(found: Found, block: Block, last: FoundPath | None) -> None:
    """Requirements whose verb comes before the quotes: "X must contain `Q`"."""
    for match in _CONTENT_VERB.finditer(block.lower):
        quotes = block.quote_list(match.end())
        if not quotes:
            continue
        subject = _subject(block, match, quotes, last)
        if subject is None:
            found.notes.append(f"not extracted: {quotes[0].inner!r} is required of no named file")
            continue
        _quoted(found, block, subject, _kind(match), quotes)
    for match in _MODAL_FIRST.finditer(block.lower):
        quotes = block.quote_list(match.end())
        verb = _VERB_LAST.match(block.lower, quotes[-1].end) if quotes else None
        subject = block.path_ending_at(match.start())
        if verb is not None and subject is not None:
            _quoted(found, block, subject, _kind(verb), quotes)


def _asked_after(found: Found, block: Block) -> None:
    """Requirements that name the file after the quotes: "`Q` must appear in X"."""
    # A list's later quotes end where it ends, so they get its answer: walked once, not again
    # from each of them (quadratic in a long list).
    done: set[int] = set()
    for start in sorted(block.quotes):
        if start in done or start in block.used:
            continue
        quotes = block.quote_list(start)
        done.update(q.start for q in quotes)
        subject = _file_after(block, quotes[-1].end, _APPEARS_IN) if quotes else None
        if subject is not None:
            _quoted(found, block, subject, "contain", quotes)
    for match in _EXPORT_FROM.finditer(block.lower):
        quotes = block.quote_list(match.end())
        subject = _file_after(block, quotes[-1].end, _FROM_FILE) if quotes else None
        if subject is not None:
            _quoted(found, block, subject, _kind(match), quotes)
    for match in _ADD_QUOTE.finditer(block.lower):
        quotes = block.quote_list(match.end())
        target = _ADD_TARGET.match(block.lower, quotes[-1].end) if quotes else None
        into = block.path_at(target.end()) if target else None
        if into is not None:
            _quoted(found, block, into, "contain", quotes)


def _bare_names(found: Found, block: Block) -> None:
    for match in _BARE_NAME.finditer(block.lower):
        subject = block.path_ending_at(match.start())
        name = block.plain[match.start("name") : match.end("name")]  # as written
        named = _NAMED.search(match.group("what"))
        if subject is None or not (named or _IDENTIFIER_LIKE.fullmatch(name)):
            continue
        _content(found, block, subject, _kind(match), name, match.start("name"))


def contents(found: Found, block: Block, last: FoundPath | None) -> None:
    """Every content requirement in ``block``; ``last`` is the file the previous block named."""
    _asked_before(found, block, last)
    _asked_after(found, block)
    _bare_names(found, block)


# --- dependencies -----------------------------------------------------------------------------

_DEP_KIND = r"(?:(?:npm|python|pypi|rust|go|dev)\s)?(?:package|dependency|library|module|crate)"
_DEP_ADD = re.compile(rf"\b(?:install|add)(?:s|ed|ing)?\s(?:(?:the|a)\s)?{_DEP_KIND}\s(?=\x01)")
_DEP_AS = re.compile(r"\sas\san?\s(?:dev(?:elopment)?\s)?dependency\b")
_DEP_INSTALLED = re.compile(
    rf"(?:\b{_DEP_KIND}\s(?P<bare>[A-Za-z0-9@][\w.@/-]{{0,510}}\w)|(?P<quoted>\x01))"
    r"\s(?:must|should|needs\sto|has\sto)\sbe\sinstalled\b",
)
_ADDED = re.compile(r"\badd(?:s|ed|ing)?\s$")
_DEP_NAME = re.compile(r"(?:@[\w.-]{1,214}/)?[\w.-]{1,214}(?:/[\w.-]{1,214}){0,8}")
_NAME_SEPARATORS = re.compile(r"[-_.]{1,16}")


def _dependency_pattern(manifest: str, name: str) -> str:
    if manifest == "package.json":
        return rf'"{literal(name)}"\s*:'
    if manifest == "Cargo.toml":
        return rf"(?m)^\s*{literal(name)}\s*="
    if manifest == "go.mod":
        return rf"(?m)^\s*(?:require\s+)?{literal(name)}\s+v"
    # Python: names compare case-insensitively with '-', '_' and '.' interchangeable (PEP 503).
    flexible = "[-_.]+".join(literal(part) for part in _NAME_SEPARATORS.split(name))
    return rf"(?im)(?:^|[\"'\s])(?:{flexible})(?=[\s\[<>=!~;,\"']|$)"


def _dependency(found: Found, ctx: Context, at: int, name: str) -> None:
    manifest = ctx.commands.manifest
    if not _DEP_NAME.fullmatch(name):
        found.skip(f"dependency {name!r}", "it does not look like a package name")
        return
    if manifest is None:
        found.skip(f"dependency {name}", "the repository has no dependency manifest to check")
        return
    criterion = {
        "type": "content_match",
        "path": manifest,
        "pattern": _dependency_pattern(manifest, name),
        "description": f"{name} must be a dependency in {manifest}",
    }
    found.add(at, criterion)


def dependencies(found: Found, block: Block, ctx: Context) -> None:
    named: list[tuple[int, str]] = []
    for match in _DEP_ADD.finditer(block.lower):
        named.extend((q.start, q.inner) for q in block.quote_list(match.end()))
    for candidate in list(block.quotes.values()):
        added = _ADDED.search(block.before(candidate.start))
        if added and _DEP_AS.match(block.lower, candidate.end):
            named.append((candidate.start, candidate.inner))
    for match in _DEP_INSTALLED.finditer(block.lower):
        quote = block.quote_at(match.start("quoted")) if match.group("quoted") else None
        if quote is not None:
            named.append((quote.start, quote.inner))
        elif match.group("bare"):
            named.append(
                (match.start("bare"), block.plain[match.start("bare") : match.end("bare")])
            )
    for start, name in sorted(set(named)):
        if start in block.used:
            continue
        if start in block.quotes:
            block.used.add(start)
        _dependency(found, ctx, block.offset + start, name)
