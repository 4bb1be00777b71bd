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
