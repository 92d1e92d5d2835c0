import os
import shutil
import stat

import pytest

from crsbench_lib.atomic import atomic_path, atomic_write_text
from crsbench_lib.errors import CRSBenchError


def test_written_file_has_the_umask_mode(tmp_path):
    target = tmp_path / "out.txt"
    atomic_write_text(target, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_failure_inside_leaves_previous_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_unwritable_destination_is_a_user_error(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("")
    with pytest.raises(CRSBenchError, match="afile/x.csv: cannot write here"):
        atomic_write_text(blocker / "x.csv", "x")


def test_cli_reports_unwritable_output_in_one_line(tmp_path, capsys):
    from crsbench_lib.cli import main
    from crsbench_lib.results import write_results
    from crsbench_lib.results.synthetic import synthetic_results

    results = write_results(synthetic_results(n_encoders=3, seeds=(0,)), tmp_path / "r.parquet")
    (tmp_path / "afile").write_text("")
    code = main(["freeze", str(results), "--version", "v", "--out", str(tmp_path / "afile" / "s.yaml")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot write here" in err and len(err.strip().splitlines()) == 1


def test_a_full_disk_inside_the_write_is_one_line_naming_the_folder(tmp_path):
    import errno

    from crsbench_lib.errors import OutputError

    target = tmp_path / "out.parquet"
    target.write_text("old")
    with pytest.raises(OutputError) as info:
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise OSError(errno.ENOSPC, "No space left on device")
    message = str(info.value)
    assert message.startswith(f"{tmp_path}: no space left on device (") and " free)" in message
    assert "\n" not in message and target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]


def _has_dev_full() -> bool:
    # Only the character device: opening a plain file of that name for writing would replace nothing real.
    try:
        return stat.S_ISCHR(os.stat("/dev/full").st_mode)
    except OSError:
        return False


@pytest.mark.skipif(not _has_dev_full(), reason="needs the /dev/full device")
def test_a_real_enospc_from_the_kernel_is_converted(tmp_path):
    from crsbench_lib.errors import OutputError

    with pytest.raises(OutputError, match="no space left on device"):
        with atomic_path(tmp_path / "x.bin"):
            with open("/dev/full", "ab") as full:  # every write to /dev/full fails with ENOSPC
                full.write(b"x")
    assert list(tmp_path.iterdir()) == []


def test_other_errors_inside_the_write_keep_their_type(tmp_path):
    with pytest.raises(FileNotFoundError):
        with atomic_path(tmp_path / "x.txt"):
            open(tmp_path / "no-such-input.txt").read()


def test_reserve_reports_the_space_needed(tmp_path, monkeypatch):
    import errno

    from crsbench_lib.atomic import reserve
    from crsbench_lib.errors import OutputError

    def unsupported(fd, offset, length):
        raise OSError(errno.EOPNOTSUPP, "not supported")

    monkeypatch.setattr(os, "posix_fallocate", unsupported)
    with open(tmp_path / "big", "wb") as handle:
        reserve(handle.fileno(), 10, tmp_path / "big")  # no preallocation here, but the space is free
        monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(2**21, 2**20, 2**20))
        with pytest.raises(OutputError, match=r"no space left on device \(1\.0 GiB needed, 1\.0 MiB free\)"):
            reserve(handle.fileno(), 2**30, tmp_path / "big")


def test_atomic_write_bytes_reserves_first(tmp_path, monkeypatch):
    import errno

    from crsbench_lib.atomic import atomic_write_bytes
    from crsbench_lib.errors import OutputError

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    with pytest.raises(OutputError, match=r"no space left on device \(3\.0 KiB needed, "):
        atomic_write_bytes(tmp_path / "x.bin", b"x" * 3072)
    assert list(tmp_path.iterdir()) == []
