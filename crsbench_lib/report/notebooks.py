"""Execute the book's notebooks with papermill, behind an execution cache.

Each notebook in ``notebooks/`` declares its parameters in one cell tagged
``parameters``. :func:`execute_notebook` injects new values (only names the
notebook declares: anything else is a :class:`~crsbench_lib.errors.NotebookError`
that lists the valid ones), runs it in a fresh kernel and stores the executed
copy under a cache key made of

* the notebook's source (the cells' sources, not outputs or metadata),
* the chapter's text file (``book/text/<chapter>.md``, :mod:`crsbench_lib.report.text`),
* the effective parameters (declared defaults overlaid with the given values),
* the content of the results file and of the standard file they name,
* the package version and the code version (a hash of the library's sources).

Running again with the same key copies the stored notebook instead of
executing it (after checking it against the sha256 stored beside it: a damaged
copy is executed again, with a one-line warning), so a changed parameter re-executes exactly the notebooks that
declare it, and a new results table or code change re-executes every notebook
that reads them.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from crsbench_lib import __version__
from crsbench_lib.atomic import atomic_path, atomic_write_bytes, atomic_write_text
from crsbench_lib.errors import NotebookError
from crsbench_lib.hashing import file_sha256
from crsbench_lib.paths import PACKAGE_DIR, cache_dir, notebooks_dir

PARAMETERS_TAG = "parameters"
NOTEBOOK_SUFFIX = ".ipynb"
KERNEL_NAME = "python3"
CELL_TIMEOUT_S = 1800
# Parameters whose value is a file: the cache key hashes the file's content, not its name.
FILE_PARAMETERS: tuple[str, ...] = ("results_path", "standard_path")
CACHE_FOLDER = "notebooks"
CHECKSUM_SUFFIX = ".sha256"


@dataclass(frozen=True)
class ExecutionResult:
    """One notebook's execution.

    Attributes
    ----------
    name : str
        Notebook name (file stem).
    output : pathlib.Path
        The executed notebook.
    cached : bool
        Whether it was copied from the execution cache instead of executed.
    key : str
        The cache key.
    seconds : float
        Wall time of this call.
    """

    name: str
    output: Path
    cached: bool
    key: str
    seconds: float


def available_notebooks(directory: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """Every notebook of the book, by name (file stem), sorted by name."""
    root = Path(directory) if directory is not None else notebooks_dir()
    if not root.is_dir():
        return {}
    return {p.stem: p for p in sorted(root.glob(f"*{NOTEBOOK_SUFFIX}")) if not p.name.startswith(".")}


def notebook_path(name: str, directory: str | os.PathLike[str] | None = None) -> Path:
    """The source of notebook ``name``.

    Raises
    ------
    NotebookError
        If there is no such notebook (the message lists the valid names).
    """
    known = available_notebooks(directory)
    if name not in known:
        valid = ", ".join(known) if known else "none found"
        raise NotebookError(f"unknown notebook {name!r}; valid notebooks: {valid}")
    return known[name]


def _parameters_cell(nb: nbformat.NotebookNode, path: Path) -> nbformat.NotebookNode:
    cells = [c for c in nb.cells if c.cell_type == "code" and PARAMETERS_TAG in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise NotebookError(f"{path}: expected one code cell tagged {PARAMETERS_TAG!r}, found {len(cells)}")
    return cells[0]


def notebook_parameters(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The parameters a notebook declares and their default values.

    Every top-level assignment of the ``parameters`` cell is a parameter; its
    default is the literal value (``ast.literal_eval``).

    Raises
    ------
    NotebookError
        If the notebook has no (or several) parameters cells, or a default is
        not a literal.
    """
    source = Path(path)
    nb = nbformat.read(source, as_version=4)
    cell = _parameters_cell(nb, source)
    tree = ast.parse(cell.source)
    params: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not isinstance(target, ast.Name):
                    raise NotebookError(f"{source}: parameters cell assigns to a non-name ({ast.unparse(target)})")
                try:
                    params[target.id] = ast.literal_eval(node.value)
                except ValueError as exc:
                    raise NotebookError(
                        f"{source}: parameter {target.id!r} must default to a literal, got {ast.unparse(node.value)}"
                    ) from exc
    return params


def check_parameters(name: str, parameters: Mapping[str, Any], directory: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The notebook's effective parameters: its defaults overlaid with ``parameters``.

    Raises
    ------
    NotebookError
        On an unknown notebook, or a parameter the notebook does not declare
        (the message lists the valid parameters).
    """
    declared = notebook_parameters(notebook_path(name, directory))
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise NotebookError(
            f"notebook {name!r} has no parameter {unknown[0]!r}; valid parameters: {', '.join(declared)}"
        )
    return {**declared, **dict(parameters)}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def code_version() -> str:
    """A hash of every Python source of the library (relative path and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def notebook_source_hash(path: str | os.PathLike[str]) -> str:
    """A hash of a notebook's cell types and sources (outputs and metadata ignored)."""
    nb = nbformat.read(Path(path), as_version=4)
    payload = json.dumps([[c.cell_type, c.source] for c in nb.cells], ensure_ascii=False)
    return _sha256(payload.encode())


def _file_fingerprint(value: Any) -> str | None:
    from crsbench_lib.report.context import resolve_input_path

    if value is None:
        return None
    path = resolve_input_path(str(value))
    return file_sha256(path) if path.is_file() else f"missing:{path}"


def cache_key(
    notebook: str | os.PathLike[str],
    parameters: Mapping[str, Any],
    code: str | None = None,
) -> str:
    """The execution-cache key of a notebook run (see the module docstring).

    Parameters
    ----------
    notebook : path
        The source notebook.
    parameters : mapping
        The effective parameters (:func:`check_parameters`).
    code : str, optional
        The code version (default :func:`code_version`; pass it when keying many
        notebooks at once).
    """
    files = {name: _file_fingerprint(parameters.get(name)) for name in FILE_PARAMETERS if name in parameters}
    if "results_path" in parameters and parameters["results_path"] is None:
        # The chapter then reads the default run of its profile: key on that table's content.
        from crsbench_lib.report.context import default_results_path

        files["results_path"] = _file_fingerprint(default_results_path(str(parameters.get("profile", "default"))))
    if "standard_path" in parameters and parameters["standard_path"] is None:
        # The chapter then reads the shipped default standard (or the template): key on whichever exists.
        from crsbench_lib.paths import standards_dir

        shipped = sorted(standards_dir().glob("*.yaml")) if standards_dir().is_dir() else []
        # ... or the standard its run froze from itself, beside the table (report.context.run_standard).
        from crsbench_lib.report.context import default_results_path, resolve_input_path
        from crsbench_lib.results.io import own_standard_beside

        table = parameters.get("results_path")
        table_path = (resolve_input_path(table) if table is not None
                      else default_results_path(str(parameters.get("profile", "default"))))
        beside = own_standard_beside(table_path)
        files["standard_path"] = _sha256(b"".join(file_sha256(p).encode() for p in [*shipped, *([beside] if beside else [])]))
    from crsbench_lib.report.text import text_fingerprint

    payload = {
        "notebook": notebook_source_hash(notebook),
        # The chapter's words (book/text/<chapter>.md, or $CRSBENCH_TEXT_DIR's): an edited sentence re-renders it.
        "text": text_fingerprint(Path(notebook).stem),
        "parameters": parameters,
        "files": files,
        "package_version": __version__,
        "code_version": code if code is not None else code_version(),
    }
    return _sha256(json.dumps(payload, sort_keys=True, default=str).encode())


def notebook_cache_dir() -> Path:
    """Where executed notebooks are kept, by cache key."""
    folder = cache_dir() / CACHE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def error_outputs(path: str | os.PathLike[str]) -> list[str]:
    """One line per error output of an executed notebook (``ename: evalue``)."""
    nb = nbformat.read(Path(path), as_version=4)
    return [
        f"cell {i}: {out.get('ename', 'Error')}: {out.get('evalue', '')}"
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]


def execute_notebook(
    name: str,
    parameters: Mapping[str, Any] | None = None,
    output: str | os.PathLike[str] | None = None,
    *,
    directory: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    code: str | None = None,
    kernel_name: str = KERNEL_NAME,
    cache: str | os.PathLike[str] | None = None,
) -> ExecutionResult:
    """Execute one notebook with papermill (or reuse its cached execution).

    Parameters
    ----------
    name : str
        Notebook name (file stem in ``notebooks/``).
    parameters : mapping, optional
        Values for declared parameters.
    output : path, optional
        Where to write the executed notebook (default
        ``_build/notebooks/<name>.ipynb`` under the project root).
    directory : path, optional
        Folder of the source notebooks (default ``notebooks/``).
    use_cache : bool
        Reuse an execution with the same key.
    code : str, optional
        Precomputed :func:`code_version`.
    kernel_name : str
        Jupyter kernel.
    cache : path, optional
        Folder of the execution cache (default :func:`notebook_cache_dir`).

    Returns
    -------
    ExecutionResult

    Raises
    ------
    NotebookError
        On an unknown notebook or parameter, or when a cell raises (the
        executed notebook is still written to ``output`` for inspection).
    """
    import papermill

    start = time.perf_counter()
    source = notebook_path(name, directory)
    effective = check_parameters(name, parameters or {}, directory)
    key = cache_key(source, effective, code=code)
    destination = Path(output) if output is not None else default_build_dir() / "notebooks" / f"{name}{NOTEBOOK_SUFFIX}"
    destination.parent.mkdir(parents=True, exist_ok=True)
    store = Path(cache) if cache is not None else notebook_cache_dir()
    cached_copy = store / f"{name}-{key[:24]}{NOTEBOOK_SUFFIX}"
    if use_cache and cached_copy.is_file():
        verified = read_cached(cached_copy)
        if verified is not None:
            with atomic_path(destination) as tmp:
                tmp.write_bytes(verified)
            return ExecutionResult(name, destination, True, key, time.perf_counter() - start)
    with atomic_path(destination) as tmp:
        try:
            papermill.execute_notebook(
                str(source),
                str(tmp),
                parameters=dict(parameters or {}),
                kernel_name=kernel_name,
                cwd=str(source.parent),
                progress_bar=False,
                log_output=False,
                execution_timeout=CELL_TIMEOUT_S,
                extra_arguments=list(KERNEL_ARGUMENTS),
            )
        except papermill.PapermillExecutionError as exc:
            # Keep the failed execution where the user looks for it.
            shutil.copyfile(tmp, destination)
            raise NotebookError(
                f"notebook {name!r} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue} (executed copy: {destination})"
            ) from exc
    errors = error_outputs(destination)
    if errors:
        raise NotebookError(f"notebook {name!r} has error outputs: {errors[0]} (executed copy: {destination})")
    hide_injected_parameters(destination)
    strip_machine_paths(destination, source)
    store_cached(destination, cached_copy)
    return ExecutionResult(name, destination, False, key, time.perf_counter() - start)


def checksum_path(cached_copy: Path) -> Path:
    """The checksum file beside a cached notebook (``sha256sum`` format)."""
    return cached_copy.with_name(cached_copy.name + CHECKSUM_SUFFIX)


def store_cached(executed: Path, cached_copy: Path) -> None:
    """Keep an executed notebook in the cache, with the sha256 of its bytes beside it."""
    data = executed.read_bytes()
    atomic_write_bytes(cached_copy, data)
    atomic_write_text(checksum_path(cached_copy), f"{_sha256(data)}  {cached_copy.name}\n")


def read_cached(cached_copy: Path) -> bytes | None:
    """The bytes of a cached notebook that passes its checks, else None.

    A copy whose checksum file is missing (a writer stopped between the two
    files, or an older version wrote it) is silently not used; one that is
    unreadable or fails its checksum is not used either, and a one-line
    warning names it. Either way the notebook is executed again.
    """
    checksum_file = checksum_path(cached_copy)
    if not checksum_file.is_file():
        return None
    try:
        data = cached_copy.read_bytes()
        recorded = checksum_file.read_text(encoding="ascii").split()
        problem = None if recorded and recorded[0] == _sha256(data) else "sha256 does not match its checksum file"
    except (OSError, ValueError) as exc:  # ValueError: a checksum file that is not ASCII
        problem = f"unreadable ({type(exc).__name__})"
    if problem is None:
        return data
    print(f"crsbench: warning: cached notebook {cached_copy} is damaged ({problem}); executing it again",
          file=sys.stderr)
    return None


#: Arguments of every kernel the book starts. The kernel application's own log
#: (not the cells' output or errors, which reach the notebook and papermill) is
#: kept to critical messages: otherwise each of the book's notebooks prints a
#: warning that its local kernel talks over TCP without encryption and, at
#: shutdown, sometimes "KeyboardInterrupt caught in kernel", which read like faults.
KERNEL_ARGUMENTS: tuple[str, ...] = ("--log-level=CRITICAL",)
INJECTED_TAG = "injected-parameters"  # papermill's tag on the cell it adds
HIDDEN_TAG = "remove-cell"  # Jupyter Book leaves a cell with this tag off the page


def hide_injected_parameters(path: str | os.PathLike[str]) -> None:
    """Tag papermill's injected-parameters cell ``remove-cell``: the page shows the provenance block instead.

    The cell stays in the notebook (a reader who downloads it sees which values
    ran); only the rendered page leaves it out.
    """
    target = Path(path)
    nb = nbformat.read(target, as_version=4)
    changed = False
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if INJECTED_TAG in tags and HIDDEN_TAG not in tags:
            cell.metadata["tags"] = [*tags, HIDDEN_TAG]
            changed = True
    if changed:
        with atomic_path(target) as tmp:
            nbformat.write(nb, tmp)


def strip_machine_paths(path: str | os.PathLike[str], source: str | os.PathLike[str]) -> None:
    """Replace papermill's record of where it read and wrote the notebook by the source's name.

    The book publishes every executed notebook for download; papermill records
    the absolute paths of the build machine (``input_path``, ``output_path``),
    which say nothing to a reader and expose the machine. The source is kept
    as ``notebooks/<name>.ipynb``, the path a reader's checkout has.
    """
    target = Path(path)
    nb = nbformat.read(target, as_version=4)
    record = nb.metadata.get("papermill")
    if not record:
        return
    relative = f"{Path(source).parent.name}/{Path(source).name}"
    if record.get("input_path") == relative and record.get("output_path") == relative:
        return
    record["input_path"] = record["output_path"] = relative
    with atomic_path(target) as tmp:
        nbformat.write(nb, tmp)


def execute_all(
    common: Mapping[str, Any],
    output_dir: str | os.PathLike[str],
    names: Sequence[str] | None = None,
    *,
    directory: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    progress: bool = False,
    cache: str | os.PathLike[str] | None = None,
) -> list[ExecutionResult]:
    """Execute several notebooks, each with the entries of ``common`` it declares.

    Parameters
    ----------
    common : mapping
        Parameters shared by the book (results_path, profile, standard_path,
        simulated, ...); a notebook receives only those its parameters cell
        declares, so a parameter it does not read cannot invalidate its cache.
    output_dir : path
        Folder for the executed notebooks (``<name>.ipynb``).
    names : sequence of str, optional
        Which notebooks (default: all).
    progress : bool
        Print one line per notebook.
    cache : path, optional
        Folder of the execution cache.
    """
    known = available_notebooks(directory)
    chosen = list(names) if names is not None else list(known)
    for name in chosen:
        notebook_path(name, directory)
    code = code_version()
    results: list[ExecutionResult] = []
    for name in chosen:
        declared = notebook_parameters(known[name])
        mine = {k: v for k, v in common.items() if k in declared}
        result = execute_notebook(
            name, mine, Path(output_dir) / f"{name}{NOTEBOOK_SUFFIX}", directory=directory, use_cache=use_cache, code=code,
            cache=cache,
        )
        if progress:
            state = "cached" if result.cached else "executed"
            print(f"  {name:<18} {state:<9} {result.seconds:6.1f} s", flush=True)
        results.append(result)
    return results


def default_build_dir() -> Path:
    """``_build`` at the project root."""
    from crsbench_lib.paths import project_root

    return project_root() / "_build"


HTML_SUFFIX = ".html"
RERUNS_DIR = "crsbench-reruns"  # under the working directory: a rerun never lands in the book's build


def export_html(notebook: str | os.PathLike[str], output: str | os.PathLike[str] | None = None) -> Path:
    """A standalone HTML page of an executed notebook (nbconvert), laid out like the book's page.

    Cells tagged ``remove-cell`` are left out and the inputs of cells tagged
    ``remove-input`` or ``hide-input`` hidden, as on the book's page; images are
    embedded, so the page is one file that any browser opens.

    Parameters
    ----------
    notebook : path
        An executed notebook.
    output : path, optional
        The page (default: beside the notebook, suffix ``.html``).

    Returns
    -------
    pathlib.Path
        The page written.
    """
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    from crsbench_lib.report.standalone import standalone_notebook

    source = Path(notebook)
    target = Path(output) if output is not None else source.with_suffix(HTML_SUFFIX)
    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_cell_tags = {HIDDEN_TAG}
    config.TagRemovePreprocessor.remove_input_tags = {"remove-input", "hide-input"}
    try:
        exporter = HTMLExporter(config=config)
        exporter.register_preprocessor("nbconvert.preprocessors.TagRemovePreprocessor", enabled=True)
        body, _ = exporter.from_notebook_node(standalone_notebook(nbformat.read(source, as_version=4)))
    except ValueError as exc:  # nbconvert's way of saying its templates are not installed
        raise NotebookError(f"{source}: could not render the HTML page (nbconvert: {exc}); the notebook is written") from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        Path(tmp).write_text(body, encoding="utf-8")
    return target


def rerun_destination(name: str, out: str | os.PathLike[str] | None, overwrite_book: bool = False) -> Path:
    """Where ``crsbench notebook`` writes an executed notebook.

    Parameters
    ----------
    name : str
        Notebook name.
    out : path, optional
        A folder (the notebook is ``<out>/<name>.ipynb``) or a ``.ipynb`` file;
        default ``crsbench-reruns/<name>/`` under the working directory.
    overwrite_book : bool
        Allow writing the book build's own executed copy.

    Raises
    ------
    NotebookError
        If the destination is the book build's executed copy and
        ``overwrite_book`` is false.
    """
    if out is None:
        target = Path.cwd() / RERUNS_DIR / name / f"{name}{NOTEBOOK_SUFFIX}"
    else:
        given = Path(out)
        target = given if given.suffix == NOTEBOOK_SUFFIX else given / f"{name}{NOTEBOOK_SUFFIX}"
    book_copy = default_build_dir() / "notebooks" / f"{name}{NOTEBOOK_SUFFIX}"
    if target.resolve() == book_copy.resolve() and not overwrite_book:
        raise NotebookError(f"{target} is the book build's executed copy of {name!r}; choose another --out, "
                            "or pass --overwrite-book to replace it")
    return target
