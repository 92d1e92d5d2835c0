"""A chapter as a page of its own, without Sphinx: MyST constructs turned into plain Markdown and HTML.

The book renders figures from glued outputs (``{glue:figure}``), cross-references
(``{numref}``), glossary terms and citations with Sphinx. A rerun with
``crsbench notebook`` is opened as one standalone HTML page (nbconvert), which
knows none of these; :func:`standalone_notebook` rewrites a copy of the executed
notebook so that the page shows the same figures with their captions and alt
text, and readable text where a role was.
"""

from __future__ import annotations

import copy
import html
import re

import nbformat

GLUE_PREFIX = "application/papermill.record/"
_FIGURE = re.compile(r"```\{glue:figure\}\s+(?P<key>\S+)\n(?P<options>(?::[^\n]*\n)*)\n?(?P<caption>.*?)\n```", re.S)
_GLUE_MD = re.compile(r"\{glue:md\}`(?P<key>[^`:]+)(?::[^`]*)?`")
_ROLE = re.compile(r"\{(?P<role>[a-z:]+)\}`(?P<text>[^`]*)`")
_INDEX = re.compile(r"```\{index\}[^\n]*\n(?:[^\n]*\n)*?```\n?")
_GLUE_MD_BLOCK = re.compile(r"```\{glue:md\}\s+(?P<key>\S+)\n(?::[^\n]*\n)*```")
_BACKTICK_ADMONITION = re.compile(r"^````\{admonition\}\s*(?P<title>[^\n]*)\n(?::class:[^\n]*\n)?", re.M)
_COLON_FENCE = re.compile(r"^:::\{admonition\}\s*(?P<title>[^\n]*)\n(?::class:[^\n]*\n)?", re.M)
# A MyST target line, "(method-details-agreement)=": a label for Sphinx, nothing a reader should see.
_TARGET = re.compile(r"^\([\w-]+\)=[ \t]*\n?", re.M)
_EXERCISE = re.compile(r"````\{(?P<kind>exercise|solution)\}[^\n]*\n(?::[^\n]*\n)*\n?(?P<body>.*?)\n````", re.S)


def glued_outputs(nb: nbformat.NotebookNode) -> dict[str, dict[str, object]]:
    """Every glued value of a notebook: key -> its mime bundle without the glue prefix."""
    found: dict[str, dict[str, object]] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is None:
                continue
            found[name] = {k[len(GLUE_PREFIX):]: v for k, v in output.get("data", {}).items() if k.startswith(GLUE_PREFIX)}
    return found


def _role_text(match: re.Match[str]) -> str:
    role, text = match.group("role"), match.group("text")
    label = re.sub(r"\s*<[^>]*>$", "", text)  # {doc}`title <target>` -> title
    if role.startswith("cite"):
        return f"({label})"
    if role in ("numref", "ref"):
        return "the figure below" if label.startswith("fig-") else label
    if role == "doc":
        return f"*{label.split('/')[-1]}*"
    return label


def _figure_html(match: re.Match[str], glued: dict[str, dict[str, object]]) -> str:
    key = match.group("key")
    options = dict(re.findall(r":(\w+):\s*([^\n]*)", match.group("options")))
    bundle = glued.get(key, {})
    png = bundle.get("image/png")
    caption = _GLUE_MD.sub(lambda m: str(glued.get(m.group("key"), {}).get("text/markdown", "")), match.group("caption"))
    caption = _ROLE.sub(_role_text, caption)
    caption = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html.escape(caption.strip(), quote=False))
    if not isinstance(png, str):
        return f"<figure><figcaption>{caption} (figure not available)</figcaption></figure>"
    source = png if png.startswith("data:") else f"data:image/png;base64,{png}"
    alt = html.escape(options.get("alt", key))
    return f'<figure id="{html.escape(key)}"><img src="{source}" alt="{alt}" style="max-width:100%"><figcaption>{caption}</figcaption></figure>'


def standalone_markdown(text: str, glued: dict[str, dict[str, object]]) -> str:
    """One markdown cell's MyST rewritten for a plain Markdown renderer.

    Examples
    --------
    >>> standalone_markdown("(method-details-x)=\\n## Method details\\n", {})
    '## Method details\\n'
    >>> box = "````{admonition} Key takeaway\\n:class: important\\n\\n```{glue:md} t\\n:format: myst\\n```\\n````"
    >>> standalone_markdown(box, {"t": {"text/markdown": "Ten of 12 advance."}}).strip()
    '**Key takeaway**\\n\\n\\nTen of 12 advance.'
    """
    text = _FIGURE.sub(lambda m: _figure_html(m, glued), text)
    text = _INDEX.sub("", text)
    text = _TARGET.sub("", text)
    text = _EXERCISE.sub(lambda m: f"**{m.group('kind').capitalize()}.** {m.group('body').strip()}", text)
    text = _COLON_FENCE.sub(lambda m: f"**{m.group('title').strip()}**\n\n", text)
    # The key-takeaway box: a four-backtick admonition holding glued markdown (the takeaway, the action line).
    text = _BACKTICK_ADMONITION.sub(lambda m: f"**{m.group('title').strip()}**\n\n", text)
    text = re.sub(r"^````\s*$", "", text, flags=re.M)
    text = _GLUE_MD_BLOCK.sub(lambda m: str(glued.get(m.group("key"), {}).get("text/markdown", "")), text)
    text = re.sub(r"^:::\s*$", "", text, flags=re.M)
    text = _GLUE_MD.sub(lambda m: str(glued.get(m.group("key"), {}).get("text/markdown", "")), text)
    return _ROLE.sub(_role_text, text)


def standalone_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of an executed notebook that renders fully without Sphinx (see the module docstring)."""
    out = copy.deepcopy(nb)
    glued = glued_outputs(out)
    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = standalone_markdown(cell.source, glued)
        else:
            cell["outputs"] = [o for o in cell.get("outputs", []) if "scrapbook" not in o.get("metadata", {})]
    return out

