"""`crsbench --version`: package, default reference standard and git commit, with or without git."""

import os
import shutil
import subprocess
import sys

import pytest

from crsbench_lib import __version__
from crsbench_lib.cli import main
from crsbench_lib.paths import standards_dir
from crsbench_lib.report.version import git_commit, version_info
from crsbench_lib.scoring import default_standard_path, load_standard

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_version_names_package_standard_and_commit(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    out = capsys.readouterr().out.splitlines()
    standard = load_standard(default_standard_path())
    assert out[0] == f"crsbench {__version__}"
    assert out[1] == f"default reference standard: {standard.version} ({standard.content_hash})"
    assert out[2].startswith("git commit: ")


def test_version_outside_a_git_checkout_has_no_traceback(tmp_path):
    # A project root without .git (an unpacked release): the standard is read, the commit is not.
    shutil.copytree(standards_dir(), tmp_path / "standards")
    env = {**os.environ, "CRSBENCH_HOME": str(tmp_path), "GIT_CEILING_DIRECTORIES": str(tmp_path.parent)}
    done = subprocess.run([sys.executable, "-m", "crsbench_lib", "--version"], env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.splitlines()[2] == "git commit: not a git checkout"


def test_a_missing_standard_is_reported_not_raised(tmp_path, monkeypatch):
    monkeypatch.setenv("CRSBENCH_HOME", str(tmp_path))
    info = version_info(tmp_path)
    assert info.standard_version == "" and "no default reference standard" in info.standard_note
    assert "default reference standard: unavailable (no default reference standard" in info.text()


@needs_git
def test_git_commit_reads_head_and_marks_local_changes(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    assert git_commit(tmp_path) == ""  # a folder outside any checkout
    git("init", "-q")
    assert git_commit(tmp_path) == ""  # a repository without commits
    (tmp_path / "f.txt").write_text("a")
    git("add", "f.txt")
    git("-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "one")
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert git_commit(tmp_path) == head
    (tmp_path / "f.txt").write_text("b")
    assert git_commit(tmp_path) == head + "-dirty"
