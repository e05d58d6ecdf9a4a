"""Interpreter exit and fork (item 15), each in a fresh interpreter so pytest stays clean."""
import pytest

from engine_helpers import KINDS, THREADED, run_script

EXIT_TIMEOUT = 30


@pytest.mark.parametrize("kind", KINDS)
def test_exit_without_waiting_finishes_all_writes(tmp_path, kind):
    out = tmp_path / "log.txt"
    code = f"""
        import threading, time
        import ndengine.engine as E
        eng = E.create({kind!r}, num_cpu_workers=2)
        path = {str(out)!r}
        v = eng.new_variable()

        def write(line):
            with open(path, "a") as f:
                f.write(line + "\\n")

        for i in range(15):
            eng.push_sync(lambda rc, i=i: (time.sleep(0.02), write(str(i))), E.cpu(),
                          mutable_vars=[v])
        # a dependent op on a pool that does not exist yet (created during the exit drain)
        eng.push_sync(lambda rc: write("cpu1"), E.cpu(1), mutable_vars=[v])
        eng.push_sync(lambda rc: write("prio"), E.cpu(0), mutable_vars=[v],
                      prop=E.FnProperty.CPU_PRIORITIZED)

        # an async op completed later by a daemon thread
        def later(rc, on_complete):
            def finish():
                time.sleep(0.2)
                write("async")
                on_complete()
            threading.Thread(target=finish, daemon=True).start()
        eng.push_async(later, E.cpu(), mutable_vars=[v])
        eng.push_sync(lambda rc: write("after-async"), E.cpu(), const_vars=[v])
        print("exiting")
    """
    proc = run_script(code, timeout=EXIT_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout == "exiting\n"
    lines = out.read_text().split()
    assert lines == [str(i) for i in range(15)] + ["cpu1", "prio", "async", "after-async"]


def test_exit_without_waiting_process_wide_engine(tmp_path):
    out = tmp_path / "log.txt"
    code = f"""
        import time
        import ndengine.engine as E
        eng = E.get()
        v = eng.new_variable()
        for i in range(10):
            def op(rc, i=i):
                time.sleep(0.02)
                with open({str(out)!r}, "a") as f:
                    f.write(f"{{i}}\\n")
            eng.push_sync(op, E.cpu(), mutable_vars=[v])
    """
    proc = run_script(code, timeout=EXIT_TIMEOUT)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert out.read_text().split() == [str(i) for i in range(10)]


@pytest.mark.parametrize("kind", THREADED)
def test_exit_with_unwaited_failure_reports_it_once(tmp_path, kind):
    out = tmp_path / "log.txt"
    code = f"""
        import time
        import ndengine.engine as E
        eng = E.create({kind!r}, num_cpu_workers=2)
        v, w = eng.new_variable(), eng.new_variable()

        def bad(rc):
            time.sleep(0.05)
            raise ValueError("nobody waits for me")

        eng.push_sync(bad, E.cpu(), mutable_vars=[v])
        eng.push_sync(lambda rc: print("must be skipped"), E.cpu(), const_vars=[v],
                      mutable_vars=[w])
        eng.push_async(lambda rc, done: done(KeyError("async")), E.cpu(), mutable_vars=[w])
        eng.push_sync(lambda rc: open({str(out)!r}, "w").write("ran"), E.cpu(),
                      mutable_vars=[eng.new_variable()])
        print("done")
    """
    proc = run_script(code, timeout=EXIT_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    # the ops that read the failed var fail with the same error: one line for all of them
    assert proc.stderr.splitlines() == [
        "ndengine: an op failed and no wait raised its error: ValueError: nobody waits for me"]
    assert proc.stdout == "done\n"
    assert out.read_text() == "ran"


UNWAITED_SCRIPT = """
    import numpy as np
    import ndengine as nd

    @nd.register_op("fails_always", kind="unary")
    def fails_always(inputs, outputs, req):
        raise ValueError("nobody waits for me\\nsecond line")

    big = nd.array(np.arange(300000.))
    small = nd.array(np.arange(3.))
    try:
        y = nd.fails_always(big)  # line 12
        z = y * 2 + 1  # fails with the same error
    except ValueError:  # the NaiveEngine raises at the push
        pass
    try:
        s = nd.fails_always(small)  # line 17
    except ValueError:
        pass
{more}
    print("done")
"""


def run_unwaited(kind, more=""):
    more = "\n".join("    " + line for line in more.strip().splitlines())
    proc = run_script(UNWAITED_SCRIPT.format(more=more), timeout=EXIT_TIMEOUT,
                      env={"NDENGINE_ENGINE_TYPE": kind})
    assert proc.returncode == 0, proc.stderr  # the exit status stays the script's own
    assert proc.stdout == "done\n", proc.stdout + proc.stderr
    return proc.stderr.splitlines()


def unwaited_line(line):
    return ("ndengine: an op failed and no wait raised its error (raised by fails_always, "
            f"pushed at <string>:{line}): ValueError: nobody waits for me")


@pytest.mark.parametrize("kind", KINDS)
def test_exit_reports_each_failed_op_nobody_waited_for(kind):
    lines = run_unwaited(kind)
    if kind == "NaiveEngine":  # raised at the push, and caught there: nothing left to report
        assert lines == []
    else:
        assert lines == [unwaited_line(12), unwaited_line(17)]


@pytest.mark.parametrize("kind", KINDS)
def test_exit_does_not_report_a_failure_raised_at_a_wait(kind):
    lines = run_unwaited(kind, """
for name in ("z", "s"):
    if name not in globals():  # the NaiveEngine raised at the push: never assigned
        continue
    try:
        globals()[name].asnumpy()
        raise AssertionError("the failed op's output was read")
    except ValueError:
        pass
""")
    assert lines == []


@pytest.mark.parametrize("kind", KINDS)
def test_exit_after_waitall_raised_the_failure_reports_nothing(kind):
    lines = run_unwaited(kind, """
try:
    nd.waitall()
except ValueError:
    pass
try:
    nd.waitall()  # the second failure, if the first waitall raised only the first
except ValueError:
    pass
""")
    assert lines == []


@pytest.mark.parametrize("kind", KINDS)
def test_exit_of_a_clean_script_prints_nothing(kind):
    code = """
        import numpy as np
        import ndengine as nd
        y = nd.array(np.arange(300000.)) * 2 + 1
        s = nd.array(np.arange(3.)) - 1
        print("done")
    """
    proc = run_script(code, timeout=EXIT_TIMEOUT, env={"NDENGINE_ENGINE_TYPE": kind})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "done\n", "")


def test_exit_with_unraised_naive_failure_caught_by_user_is_quiet():
    code = """
        import ndengine.engine as E
        eng = E.create("NaiveEngine")
        v = eng.new_variable()
        try:
            eng.push_sync(lambda rc: 1 / 0, E.cpu(), mutable_vars=[v])
        except ZeroDivisionError:
            pass
        print("done")
    """
    proc = run_script(code, timeout=EXIT_TIMEOUT)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "done\n", "")


FORK_SCRIPT = """
    import os, signal, sys, time, traceback
    import ndengine.engine as E

    eng = E.get() if {use_global} else E.create({kind!r}, num_cpu_workers=2)
    if {use_global}:
        assert type(eng).__name__ == {kind!r}
    v = eng.new_variable()
    box = [0]

    def incr(rc):
        time.sleep(0.001)
        box[0] += 1

    for i in range(30):
        eng.push_sync(incr, E.cpu(), mutable_vars=[v])
    pid = os.fork()
    if pid == 0:
        signal.alarm(20)  # a hang in the child becomes a failure, not a stuck test
        ok = False
        try:
            assert box[0] == 30, box  # work pushed before fork finished before it
            assert v.is_idle()
            w = eng.new_variable()
            for i in range(50):
                eng.push_sync(incr, E.cpu(), const_vars=[w], mutable_vars=[v])
            eng.push_sync(lambda rc: box.__setitem__(0, box[0] * 2), E.cpu(1),
                          mutable_vars=[v])
            eng.wait_for_var(v)
            assert box[0] == 160, box
            # the process-wide engine works in the child too (it is eng when use_global)
            g = E.get()
            assert (g is eng) == {use_global}
            u = g.new_variable()
            seen = []
            for i in range(20):
                g.push_sync(lambda rc, i=i: seen.append(i), E.cpu(), mutable_vars=[u])
            g.wait_for_var(u)
            assert seen == list(range(20)), seen
            g.wait_for_all()
            eng.wait_for_all()
            assert v.is_idle() and w.is_idle() and u.is_idle()
            ok = True
        except BaseException:
            traceback.print_exc()
        os._exit(0 if ok else 3)
    for i in range(10):
        eng.push_sync(incr, E.cpu(), mutable_vars=[v])
    eng.wait_for_var(v)
    _, status = os.waitpid(pid, 0)
    print(os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1, box[0])
"""


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("use_global", [False, True])
def test_fork_child_and_parent_keep_working(kind, use_global):
    env = {"NDENGINE_ENGINE_TYPE": kind, "NDENGINE_CPU_WORKER_NTHREADS": "2"}
    proc = run_script(FORK_SCRIPT.format(kind=kind, use_global=use_global), timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "40"], proc.stderr
    assert proc.stderr == ""


FORK_ERROR_SCRIPT = """
    import os, signal, traceback
    import ndengine.engine as E
    eng = E.create({kind!r}, num_cpu_workers=2)
    err = ValueError("before fork")
    vs = [eng.new_variable() for _ in range(5)]

    def bad(rc):
        raise err
    try:
        eng.push_sync(bad, E.cpu(), mutable_vars=[vs[0]])
    except ValueError:
        pass
    try:
        eng.wait_for_var(vs[0])
    except ValueError:
        pass
    pid = os.fork()
    if pid == 0:
        signal.alarm(20)
        ok = False
        try:
{child}
            ok = True
        except BaseException:
            traceback.print_exc()
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    print(os.WEXITSTATUS(status))
"""


def run_fork_child(kind, child):
    child = "\n".join("            " + line for line in child.strip().splitlines())
    proc = run_script(FORK_ERROR_SCRIPT.format(kind=kind, child=child), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0"], proc.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_fork_child_keeps_var_errors_and_still_skips_ops_on_them(kind):
    run_fork_child(kind, """
try:
    eng.wait_for_var(vs[0])
except ValueError as exc:
    assert exc is err
else:
    raise AssertionError("error lost in the child")
ran = []
w = eng.new_variable()
try:
    eng.push_sync(lambda rc: ran.append(1), E.cpu(), const_vars=[vs[0]], mutable_vars=[w])
except ValueError:
    pass  # NaiveEngine raises the upstream error at the push
try:
    eng.wait_for_var(w)
except ValueError as exc:
    assert exc is err
else:
    raise AssertionError("op on a failed var was not skipped in the child")
assert ran == [], "op on a failed var ran in the child"
""")


@pytest.mark.parametrize("kind", KINDS)
def test_fork_child_var_ids_stay_unique(kind):
    run_fork_child(kind, """
new_ids = [eng.new_variable().id for _ in range(5)]
assert not set(new_ids) & {v.id for v in vs}, ("var ids reused", new_ids)
""")


FORK_STORM_SCRIPT = """
    import os, signal, sys, threading, time, traceback
    import ndengine.engine as E
    eng = E.create({kind!r}, num_cpu_workers=2)
    mine, theirs = eng.new_variable(), eng.new_variable()
    count = [0]
    stop = threading.Event()

    def other_thread():  # pushes all the time, tiny ops and slower ones, never waits
        i = 0
        while not stop.is_set():
            i += 1
            prop = E.FnProperty.ASYNC if i % 3 else E.FnProperty.NORMAL
            eng.push_sync(lambda rc: time.sleep(0.0005 if i % 3 == 0 else 0), E.cpu(),
                          (), (theirs,), prop, overwrites=(theirs,))
            if i % 200 == 0:
                time.sleep(0.001)

    def incr(rc):
        count[0] += 1

    pusher = threading.Thread(target=other_thread, daemon=True)
    pusher.start()
    statuses = []
    for n in range({forks}):
        for _ in range(3):
            eng.push_sync(incr, E.cpu(), (), (mine,), E.FnProperty.NORMAL)
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)
            status = 3
            try:
                # pushed by this thread before the fork: finished, in the child too
                assert mine.is_idle() and mine.error is None and count[0] == 3 * (n + 1), \
                    (mine, count[0], n)
                # written by the other thread: idle, and sound or failed with a clear error
                assert theirs.is_idle() and not theirs.queue
                if theirs.error is not None:
                    assert isinstance(theirs.error, E.ForkedWhilePending), theirs.error
                    assert "parent process when it forked" in str(theirs.error)
                    # an op that reads it is skipped with that error, on every path (raised
                    # at the push on the NaiveEngine, at the wait on the others)
                    ran, out = [], eng.new_variable()
                    try:
                        eng.push_sync(lambda rc: ran.append(1), E.cpu(), (theirs,), (out,))
                        eng.wait_for_var(out)
                        raise AssertionError("an op on a var lost at the fork ran")
                    except E.ForkedWhilePending:
                        assert ran == []
                # the child's engine works: the failed var is usable once overwritten
                eng.push_sync(lambda rc: None, E.cpu(), (), (theirs,), overwrites=(theirs,))
                for _ in range(5):
                    eng.push_sync(incr, E.cpu(), (theirs,), (mine,), E.FnProperty.ASYNC)
                eng.push_sync(incr, E.cpu(1), (), (mine,))
                eng.wait_for_all()
                eng.wait_for_var(theirs)
                assert count[0] == 3 * (n + 1) + 6, count[0]
                status = 0
            except BaseException:
                traceback.print_exc()
            os._exit(status)
        deadline = time.monotonic() + 30
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                sys.exit(f"fork {{n}}: the child hung")
            time.sleep(0.002)
        statuses.append(os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1)
    stop.set()
    pusher.join(10)
    eng.wait_for_all()
    assert count[0] == 3 * {forks}, count[0]
    print(" ".join(map(str, statuses)))
"""


def run_fork_storm(kind, forks, timeout):
    proc = run_script(FORK_STORM_SCRIPT.format(kind=kind, forks=forks), timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == ["0"] * forks, proc.stdout + proc.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_fork_storm_while_another_thread_pushes(kind):
    # os.fork() while another thread keeps pushing: the fork never waits for that thread,
    # the child gets a working engine (what the forking thread pushed is finished; what the
    # other thread was writing is idle, sound or ForkedWhilePending), the parent never hangs.
    run_fork_storm(kind, 50, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_fork_storm_long(kind):
    run_fork_storm(kind, 200, timeout=400)
