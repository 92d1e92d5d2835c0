"""`crsbench publish` / `make publish`: the built site lands on a gh-pages branch of a remote."""

import json
import shutil
import subprocess

import pytest

from crsbench_lib.cli import main
from crsbench_lib.errors import PublishError
from crsbench_lib.paths import project_root
from crsbench_lib.report.banner import Provenance
from crsbench_lib.report.book import PROVENANCE_FILE
from crsbench_lib.report.publish import commit_message, publish_site, read_provenance

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

PROV = Provenance("quick", "crs-test-v1", "sha256:" + "a" * 64, ("sha256:" + "b" * 64,), "9.9.9", ("9.9.9",), True,
                  "sha256:" + "c" * 64, "2026-11-30")


def _git(*args, cwd=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _site(folder, body="first"):
    (folder / "_static").mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(f"<html><body>{body}</body></html>")
    (folder / "_static" / "style.css").write_text("body {}")
    (folder / PROVENANCE_FILE).write_text(json.dumps(PROV.to_json()))
    return folder


@pytest.fixture
def repos(tmp_path):
    bare = tmp_path / "remote.git"
    _git("init", "--bare", "-q", str(bare))
    work = tmp_path / "work"
    _git("init", "-q", str(work))
    _git("config", "user.name", "Test", cwd=work)
    _git("config", "user.email", "test@example.invalid", cwd=work)
    return work, bare


def test_publish_puts_the_site_on_the_gh_pages_branch_of_a_bare_remote(repos, tmp_path):
    work, bare = repos
    site = _site(tmp_path / "html")
    commit = publish_site(site, remote=str(bare), repository=work)
    files = _git("--git-dir", str(bare), "ls-tree", "-r", "--name-only", "gh-pages").split()
    assert {"index.html", ".nojekyll", "_static/style.css", PROVENANCE_FILE} <= set(files)
    assert _git("--git-dir", str(bare), "rev-parse", "gh-pages").strip() == commit
    assert "first" in _git("--git-dir", str(bare), "show", "gh-pages:index.html")
    message = _git("--git-dir", str(bare), "log", "-1", "--format=%s", "gh-pages")
    assert "crsbench 9.9.9" in message and "crs-test-v1" in message and "c" * 12 in message

    # A second publication replaces the site (the branch holds only the latest one).
    _site(site, body="second")
    (site / "_static" / "style.css").unlink()
    publish_site(site, remote=str(bare), repository=work)
    assert "second" in _git("--git-dir", str(bare), "show", "gh-pages:index.html")
    assert "_static/style.css" not in _git("--git-dir", str(bare), "ls-tree", "-r", "--name-only", "gh-pages")


def test_publish_command_pushes_to_a_named_remote(repos, tmp_path, capsys):
    work, bare = repos
    _git("remote", "add", "pages", str(bare), cwd=work)
    site = _site(tmp_path / "html")
    assert main(["publish", "--html", str(site), "--remote", "pages", "--repository", str(work)]) == 0
    assert "index.html" in _git("--git-dir", str(bare), "ls-tree", "--name-only", "gh-pages")
    assert "branch 'gh-pages'" in capsys.readouterr().out


def test_no_push_writes_the_local_branch_only(repos, tmp_path):
    work, bare = repos
    publish_site(_site(tmp_path / "html"), remote=str(bare), repository=work, push=False, branch="site")
    assert "index.html" in _git("ls-tree", "--name-only", "site", cwd=work)
    assert _git("--git-dir", str(bare), "branch", "--list").strip() == ""


def test_an_unbuilt_site_is_a_one_line_error(repos, tmp_path, capsys):
    work, bare = repos
    (tmp_path / "empty").mkdir()
    assert main(["publish", "--html", str(tmp_path / "empty"), "--remote", str(bare), "--repository", str(work)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no built book" in err and "Traceback" not in err


def test_a_folder_outside_git_and_a_failed_push_are_errors(repos, tmp_path):
    work, _ = repos
    site = _site(tmp_path / "html")
    (tmp_path / "plain").mkdir()
    with pytest.raises(PublishError, match="not a git repository"):
        publish_site(site, remote="origin", repository=tmp_path / "plain")
    with pytest.raises(PublishError, match="failed"):
        publish_site(site, remote=str(tmp_path / "no-such-remote"), repository=work)


def test_provenance_file_is_read_back_or_reported(tmp_path):
    site = _site(tmp_path / "html")
    assert read_provenance(site) == PROV
    (site / PROVENANCE_FILE).write_text("{not json")
    with pytest.raises(PublishError, match="not a readable provenance file"):
        read_provenance(site)
    assert commit_message(site) == "Publish the CRS-Bench book"
    (site / PROVENANCE_FILE).write_text(json.dumps({"profile": "x"}))
    with pytest.raises(PublishError, match="standard_version"):
        read_provenance(site)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_publish_runs_the_publish_command_with_the_given_remote():
    # Dry run (-n): shows the recipe without executing it (nor reinstalling the venv).
    shown = subprocess.run(["make", "-n", "publish", "REMOTE=/srv/book.git"], cwd=project_root(),
                           capture_output=True, text=True, check=True).stdout
    assert 'crsbench publish --remote "/srv/book.git"' in shown
    default = subprocess.run(["make", "-n", "publish"], cwd=project_root(), capture_output=True, text=True,
                             check=True).stdout
    assert 'crsbench publish --remote "origin"' in default
