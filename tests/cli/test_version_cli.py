"""`crsbench --version`: package, default reference standard and git commit, with or without git."""

import os
import shutil
import subprocess
import sys

import pytest

from crsbench_lib import __version__
from crsbench_lib.cli import main
from crsbench_lib.paths import standards_dir
from crsbench_lib.standard import default_standard_path, load_standard


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
