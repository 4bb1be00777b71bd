"""run_python: statuses, stdio, files, limits, for the pool and the module function."""

from __future__ import annotations

import pytest

from tracerl.sandbox import SandboxPool, run_python


def test_ok_run_returns_stdout_and_exit_code(pool: SandboxPool) -> None:
    res = pool.run_python("print('hello')")
    assert (res.status, res.returncode, res.stdout) == ("ok", 0, "hello\n")


def test_stdin_is_fed_to_the_program(pool: SandboxPool) -> None:
    res = pool.run_python("print(input()[::-1])", stdin="abc\n")
    assert res.stdout == "cba\n"


def test_uncaught_exception_is_error_with_traceback(pool: SandboxPool) -> None:
    res = pool.run_python("raise ValueError('boom')")
    assert res.status == "error" and res.returncode == 1 and "ValueError: boom" in res.stderr


def test_sys_exit_code_is_reported(pool: SandboxPool) -> None:
    res = pool.run_python("import sys; sys.exit(3)")
    assert (res.status, res.returncode) == ("error", 3)


def test_files_are_placed_in_the_work_dir(pool: SandboxPool) -> None:
    res = pool.run_python("print(open('data/x.txt').read())", files={"data/x.txt": "payload"})
    assert res.stdout.strip() == "payload"


def test_files_outside_the_work_dir_are_refused(pool: SandboxPool) -> None:
    with pytest.raises(ValueError, match="relative path"):
        pool.run_python("pass", files={"../escape": "x"})


@pytest.mark.slow  # waits out the run's timeout
def test_infinite_loop_times_out(pool: SandboxPool) -> None:
    res = pool.run_python("while True: pass", timeout_s=1)
    assert res.status == "timeout" and res.wall_s < 3


@pytest.mark.slow  # waits out the run's timeout
def test_sleeping_past_the_wall_clock_times_out(pool: SandboxPool) -> None:
    res = pool.run_python("import time; time.sleep(30)", timeout_s=1)
    assert res.status == "timeout"


def test_memory_bomb_hits_memory_limit(pool: SandboxPool) -> None:
    res = pool.run_python("x = bytearray(2 * 1024**3)", memory_mb=256)
    assert res.status == "memory_limit"


def test_huge_output_is_capped(pool: SandboxPool) -> None:
    res = pool.run_python("import sys\nwhile True: sys.stdout.write('x' * 65536)", timeout_s=2)
    assert res.status == "output_limit" and len(res.stdout) <= pool.limits.output_bytes


def test_every_run_is_a_fresh_process(pool: SandboxPool) -> None:
    pool.run_python("import builtins; builtins.LEAK = 1")
    res = pool.run_python("import builtins; print(hasattr(builtins, 'LEAK'))")
    assert res.stdout.strip() == "False"


def test_files_do_not_survive_between_runs(pool: SandboxPool) -> None:
    pool.run_python("open('/tmp/left-behind', 'w').write('x')")
    res = pool.run_python("import os; print(os.path.exists('/tmp/left-behind'))")
    assert res.stdout.strip() == "False"


def test_module_level_run_python_works() -> None:
    res = run_python("print(6 * 7)", timeout_s=5)
    assert res.stdout == "42\n"


def test_non_string_code_is_a_type_error(pool: SandboxPool) -> None:
    with pytest.raises(TypeError, match="code must be str"):
        pool.run_python(b"print(1)")  # type: ignore[arg-type]
