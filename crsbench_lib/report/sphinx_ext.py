"""A small Sphinx extension for the book: no Thebe script when Thebe is off, and no console error on first visit.

* Jupyter Book 1.x always loads ``sphinx_thebe``, which adds its inline
  configuration script (``const THEBE_JS_URL = ...``) twice and its loader even
  when Thebe is off: every page then logs ``Identifier 'THEBE_JS_URL' has
  already been declared``. With Thebe off this extension drops both scripts
  from every page.
* pydata-sphinx-theme reads the colour mode from ``localStorage`` and logs
  ``Got invalid theme mode`` on a reader's first visit (nothing stored yet);
  a one-line script defaults the mode to ``auto`` before the theme reads it.

The book's ``_config.yml`` lists it under ``sphinx.extra_extensions``.
"""

from __future__ import annotations

from typing import Any

THEBE_MARKERS: tuple[str, ...] = ("THEBE_JS_URL", "sphinx-thebe.js", "thebe.js")
DEFAULT_MODE_JS = 'if (!document.documentElement.dataset.mode) { document.documentElement.dataset.mode = "auto"; }'


def thebe_enabled(config: Any) -> bool:
    """Whether the book turned Thebe on (Jupyter Book puts it in the theme's launch-button options)."""
    options = getattr(config, "html_theme_options", None) or {}
    launch = options.get("launch_buttons", {}) or {}
    return bool(launch.get("thebe", False) or getattr(config, "use_thebe", False))


def is_thebe_script(script: Any) -> bool:
    """True for Thebe's loader and its inline configuration (a Sphinx ``_JavaScript`` or a plain name)."""
    filename = str(getattr(script, "filename", script) or "")
    body = str(getattr(script, "attributes", {}).get("body", "")) if hasattr(script, "attributes") else ""
    return any(marker in filename or marker in body for marker in THEBE_MARKERS)


def _drop_thebe(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    if thebe_enabled(app.config):
        return
    scripts = context.get("script_files")
    if scripts:
        context["script_files"] = [s for s in scripts if not is_thebe_script(s)]


def setup(app: Any) -> dict[str, Any]:
    """Register the page hook and the default-mode script."""
    app.add_js_file(None, body=DEFAULT_MODE_JS, priority=100)
    app.connect("html-page-context", _drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
