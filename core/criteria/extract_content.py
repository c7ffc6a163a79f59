"""Rules for content: text a file must hold, names it must export, packages it must list."""

from __future__ import annotations

import re

from core.criteria.extract_base import Context, Found, literal
from core.criteria.extract_text import Block, FoundPath, Quote

_WHAT = (
    "a|an|the|line|lines|string|text|section|heading|header|title|entry|key|word|phrase|comment"
    "|note|function|class|method|setting|value|field|constant|variable|component|called|named"
    "|with|exact|exactly|literal|default|new|following|statement|import|block"
)
_CONTENT_VERB = re.compile(
    r"(?:\s(?:must|should|shall|will|needs?\sto|has\sto|is\sto))?"
    r"(?:\s(?:also|still|now|only|always))?\s"
    r"(?:(?P<contain>contain(?:s|ing)?|includes?|mentions?|has|lists?)"
    r"|(?P<regex>match(?:es)?\s(?:the\s)?(?:regex|regexp|regular\sexpression|pattern))"
    r"|(?P<export>exports?)|(?P<define>defines?))"
    rf"(?:\s(?:{_WHAT})(?=\s)){{0,8}}\s(?=\x01)",
    re.I,
)
_PRONOUN = re.compile(r"(?:^|\W)(?:it|this\sfile|that\sfile|the\sfile|the\snew\sfile)$", re.I)
_ADD_QUOTE = re.compile(
    r"\b(?:add|append|insert|put|write)(?:s|ed|ing)?\s(?:(?:a|an|the|new)\s)?(?=\x01)", re.I
)
_ADD_TARGET = re.compile(
    rf"(?:\s(?:{_WHAT})(?=\s)){{0,8}}\s(?:to|in|into|inside)\s(?:the\s)?(?:file\s)?", re.I
)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w{0,255}")


def _content_pattern(kind: str, text: str, path: str) -> tuple[str, str]:
    """The pattern and description for one content requirement of the given kind."""
    if kind == "regex":
        return text, f"{path} must match /{text}/"
    if kind in ("export", "define") and _IDENTIFIER.fullmatch(text):
        if kind == "export":
            return rf"export\b.*\b{text}\b", f"{path} must export {text}"
        if path.endswith(".py"):
            return rf"(?m)^\s*(?:async\s+def|def|class)\s+{text}\b", f"{path} must define {text}"
        return rf"\b{text}\b", f"{path} must define {text}"
    return literal(text), f'{path} must contain "{text}"'


def _content(found: Found, block: Block, subject: FoundPath, kind: str, quote: Quote) -> None:
    block.used.add(quote.start)
    what = f"content_match for {quote.inner!r}"
    if subject.problem or subject.is_dir:
        found.skip(what, subject.problem or f"{subject.path} is a folder")
        return
    pattern, description = _content_pattern(kind, quote.inner, subject.path)
    try:
        re.compile(pattern)
    except re.error as exc:
        found.skip(what, f"the pattern does not compile ({exc})")
        return
    criterion = {"type": "content_match", "path": subject.path, "pattern": pattern}
    found.add(block.offset + quote.start, {**criterion, "description": description})


def _subject(block: Block, end: int) -> FoundPath | None:
    hit = block.path_ending_at(end)
    if hit is not None:
        return hit
    if _PRONOUN.search(block.before(end)):
        return block.last_path_before(end)
    return None


def contents(found: Found, block: Block, last: FoundPath | None) -> None:
    for match in _CONTENT_VERB.finditer(block.plain):
        kind = next(k for k in ("contain", "regex", "export", "define") if match.group(k))
        quotes = block.quote_list(match.end())
        subject = _subject(block, match.start())
        if subject is None and _PRONOUN.search(block.before(match.start())):
            subject = last  # "It must contain ..." after a file named in an earlier item
        if not quotes:
            continue
        if subject is None:
            found.notes.append(f"not extracted: {quotes[0].inner!r} is required of no named file")
            continue
        for quote in quotes:
            _content(found, block, subject, kind, quote)
    for match in _ADD_QUOTE.finditer(block.plain):
        quotes = block.quote_list(match.end())
        target = _ADD_TARGET.match(block.plain, quotes[-1].end) if quotes else None
        into = block.path_at(target.end()) if target else None
        if into is not None:
            for quote in quotes:
                _content(found, block, into, "contain", quote)


# --- dependencies -----------------------------------------------------------------------------

_DEP_KIND = r"(?:(?:npm|python|pypi|rust|go|dev)\s)?(?:package|dependency|library|module|crate)"
_DEP_ADD = re.compile(
    rf"\b(?:install|add)(?:s|ed|ing)?\s(?:(?:the|a)\s)?{_DEP_KIND}\s(?=\x01)", re.I
)
_DEP_AS = re.compile(r"\sas\san?\s(?:dev(?:elopment)?\s)?dependency\b", re.I)
_DEP_INSTALLED = re.compile(
    rf"(?:\b{_DEP_KIND}\s(?P<bare>[A-Za-z0-9@][\w.@/-]{{0,510}}\w)|(?P<quoted>\x01))"
    r"\s(?:must|should|needs\sto|has\sto)\sbe\sinstalled\b",
    re.I,
)
_ADDED = re.compile(r"\badd(?:s|ed|ing)?\s$", re.I)
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
    for match in _DEP_ADD.finditer(block.plain):
        named.extend((q.start, q.inner) for q in block.quote_list(match.end()))
    for candidate in list(block.quotes.values()):
        added = _ADDED.search(block.before(candidate.start))
        if added and _DEP_AS.match(block.plain, candidate.end):
            named.append((candidate.start, candidate.inner))
    for match in _DEP_INSTALLED.finditer(block.plain):
        quote = block.quote_at(match.start("quoted")) if match.group("quoted") else None
        if quote is not None:
            named.append((quote.start, quote.inner))
        elif match.group("bare"):
            named.append((match.start("bare"), match.group("bare")))
    for start, name in sorted(set(named)):
        if start in block.used:
            continue
        if start in block.quotes:
            block.used.add(start)
        _dependency(found, ctx, block.offset + start, name)
