from types import SimpleNamespace

from sphinx.builders.html._assets import _JavaScript

from crsbench_lib.report import sphinx_ext


def _context():
    return {"script_files": [
        _JavaScript("_static/jquery.js"),
        _JavaScript(None, body='const THEBE_JS_URL = "https://unpkg.com/thebe"'),
        _JavaScript("_static/sphinx-thebe.js", loading_method="async"),
        _JavaScript(None, body='const THEBE_JS_URL = "https://unpkg.com/thebe"'),
    ]}


def test_thebe_scripts_are_dropped_when_thebe_is_off():
    app = SimpleNamespace(config=SimpleNamespace(html_theme_options={"launch_buttons": {"thebe": False}}))
    context = _context()
    sphinx_ext._drop_thebe(app, "page", "page.html", context, None)
    assert [s.filename for s in context["script_files"]] == ["_static/jquery.js"]


def test_thebe_scripts_stay_when_thebe_is_on():
    app = SimpleNamespace(config=SimpleNamespace(html_theme_options={"launch_buttons": {"thebe": True}}))
    context = _context()
    sphinx_ext._drop_thebe(app, "page", "page.html", context, None)
    assert len(context["script_files"]) == 4
