"""A chapter's words as text a lecturer edits, rendered from the page's facts.

The sentences of a chapter that depend on its numbers live in one text file
per chapter, ``book/text/<chapter>.md``: MyST markdown with Jinja2 branches
(the templating MyST substitutions already use), one ``{% block name %}`` per
piece of text (the key takeaway, a finding, a lesson). The page's facts, a
typed record computed once in :mod:`crsbench_lib.scoring`, are the context:
``{{ tau_b | fmt(3) }}``, ``{% if verdict == "below" %}``. Editing a word or
a threshold of wording is editing that file; no Python changes, and the
chapter's cache key includes the file, so ``make book`` re-renders the
chapter.

What keeps edited words true is declared beside them, in the file's front
matter (YAML between ``---`` lines), and checked every time a piece renders:

.. code-block:: yaml

    pieces:
      takeaway:
        kind: takeaway            # at most 60 words and states a number (an "action": at most 50 words)
        claims:                   # words that may appear only when the facts say so
          - words: survives adaptation
            only_if: verdict in ("inside", "above", "unchanged")

A claim's ``only_if`` is a Jinja expression over the facts; its ``words``
match anywhere in the rendered piece (so "survives adaptation:" also matches
inside "partly survives adaptation:", and its condition must allow both). A piece that
says its ``words`` while the expression is false for the page's facts is
refused with one line naming the file, the piece and the words: a lecturer who
moves "survives" into the branch for a ranking that did not survive finds out
at the next render, not from a reader. Every block must be declared and every
declared piece must be a block. A fact the text names that the record does not
hold is an error too (never an empty string).

Wording several chapters share lives once, in a partial whose name starts
with an underscore (``book/text/_noise.md``: how a tau_b reads against the
noise of one ranking), imported inside a piece with
``{% from "_noise.md" import noise_clause %}``; a chapter's claims apply to the
words the partial adds to its piece. Filters: ``fmt(digits)``,
``plural("noun")``, ``and_list``, ``percent``, ``interval(high, digits)``,
``number`` (``0.95 * 100`` as ``95``) and ``association`` (the book's words for
a correlation's size, :data:`crsbench_lib.report.grammar.CORRELATION_SIZES`).

Layout inside a piece is free: lines are joined, runs of spaces folded, and
only a blank line the author writes breaks a paragraph, so branches can sit on
their own lines.

The text folder is ``book/text`` of the project, or ``$CRSBENCH_TEXT_DIR`` when
set (a lecturer's own copy; :func:`text_dir`).

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "demo.md").write_text(
...     "---\\npieces:\\n  takeaway:\\n    kind: takeaway\\n    claims:\\n"
...     "      - {words: agree, only_if: tau >= 0.5}\\n---\\n"
...     "{% block takeaway %}\\nThe {{ n }} rankings\\n{% if tau >= 0.5 %}agree{% else %}differ{% endif %}\\n"
...     "(τ_b {{ tau | fmt(2) }}).\\n{% endblock %}\\n")
>>> render("demo", "takeaway", {"n": 2, "tau": 0.81}, folder=folder)
'The 2 rankings agree (τ_b 0.81).'
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import yaml

from crsbench_lib.errors import CRSBenchError
from crsbench_lib.hashing import file_sha256
from crsbench_lib.paths import project_root
from crsbench_lib.report import grammar
from crsbench_lib.report.takeaway import check_action, check_takeaway

#: The environment variable naming a folder of text files to use instead of the project's.
TEXT_DIR_VARIABLE = "CRSBENCH_TEXT_DIR"
#: The kinds of piece and the check each gets after rendering.
KINDS: tuple[str, ...] = ("takeaway", "action", "text")
_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


class TextError(CRSBenchError, ValueError):
    """A chapter's text file is malformed, names an unknown fact, or says what its facts do not support."""


def text_dir() -> Path:
    """The folder of the chapters' text files: ``$CRSBENCH_TEXT_DIR`` if set, else ``book/text`` of the project."""
    env = os.environ.get(TEXT_DIR_VARIABLE)
    return Path(env) if env else project_root() / "book" / "text"


def text_path(chapter: str, folder: str | os.PathLike[str] | None = None) -> Path:
    """The text file of ``chapter`` (``<folder>/<chapter>.md``)."""
    if not re.fullmatch(r"[a-z0-9_]+", str(chapter)):
        raise TextError(f"chapter must be a notebook name such as 'transfer', got {chapter!r}")
    return Path(folder if folder is not None else text_dir()) / f"{chapter}.md"


def text_fingerprint(chapter: str, folder: str | os.PathLike[str] | None = None) -> str | None:
    """SHA-256 of the chapter's text file, or None when the chapter has none (part of its cache key)."""
    path = text_path(chapter, folder)
    return file_sha256(path) if path.is_file() else None


def _plural(count: Any, singular: str, plural: str | None = None) -> str:
    """``"1 pair"`` / ``"3 pairs"``: the count and the noun that agrees with it."""
    return f"{count} {singular if int(count) == 1 else (plural or singular + 's')}"


class _TextLoader(jinja2.BaseLoader):
    """Loads the shared partials a chapter's text imports (``{% from "_noise.md" import noise_clause %}``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Any]:
        path = self.folder / template
        if not re.fullmatch(r"_[a-z0-9_]+\.md", template) or not path.is_file():
            raise jinja2.TemplateNotFound(template)
        source = path.read_text(encoding="utf-8")
        match = _FRONT_MATTER.match(source)
        # The front matter becomes blank lines: outside every macro they print nothing, and line numbers still match.
        body = "\n" * match.group(0).count("\n") + source[match.end():] if match else source
        mtime = path.stat().st_mtime
        return _silence_tag_lines(body), str(path), lambda: path.is_file() and path.stat().st_mtime == mtime


def _environment(folder: Path | None = None) -> jinja2.Environment:
    # lstrip_blocks: a tag's indentation leaves nothing behind (:func:`_silence_tag_lines` does the same
    # for the newline of a line that holds only tags).
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False,
                             lstrip_blocks=True, loader=_TextLoader(folder) if folder is not None else None)
    env.filters.update({
        "fmt": grammar.fmt,
        "and_list": lambda items: grammar.and_list([str(i) for i in items]),
        "plural": _plural,
        "percent": grammar.percent,
        "interval": lambda low, high, digits=3: grammar.format_interval(float(low), float(high), digits),
        "number": lambda value: f"{float(value):g}",
        "association": grammar.correlation_word,
    })
    return env


_TAG_LINE = re.compile(r"[ \t]*(\{%(?:(?!%\}).)*%\}[ \t]*)+")


#: What a blank line of a text file becomes while it renders: a paragraph break that survives folding.
PARAGRAPH = "\x1d"


def _silence_tag_lines(body: str) -> str:
    """A text file's body prepared for Jinja: tag-only lines leave nothing, blank lines become paragraph marks.

    The newline of every line that holds only ``{% ... %}`` tags becomes a Jinja
    comment, so a branch can sit on its own line, while a tag at the end of a
    line of text keeps its newline (a space once folded), unlike Jinja's
    ``trim_blocks``; the comment keeps the newline in the source, so error line
    numbers still match the file. A blank line the author writes becomes
    :data:`PARAGRAPH`, so that only the author's blank lines break paragraphs,
    never the newlines that branches and macros leave behind.
    """
    lines = [PARAGRAPH if not line.strip() else line for line in body.split("\n")]
    ends = ["{#\n#}" if _TAG_LINE.fullmatch(line) else "\n" for line in lines[:-1]] + [""]
    return "".join(line + end for line, end in zip(lines, ends))


@dataclasses.dataclass(frozen=True)
class Claim:
    """Words a piece may say only when ``only_if`` (a Jinja expression over the facts) is true."""

    words: str
    only_if: str


@dataclasses.dataclass(frozen=True)
class Piece:
    """One block of a chapter's text file and the guards declared for it."""

    name: str
    kind: str
    claims: tuple[Claim, ...]


@dataclasses.dataclass(frozen=True)
class ChapterText:
    """A parsed text file: its path, its template and its declared pieces."""

    path: Path
    template: jinja2.Template
    pieces: dict[str, Piece]
    first_line: int  # the body's first line in the file (after the front matter)


def _pieces(path: Path, header: Any) -> dict[str, Piece]:
    if not isinstance(header, Mapping) or not isinstance(header.get("pieces"), Mapping):
        raise TextError(f"{path}: the front matter must hold a mapping 'pieces: {{name: {{kind: ...}}}}'")
    out: dict[str, Piece] = {}
    for name, spec in header["pieces"].items():
        spec = spec or {}
        kind = spec.get("kind", "text") if isinstance(spec, Mapping) else None
        if kind not in KINDS:
            raise TextError(f"{path}: piece {name!r}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        claims = []
        for k, claim in enumerate(spec.get("claims") or []):
            if not isinstance(claim, Mapping) or not claim.get("words") or not claim.get("only_if"):
                raise TextError(f"{path}: piece {name!r}: claims[{k}] needs 'words' and 'only_if'")
            claims.append(Claim(str(claim["words"]), str(claim["only_if"])))
        out[str(name)] = Piece(str(name), kind, tuple(claims))
    return out


@lru_cache(maxsize=64)
def _load(path: Path, digest: str) -> ChapterText:  # digest: a changed file is parsed again
    source = path.read_text(encoding="utf-8")
    match = _FRONT_MATTER.match(source)
    if match is None:
        raise TextError(f"{path}: a chapter text starts with front matter between '---' lines declaring its pieces")
    try:
        header = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise TextError(f"{path}: the front matter is not YAML ({str(exc).splitlines()[0]})") from None
    pieces = _pieces(path, header)
    first_line = match.group(0).count("\n") + 1
    try:
        template = _environment(path.parent).from_string(_silence_tag_lines(source[match.end():]))
    except jinja2.TemplateSyntaxError as exc:
        raise TextError(f"{path}:{(exc.lineno or 1) + first_line - 1}: {exc.message}") from None
    blocks, declared = set(template.blocks), set(pieces)
    if blocks != declared:
        extra, missing = sorted(blocks - declared), sorted(declared - blocks)
        problem = (f"block {extra[0]!r} is not declared under 'pieces'" if extra
                   else f"piece {missing[0]!r} has no block")
        raise TextError(f"{path}: {problem}")
    return ChapterText(path, template, pieces, first_line)


def load_text(chapter: str, folder: str | os.PathLike[str] | None = None) -> ChapterText:
    """Parse ``chapter``'s text file (cached while the file is unchanged)."""
    path = text_path(chapter, folder)
    if not path.is_file():
        raise TextError(f"{path}: no text file for chapter {chapter!r}")
    return _load(path.resolve(), file_sha256(path))


def facts_mapping(facts: Any) -> dict[str, Any]:
    """A facts record as the template's context: a mapping as it is, a dataclass by its fields."""
    if dataclasses.is_dataclass(facts) and not isinstance(facts, type):
        return {f.name: getattr(facts, f.name) for f in dataclasses.fields(facts)}
    if isinstance(facts, Mapping):
        return dict(facts)
    raise TextError(f"facts must be a dataclass record or a mapping, got {type(facts).__name__}")


def fold_whitespace(text: str) -> str:
    """Join a rendered piece into paragraphs: single spaces, a paragraph break only at :data:`PARAGRAPH`.

    Examples
    --------
    >>> fold_whitespace("  The ranking\\n survives ( 1 pair )\\n.\\n\\n" + PARAGRAPH + "Next  paragraph. ")
    'The ranking survives (1 pair).\\n\\nNext paragraph.'
    """
    paragraphs = [" ".join(p.split()) for p in text.split(PARAGRAPH)]
    joined = "\n\n".join(p for p in paragraphs if p)
    # An empty branch leaves a space before punctuation or inside a bracket.
    joined = re.sub(r" +([.,;:)])", r"\1", joined)
    return re.sub(r"\( +", "(", joined)


def render(chapter: str, piece: str, facts: Any, folder: str | os.PathLike[str] | None = None) -> str:
    """Render one piece of ``chapter``'s text from its facts, and check the guards declared for it.

    Parameters
    ----------
    chapter : str
        The notebook's name (``book/text/<chapter>.md``).
    piece : str
        The block to render, e.g. ``"takeaway"``.
    facts : dataclass or mapping
        The page's facts record.
    folder : path, optional
        The text folder (default :func:`text_dir`).

    Returns
    -------
    str
        The piece's markdown.

    Raises
    ------
    TextError
        One line naming the file and piece: unknown piece, a fact the record
        lacks, a takeaway over 60 words or without a number, or a claim's words
        said while its condition is false.
    """
    text = load_text(chapter, folder)
    if piece not in text.pieces:
        raise TextError(f"{text.path}: no piece {piece!r} (pieces: {', '.join(sorted(text.pieces))})")
    context = facts_mapping(facts)
    try:
        rendered = "".join(text.template.blocks[piece](text.template.new_context(context)))
    except jinja2.UndefinedError as exc:
        raise TextError(f"{text.path}: piece {piece!r} names {exc.message}; the facts hold "
                        f"{', '.join(sorted(context))}") from None
    except jinja2.TemplateNotFound as exc:
        raise TextError(f"{text.path}: piece {piece!r} imports {exc.name!r}, which is not a shared text "
                        f"(_<name>.md) in {text.path.parent}") from None
    except jinja2.TemplateSyntaxError as exc:
        raise TextError(f"{exc.filename or text.path}:{exc.lineno}: {exc.message}") from None
    except (TypeError, ValueError, IndexError, KeyError) as exc:
        raise TextError(f"{text.path}: piece {piece!r} failed to render: {exc!r}") from None
    out = fold_whitespace(rendered)
    check_claims(text, text.pieces[piece], out, context)
    checks = {"takeaway": check_takeaway, "action": check_action}
    if text.pieces[piece].kind in checks:
        try:
            out = checks[text.pieces[piece].kind](out)
        except ValueError as exc:
            raise TextError(f"{text.path}: piece {piece!r}: {exc}") from None
    return out


def check_claims(text: ChapterText, piece: Piece, rendered: str, context: Mapping[str, Any]) -> None:
    """Refuse a rendered piece that says a claim's words while the claim's condition is false for the facts."""
    env = _environment()
    for claim in piece.claims:
        if claim.words not in rendered:
            continue
        try:
            holds = env.compile_expression(claim.only_if, undefined_to_none=False)(**context)
        except (jinja2.TemplateError, TypeError) as exc:
            raise TextError(f"{text.path}: piece {piece.name!r}: claim {claim.words!r}: cannot evaluate "
                            f"{claim.only_if!r} ({exc})") from None
        if not holds:
            raise TextError(f"{text.path}: piece {piece.name!r} says {claim.words!r}, but {claim.only_if} is false "
                            "for these facts")
