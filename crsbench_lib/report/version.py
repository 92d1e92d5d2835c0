"""What ``crsbench --version`` reports: package, default reference standard, commit.

A rendered book, a results table and a score name the package version and the
reference standard they were produced with; this module says which ones the
installed package would use now, and, for a git checkout, which commit it is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from crsbench_lib import __version__
from crsbench_lib.errors import CRSBenchError
from crsbench_lib.paths import project_root
from crsbench_lib.standard import default_standard_path, load_standard

GIT_TIMEOUT_S = 10


@dataclass(frozen=True)
class VersionInfo:
    """The versions a build of the book would be stamped with.

    Attributes
    ----------
    package_version : str
        The installed crsbench version.
    standard_version : str
        Version id of the shipped default reference standard ("" if unreadable).
    standard_hash : str
        Its content hash (``sha256:...``), "" if unreadable.
    standard_note : str
        Why the standard is missing or unreadable ("" when it was read).
    git_commit : str
        The checkout's commit, with ``-dirty`` if files differ from it; "" when
        the project is not a git checkout or git is not installed.
    """

    package_version: str
    standard_version: str
    standard_hash: str
    standard_note: str
    git_commit: str

    def text(self) -> str:
        """The lines ``crsbench --version`` prints."""
        standard = (f"{self.standard_version} ({self.standard_hash})" if self.standard_version
                    else f"unavailable ({self.standard_note})")
        return "\n".join([
            f"crsbench {self.package_version}",
            f"default reference standard: {standard}",
            f"git commit: {self.git_commit or 'not a git checkout'}",
        ])


def git_commit(root: str | os.PathLike[str] | None = None) -> str:
    """The commit checked out at ``root`` (``<sha>`` or ``<sha>-dirty``), "" if none.

    Parameters
    ----------
    root : path, optional
        The folder to ask (default: the project root).

    Returns
    -------
    str
        "" when ``root`` is not inside a git work tree, git is missing or does
        not answer: a version report never fails for want of git.

    Examples
    --------
    >>> import tempfile
    >>> git_commit(tempfile.mkdtemp())
    ''
    """
    folder = Path(root) if root is not None else project_root()
    git = shutil.which("git")
    if git is None or not folder.is_dir():
        return ""

    def ask(*args: str) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run([git, "-C", str(folder), *args], capture_output=True, text=True,
                                  timeout=GIT_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None

    head = ask("rev-parse", "--verify", "HEAD")
    if head is None or head.returncode != 0:
        return ""
    status = ask("status", "--porcelain", "--untracked-files=no")
    dirty = status is not None and status.returncode == 0 and bool(status.stdout.strip())
    return head.stdout.strip() + ("-dirty" if dirty else "")


def version_info(root: str | os.PathLike[str] | None = None) -> VersionInfo:
    """Collect :class:`VersionInfo` for this installation.

    Parameters
    ----------
    root : path, optional
        The checkout to ask git about (default: the project root).

    Returns
    -------
    VersionInfo
        A missing or invalid default standard is reported in
        ``standard_note``, not raised: ``--version`` must answer anyway.

    Examples
    --------
    >>> version_info().text().splitlines()[0].startswith("crsbench ")
    True
    """
    try:
        standard = load_standard(default_standard_path())
        std_version, std_hash, note = standard.version, standard.content_hash, ""
    except CRSBenchError as exc:
        std_version, std_hash, note = "", "", str(exc)
    return VersionInfo(__version__, std_version, std_hash, note, git_commit(root))
