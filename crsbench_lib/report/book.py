"""Render the book: stage prose and executed notebooks, then ``jupyter-book build``.

The project root holds ``_config.yml`` (Jupyter Book 1.x) and ``book/`` the
prose chapters and ``_toc.yml``, whose entries name ``book/<page>`` and
``notebooks/<name>``. The executed notebooks live in the build folder, so the
book is *staged*: ``_build/source`` receives the config (with the build's
provenance as MyST substitutions, so prose pages show it too), the table of
contents, the prose and the executed notebooks, and ``jupyter-book build``
renders it with notebook execution off into ``_build/html``. Files are copied
only when their content changed, so Sphinx re-renders only changed pages.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from crsbench_lib.atomic import atomic_write_text
from crsbench_lib.errors import NotebookError
from crsbench_lib.paths import project_root

CONFIG_FILE = "_config.yml"
TOC_FILE = "_toc.yml"
BOOK_DIR = "book"
NOTEBOOKS_DIR = "notebooks"
#: The page "How each number is computed": generated into the staged book, never kept in ``book/``.
API_PAGE = "book/api"
BUILD_DIR = "_build"  # jupyter-book appends this to --path-output
SOURCE_DIR = "source"
HTML_DIR = "html"
PROVENANCE_FILE = "provenance.json"  # in the HTML folder: what produced the rendered book
REPOSITORY_ENV = "CRSBENCH_REPOSITORY_URL"  # set it once the repository is public: launch buttons appear
BINDER_URL = "https://mybinder.org"
COLAB_URL = "https://colab.research.google.com"


def _has_lora_arm(results: pd.DataFrame) -> bool:
    return bool((results["arm"] == "lora").any())


#: Chapters that need what not every run has: name -> (test on the results table, what the run lacks).
CHAPTER_NEEDS: dict[str, tuple[Callable[[pd.DataFrame], bool], str]] = {
    "transfer": (_has_lora_arm, "the run has no LoRA arm (arms: [frozen, lora] in the profile)"),
}


def runnable_chapters(results: pd.DataFrame, names: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The chapters a results table can fill, and why the others are left out.

    Parameters
    ----------
    results : pandas.DataFrame
        The book's results table.
    names : sequence of str
        Candidate notebook names.

    Returns
    -------
    (list of str, dict)
        The names kept (in order) and, for each name left out, what the run lacks
        (:data:`CHAPTER_NEEDS`).

    Examples
    --------
    >>> table = pd.DataFrame({"arm": ["frozen"]})
    >>> runnable_chapters(table, ["cohort", "transfer"])[0]
    ['cohort']
    """
    left = {name: CHAPTER_NEEDS[name][1] for name in names
            if name in CHAPTER_NEEDS and not CHAPTER_NEEDS[name][0](results)}
    return [name for name in names if name not in left], left


def _copy_if_changed(source: Path, destination: Path) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    if destination.is_file() and filecmp.cmp(source, destination, shallow=False):
        return
    shutil.copyfile(source, destination)


def _toc_files(entries: Any) -> list[str]:
    """Every ``file``/``root`` entry of a jb-book table of contents."""
    found: list[str] = []
    if isinstance(entries, dict):
        # The root page comes first in reading order, wherever the YAML lists it.
        for key, value in sorted(entries.items(), key=lambda item: item[0] != "root"):
            if key in ("file", "root") and isinstance(value, str):
                found.append(value)
            else:
                found.extend(_toc_files(value))
    elif isinstance(entries, list):
        for item in entries:
            found.extend(_toc_files(item))
    return found


def _prune_toc(entries: Any, keep: set[str]) -> Any:
    """The table of contents without the pages not in ``keep`` (and parts left empty)."""
    if isinstance(entries, list):
        pruned = [_prune_toc(e, keep) for e in entries]
        return [e for e in pruned if e is not None]
    if isinstance(entries, dict):
        if "file" in entries and entries["file"] not in keep:
            return None
        out = {k: _prune_toc(v, keep) if k in ("parts", "chapters", "sections") else v for k, v in entries.items()}
        for key in ("chapters", "sections"):
            if key in out and not out[key]:
                del out[key]
        if "parts" in out:
            out["parts"] = [p for p in out["parts"] if p.get("chapters")]
        if "caption" in out and "chapters" not in out and "file" not in out:
            return None
        return out
    return entries


def toc_pages(root: str | os.PathLike[str] | None = None) -> list[str]:
    """The pages the table of contents names, in reading order (without suffix)."""
    base = Path(root) if root is not None else project_root()
    toc = yaml.safe_load((base / BOOK_DIR / TOC_FILE).read_text(encoding="utf-8"))
    return _toc_files(toc)


def execution_table(executed: Sequence[Any]) -> str:
    """The execution-status page's table (Markdown): one row per chapter, executed or cached, and seconds.

    Parameters
    ----------
    executed : sequence of ExecutionResult
        What :func:`crsbench_lib.report.notebooks.execute_all` returned.
    """
    rows = ["| chapter | how | seconds | cache key |", "| --- | --- | ---: | --- |"]
    for result in executed:
        how = "reused from the execution cache" if result.cached else "executed in this build"
        rows.append(f"| {{doc}}`../notebooks/{result.name}` | {how} | {result.seconds:.1f} | `{result.key[:12]}` |")
    return "\n".join(rows)


def launch_config(repository: str | None) -> dict[str, Any]:
    """Config entries that turn on Binder and Colab launch buttons for a public repository (empty without one)."""
    if not repository:
        return {}
    return {
        "repository": {"url": repository, "branch": "main", "path_to_book": ""},
        "launch_buttons": {"notebook_interface": "classic", "binderhub_url": BINDER_URL, "colab_url": COLAB_URL,
                           "thebe": False},
    }


def stage_book(
    executed: Mapping[str, Path],
    stage: str | os.PathLike[str],
    substitutions: Mapping[str, str] | None = None,
    root: str | os.PathLike[str] | None = None,
    repository: str | None = None,
) -> tuple[Path, list[str]]:
    """Assemble the book's source folder.

    Parameters
    ----------
    executed : mapping of str to path
        Executed notebook per notebook name.
    stage : path
        The staging folder (created; stale pages are removed).
    substitutions : mapping, optional
        MyST substitutions added to the config (e.g. ``provenance``).
    root : path, optional
        Project root holding ``_config.yml`` and ``book/``.
    repository : str, optional
        URL of the public repository; turns on the launch buttons (Binder, Colab).

    Returns
    -------
    (pathlib.Path, list of str)
        The staging folder and the table-of-contents pages left out because
        their notebook was not executed (e.g. a chapter whose notebook does not
        exist yet).

    Raises
    ------
    NotebookError
        If the config or the table of contents is missing, or a prose page the
        table of contents names does not exist.
    """
    base = Path(root) if root is not None else project_root()
    target = Path(stage)
    config_path, toc_path = base / CONFIG_FILE, base / BOOK_DIR / TOC_FILE
    for required in (config_path, toc_path):
        if not required.is_file():
            raise NotebookError(f"book: missing {required}")
    target.mkdir(parents=True, exist_ok=True)
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    kept: set[str] = set()
    skipped: list[str] = []
    wanted: set[Path] = set()
    for page in _toc_files(toc):
        folder, _, name = page.partition("/")
        if folder == NOTEBOOKS_DIR:
            if name in executed:
                destination = target / NOTEBOOKS_DIR / f"{name}.ipynb"
                _copy_if_changed(Path(executed[name]), destination)
                wanted.add(destination)
                kept.add(page)
            else:
                skipped.append(page)
            continue
        if page == API_PAGE:
            # A build product, like the executed notebooks: written from the chapters' code at every build.
            from crsbench_lib.report.api_page import api_markdown

            chapters = [p.partition("/")[2] for p in _toc_files(toc) if p.startswith(f"{NOTEBOOKS_DIR}/")]
            destination = target / f"{page}.md"
            text = api_markdown(base / NOTEBOOKS_DIR, chapters)
            if not destination.is_file() or destination.read_text(encoding="utf-8") != text:
                atomic_write_text(destination, text)
            wanted.add(destination)
            kept.add(page)
            continue
        matches = [p for p in (base / f"{page}.md", base / f"{page}.ipynb") if p.is_file()]
        if not matches:
            raise NotebookError(f"book: {toc_path} names page {page!r}, but {base / page}.md does not exist")
        destination = target / matches[0].relative_to(base)
        _copy_if_changed(matches[0], destination)
        wanted.add(destination)
        kept.add(page)
    # Static assets of the prose (images) travel with it.
    for asset in (base / BOOK_DIR).rglob("*"):
        if asset.is_file() and asset.suffix.lower() in (".png", ".svg", ".jpg", ".css", ".bib"):
            destination = target / asset.relative_to(base)
            _copy_if_changed(asset, destination)
            wanted.add(destination)
    for stale in list(target.rglob("*.ipynb")) + list(target.rglob("*.md")):
        if stale not in wanted:
            stale.unlink()
    pruned = _prune_toc(toc, kept)
    atomic_write_text(target / TOC_FILE, yaml.safe_dump(pruned, sort_keys=False))
    config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    if substitutions:
        parse = config.setdefault("parse", {})
        extensions = parse.setdefault("myst_enable_extensions", [])
        if "substitution" not in extensions:
            extensions.append("substitution")
        parse.setdefault("myst_substitutions", {}).update(dict(substitutions))
    config.update(launch_config(repository))
    rendered = yaml.safe_dump(config, sort_keys=False)
    existing = target / CONFIG_FILE
    if not existing.is_file() or existing.read_text(encoding="utf-8") != rendered:
        atomic_write_text(existing, rendered)
    return target, skipped


def jupyter_book_command() -> list[str]:
    """The ``jupyter-book`` executable of this environment."""
    beside = Path(sys.executable).parent / "jupyter-book"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("jupyter-book")
    if found is None:
        raise NotebookError("book: the 'jupyter-book' command is not installed (pip install 'jupyter-book>=1,<2')")
    return [found]


def build_html(stage: str | os.PathLike[str], output_root: str | os.PathLike[str], quiet: bool = True) -> Path:
    """Run ``jupyter-book build`` on a staged book; return the HTML folder.

    Parameters
    ----------
    stage : path
        The staged source folder (:func:`stage_book`).
    output_root : path
        Jupyter Book writes to ``<output_root>/_build/html``.
    quiet : bool
        Pass ``-q`` (warnings are still shown).

    Raises
    ------
    NotebookError
        If the build fails (the message ends with the tail of its output).
    """
    out = Path(output_root)
    command = [*jupyter_book_command(), "build", str(stage), "--path-output", str(out)]
    if quiet:
        command.append("-q")
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    html = out / BUILD_DIR / HTML_DIR
    if completed.returncode != 0 or not (html / "index.html").is_file():
        tail = (completed.stdout + completed.stderr).strip().splitlines()[-15:]
        raise NotebookError("book: jupyter-book build failed:\n" + "\n".join(tail))
    return html


def render_book(
    results_path: str | os.PathLike[str],
    profile: str,
    standard_path: str | os.PathLike[str] | None = None,
    simulated: bool | None = None,
    output_root: str | os.PathLike[str] | None = None,
    names: list[str] | None = None,
    use_cache: bool = True,
    progress: bool = False,
    root: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
) -> Path:
    """Execute every notebook (cached) and render the HTML book.

    Parameters
    ----------
    results_path : path
        The results table every chapter reads.
    profile : str
        The profile that produced it (shown on every page).
    standard_path : path, optional
        The reference standard (see :func:`crsbench_lib.report.context.resolve_standard`).
    simulated : bool, optional
        Whether the cohort is the simulated phantom cohort (``None``: read from
        the run manifest beside the results table).
    output_root : path, optional
        The book lands in ``<output_root>/_build`` (default: the project root):
        ``notebooks/`` (executed), ``source/`` (staged), ``html/``.
    names : list of str, optional
        Notebooks to execute (default: all); those the table cannot fill are
        left out (:func:`runnable_chapters`).
    use_cache : bool
        Reuse cached notebook executions.
    progress : bool
        Print one line per step.
    root : path, optional
        Project root (``_config.yml``, ``book/``, ``notebooks/``).
    cache : path, optional
        Folder of the notebook execution cache.

    Returns
    -------
    pathlib.Path
        The HTML folder; its ``provenance.json`` holds the build's
        :class:`~crsbench_lib.report.banner.Provenance` (package version,
        standard, results hash, build date).
    """
    from crsbench_lib.report import own_data
    from crsbench_lib.report.banner import build_date, provenance, release_markdown
    from crsbench_lib.report.context import portable_path, resolve_standard, simulated_from_manifest
    from crsbench_lib.report.notebooks import available_notebooks, execute_all
    from crsbench_lib.results.validated import read_validated

    if simulated is None:
        simulated = simulated_from_manifest(results_path)
    base = Path(root) if root is not None else project_root()
    out_root = Path(output_root) if output_root is not None else base
    build = out_root / BUILD_DIR
    # Paths as the notebooks can resolve them anywhere (the default run, or relative
    # to the project root): a downloaded notebook must not carry this machine's paths.
    common = {
        "results_path": portable_path(results_path, profile),
        "profile": profile,
        "standard_path": portable_path(standard_path, profile) if standard_path is not None else None,
        "simulated": simulated,
    }
    # Validated and hashed once; the standard, banner, fit and reproduction share it.
    table = read_validated(results_path)
    # A chapter whose inputs the run lacks is left out of the book (and says why), not failed.
    candidates = names if names is not None else list(available_notebooks(base / NOTEBOOKS_DIR))
    chosen, lacking = runnable_chapters(table.frame, candidates)
    if progress:
        for name, why in lacking.items():
            print(f"  {name:<18} left out: {why}", flush=True)
    executed = execute_all(common, build / NOTEBOOKS_DIR, names=chosen, directory=base / NOTEBOOKS_DIR,
                           use_cache=use_cache, progress=progress, cache=cache)
    standard = resolve_standard(standard_path, table)
    banner = provenance(table, standard, profile=profile, simulated=simulated, built=build_date())
    run = own_data.read_run_data(results_path)
    fields = banner.as_dict()
    substitutions = {
        "provenance": banner.text(),
        "profile": fields["profile"],
        "standard_version": fields["standard"],
        "config_hash": fields["config hash"],
        "results_hash": fields["results hash"],
        "package_version": fields["package"],
        "cohort": fields["cohort"],
        "build_date": banner.build_date,
        "release": release_markdown(banner),
        "execution_table": execution_table(executed),
        # The prose pages describe the run's own data (not the phantom cohort, unless it is the cohort).
        "cohort_text": own_data.intro_text(run),
        "fit_report": own_data.fit_markdown(table, standard),
        "rebuild": own_data.rebuild_markdown(run, profile, results_path),
        "reproduction": own_data.reproduction_markdown(table, profile),
    }
    stage, skipped = stage_book({r.name: r.output for r in executed}, build / SOURCE_DIR, substitutions, root=base,
                                repository=os.environ.get(REPOSITORY_ENV) or None)
    if progress and skipped:
        print(f"  left out of the table of contents (no notebook): {', '.join(skipped)}", flush=True)
    html = build_html(stage, out_root)
    # Published with the site, and read by `crsbench pdf` for the PDF's first page.
    atomic_write_text(html / PROVENANCE_FILE, json.dumps(banner.to_json(), indent=2, sort_keys=True) + "\n")
    return html
