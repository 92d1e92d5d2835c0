"""The version report: package version, default reference standard, git commit."""

import shutil
import subprocess

import pytest

from crsbench_lib import __version__
from crsbench_lib.report.version import VersionInfo, git_commit, version_info

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_text_lists_the_three_facts():
    info = VersionInfo("1.2.3", "crs-v9", "sha256:ab", "", "0123abc")
    assert info.text().splitlines() == ["crsbench 1.2.3", "default reference standard: crs-v9 (sha256:ab)",
                                        "git commit: 0123abc"]
    assert version_info().package_version == __version__


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
