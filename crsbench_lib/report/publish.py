"""Publish the built book: push ``_build/html`` to a ``gh-pages`` branch.

This follows Jupyter Book's convention, ``ghp-import -n -p -f _build/html``:
ghp-import commits the folder as the only content of the ``gh-pages`` branch
of the local repository (with a ``.nojekyll`` file, so GitHub Pages serves the
``_static`` folders that Sphinx writes) and force-pushes that branch to the
remote. The GitHub Actions workflow deploys through Pages artifacts instead;
this is the command for a maintainer's machine or another host.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from crsbench_lib.errors import CRSBenchError, PublishError
from crsbench_lib.paths import project_root
from crsbench_lib.report.banner import Provenance
from crsbench_lib.report.book import BUILD_DIR, HTML_DIR, PROVENANCE_FILE

DEFAULT_REMOTE = "origin"
DEFAULT_BRANCH = "gh-pages"


def default_html_dir(root: str | os.PathLike[str] | None = None) -> Path:
    """Where ``crsbench book`` renders the HTML book: ``<root>/_build/html``."""
    return (Path(root) if root is not None else project_root()) / BUILD_DIR / HTML_DIR


def require_site(html_dir: str | os.PathLike[str]) -> Path:
    """The built site folder, checked to hold ``index.html``.

    Raises
    ------
    PublishError
        If there is no ``index.html`` (the book was not built there).
    """
    folder = Path(html_dir)
    if not (folder / "index.html").is_file():
        raise PublishError(f"no built book at {folder} (no index.html): run 'make book' or 'crsbench book' first")
    return folder


def read_provenance(html_dir: str | os.PathLike[str]) -> Provenance:
    """The provenance ``crsbench book`` wrote beside the site (``provenance.json``).

    Raises
    ------
    PublishError
        If the file is missing or unreadable (the book was built by an older
        version or by hand).
    """
    path = Path(html_dir) / PROVENANCE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PublishError(f"{path} is missing: rebuild the book with 'crsbench book'") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PublishError(f"{path}: not a readable provenance file ({exc})") from None
    if not isinstance(data, dict):
        raise PublishError(f"{path}: expected a JSON object")
    try:
        return Provenance.from_json(data, source=str(path))
    except CRSBenchError as exc:
        raise PublishError(str(exc)) from None


def commit_message(html_dir: str | os.PathLike[str]) -> str:
    """The ``gh-pages`` commit message: what produced the site, if it says."""
    try:
        prov = read_provenance(html_dir)
    except PublishError:
        return "Publish the CRS-Bench book"
    return (f"Publish the CRS-Bench book (crsbench {prov.package_version}, standard {prov.standard_version}, "
            f"results {prov.short_results_hash()}, built {prov.build_date or 'date not recorded'})")


def publish_site(
    html_dir: str | os.PathLike[str] | None = None,
    remote: str = DEFAULT_REMOTE,
    branch: str = DEFAULT_BRANCH,
    repository: str | os.PathLike[str] | None = None,
    message: str | None = None,
    push: bool = True,
) -> str:
    """Commit a built site to ``branch`` with ghp-import and push it to ``remote``.

    Parameters
    ----------
    html_dir : path, optional
        The built site (default: ``_build/html`` of the project).
    remote : str
        A remote name of ``repository`` or a URL/path git can push to.
    branch : str
        The branch that receives the site.
    repository : path, optional
        The git repository whose ``branch`` is written (default: the project root).
    message : str, optional
        Commit message (default: :func:`commit_message`).
    push : bool
        Push to ``remote`` (force, as the branch holds only the last site).

    Returns
    -------
    str
        The commit of ``branch`` that holds the site.

    Raises
    ------
    PublishError
        If the site is not built, ``repository`` is not a git repository, or
        ghp-import or the push fails (with git's last message).

    Examples
    --------
    >>> publish_site(remote="origin")  # doctest: +SKIP
    '3f9c...'
    """
    site = require_site(html_dir if html_dir is not None else default_html_dir())
    repo = Path(repository) if repository is not None else project_root()
    git = shutil.which("git")
    if git is None:
        raise PublishError("git is not installed; it is needed to publish the book")
    if subprocess.run([git, "-C", str(repo), "rev-parse", "--git-dir"], capture_output=True,
                      check=False).returncode != 0:
        raise PublishError(f"{repo} is not a git repository; publishing writes its '{branch}' branch")
    command = [sys.executable, "-m", "ghp_import", "--no-jekyll", "--remote", remote, "--branch", branch,
               "--message", message if message is not None else commit_message(site)]
    if push:
        command += ["--push", "--force"]
    completed = subprocess.run([*command, str(site.resolve())], cwd=repo, capture_output=True, text=True,
                               check=False)
    # ghp-import reports a failed commit on stdout and still exits 0 (it would push the previous site).
    if completed.returncode != 0 or "Failed to process commit" in completed.stdout:
        said = (completed.stderr.strip() or completed.stdout.strip() or "no message").splitlines()[-1]
        raise PublishError(f"publishing to {remote} ({branch}) failed: {said}")
    head = subprocess.run([git, "-C", str(repo), "rev-parse", f"refs/heads/{branch}"], capture_output=True,
                          text=True, check=False)
    if head.returncode != 0:
        raise PublishError(f"ghp-import did not write branch '{branch}' in {repo}")
    return head.stdout.strip()
