import hashlib
import zipfile
from pathlib import Path

import pytest

from tracerl.util import wheels
from tracerl.util.wheels import WheelData, WheelUnavailableError, wheel_data


def _fake_wheel(into: Path) -> Path:
    path = into / "demo_pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("demo_pkg/__init__.py", "")
        archive.writestr("demo_pkg/data/a.json", '{"a": 1}')
        archive.writestr("demo_pkg/data/sub/b.txt", "b")
        archive.writestr("demo_pkg/other.txt", "not wanted")
    return path


@pytest.fixture
def offline_wheel(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls = []

    def download(source, into):
        calls.append(source)
        return _fake_wheel(into)

    monkeypatch.setattr(wheels, "_download", download)
    return calls


def test_a_folder_member_is_unpacked_whole_and_only_once(offline_wheel):
    source = WheelData("demo-pkg", "1.0", "demo_pkg/data")
    path = wheel_data(source, prefer_installed=False)
    assert sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()) == [
        "a.json", "sub/b.txt"]
    assert not (path.parent / "other.txt").exists()
    assert wheel_data(source, prefer_installed=False) == path
    assert len(offline_wheel) == 1
    # nothing temporary is left beside the unpacked tree
    assert sorted(p.name for p in path.parents[1].iterdir()) == ["demo_pkg"]


def test_a_single_file_member(offline_wheel):
    path = wheel_data(WheelData("demo-pkg", "1.0", "demo_pkg/data/a.json"),
                      prefer_installed=False)
    assert path.read_text() == '{"a": 1}'


def test_a_missing_member_is_a_clear_error_and_leaves_nothing(offline_wheel):
    with pytest.raises(WheelUnavailableError, match="holds no 'demo_pkg/nothing'"):
        wheel_data(WheelData("demo-pkg", "1.0", "demo_pkg/nothing"), prefer_installed=False)
    root = wheels.cache_dir() / "wheels" / "demo-pkg-1.0"
    assert list(root.iterdir()) == []


def test_an_installed_package_is_preferred(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "demo_installed" / "data").mkdir(parents=True)
    (tmp_path / "demo_installed" / "__init__.py").write_text("raise ImportError('never imported')")
    found = wheel_data(WheelData("demo-installed", "9", "demo_installed/data"))
    assert found == tmp_path / "demo_installed" / "data"


@pytest.fixture
def chunk_wheels(tmp_path, monkeypatch):
    """Two offline wheels, `demo-part1` and `demo-part2`, each holding half of a file."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    downloads: list[Path] = []

    def download(source, into):
        into.mkdir(parents=True, exist_ok=True)
        package = source.distribution.replace("-", "_")
        path = into / f"{package}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(f"{package}/data/f.part", source.distribution[-1] * 3)
        downloads.append(path)
        return path

    monkeypatch.setattr(wheels, "_download", download)
    parts = tuple(WheelData(f"demo-part{i}", "1.0", f"demo_part{i}/data/f.part") for i in (1, 2))
    return parts, downloads


def test_chunks_are_joined_in_order_once_and_the_wheels_not_kept(chunk_wheels):
    parts, downloads = chunk_wheels
    digest = hashlib.sha256(b"111222").hexdigest()
    path = wheels.joined_wheel_data(parts, "f.bin", digest, prefer_installed=False)
    assert path.read_bytes() == b"111222"
    assert wheels.joined_wheel_data(parts, "f.bin", digest, prefer_installed=False) == path
    assert len(downloads) == 2 and not any(w.exists() for w in downloads)
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.bin"]


def test_a_joined_file_of_another_digest_is_refused_and_not_kept(chunk_wheels):
    parts, _ = chunk_wheels
    with pytest.raises(WheelUnavailableError, match="demo-part1, demo-part2 has SHA-256"):
        wheels.joined_wheel_data(parts, "f.bin", "0" * 64, prefer_installed=False)
    assert list((wheels.cache_dir() / "wheels" / "joined").iterdir()) == []


def test_a_part_missing_from_its_wheel_is_named(chunk_wheels):
    parts, _ = chunk_wheels
    wrong = (parts[0], WheelData("demo-part2", "1.0", "demo_part2/data/other"))
    with pytest.raises(WheelUnavailableError, match="holds no 'demo_part2/data/other'"):
        wheels.joined_wheel_data(wrong, "f.bin", prefer_installed=False)
