"""Ops on small arrays run at once (core/at_once.py, segment.py's ``run_now``): when nothing
pushed or gathered touches their arrays, in the one thread that uses arrays, with no run hook
installed; gathered otherwise. Either way the values, errors and FP reports are those of the
op pushed.

Which thread owns running at once is process state that only grows (a second thread ends it
for good), so the checks run in a fresh interpreter per engine, the second thread's last: the
NaiveEngine (bulk size 1) pushes every op and never runs one at once.
"""
import functools
import json

import pytest

from engine_helpers import run_script

pytestmark = pytest.mark.cpu_only

_PROLOGUE = """
import json, os, threading, warnings
import numpy as np
import ndengine as nd
from ndengine import ops

@ops.register("test_at_once_fail", num_inputs=1, kind="unary", replace=True,
              infer=lambda x: [(x.shape, x.dtype)])
def _fail(inputs, outputs, req):
    raise ZeroDivisionError("test_at_once_fail raised on purpose")

def at_once(x):  # ran at once: no var, no window, nothing pushed
    window = x._chunk.window
    return x._chunk._var is None and (window is None or not window.open)

def gathered(x):
    window = x._chunk.window
    return window is not None and window.open

out = {"gathers": nd.engine.get().bulk_size > 1}
"""

_CHECKS = {
    "chain": """
x = nd.zeros(16, dtype=np.float32)
for _ in range(5):
    x = x + 1
x *= 2
out["at_once"] = at_once(x)
out["values"] = x.asnumpy().tolist() == [10.0] * 16
""",
    "pending_input": """
big = nd.ones(1 << 15)       # a pool buffer (256 KiB), bound at the push
pooled = big * 2             # nothing pending on big: it runs at once too
out["pooled_at_once"] = pooled._chunk.window is None or not pooled._chunk.window.open
release = threading.Event()
if out["gathers"]:  # (the NaiveEngine would run it here and now: nothing would release it)
    nd.engine.get().push_sync(lambda ctx: release.wait(30), nd.cpu(0), (),
                              (big._chunk.var,), name="held")  # on a worker, until released
u = nd.ones(16)
w = big[:16] + u             # gathered: big has a pending write
v = u * 2                    # u is touched by the open window: gathered after it
out["gathered"] = gathered(w) and gathered(v)
u += 1                       # an in-place write behind the window's read of u
release.set()
out["values"] = (w.asnumpy().tolist() == [2.0] * 16 and v.asnumpy().tolist() == [2.0] * 16
                 and u.asnumpy().tolist() == [2.0] * 16
                 and pooled.asnumpy().tolist() == [2.0] * (1 << 15))
""",
    "run_hook": """
seen = []
engine = nd.engine.get()
engine.set_run_hook(lambda name, *rest: seen.append(name))
x = nd.ones(8) + 1
out["gathered"] = gathered(x)
nd.waitall()
engine.set_run_hook(None)
out["seen"] = any("add" in name or "bulk" in name for name in seen)
""",
    "second_thread": """
x = nd.ones(8) + 1
first = at_once(x)
worker = threading.Thread(target=lambda: (nd.ones(4) * 3).wait_to_read())
worker.start()
worker.join()
y = x + 1
out["at_once"] = first
out["gathered_after"] = gathered(y)
out["values"] = y.asnumpy().tolist() == [3.0] * 8
pid = os.fork()
if pid == 0:  # the child starts over: its only thread runs ops at once again
    z = nd.ones(8) + 1
    os._exit(0 if at_once(z) or not out["gathers"] else 3)
out["child"] = os.waitpid(pid, 0)[1]
""",
    "kernel_error": """
x = nd.ones(4) + 1
y = nd.core.invoke(ops.get("test_at_once_fail"), [x])[0]  # the line the error names
out["at_once_output"] = y._chunk.window is None or not y._chunk.window.open
try:
    y.asnumpy()
    out["raised"] = None
except ZeroDivisionError as exc:
    notes = "\\n".join(getattr(exc, "__notes__", []))
    out["raised"] = "test_at_once_fail" in notes and "<string>" in notes
try:
    nd.waitall()
    out["waitall"] = "clean"
except ZeroDivisionError:
    out["waitall"] = "raised"
out["next_op"] = (x * 2).asnumpy().tolist() == [4.0] * 4
""",
    "fp_errors": """
x = nd.zeros(4) + 1
with np.errstate(divide="raise"):
    y = x / 0
out["at_once_output"] = y._chunk.window is None or not y._chunk.window.open
try:
    y.asnumpy()
    out["raised"] = False
except FloatingPointError:
    out["raised"] = True
nd.waitall()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    z = x / 0
    z.asnumpy()
out["warned"] = any("divide by zero" in str(w.message) for w in caught)
""",
    "reads": """
x = nd.arange(6.0) * 2
out["values"] = (x.asnumpy().tolist() == [0, 2, 4, 6, 8, 10] and float(x[2]) == 4.0
                 and x[5].item() == 10.0 and bool(x[1] > 1) and int(x[3]) == 6
                 and x.reshape(2, 3).tolist() == [[0, 2, 4], [6, 8, 10]])
x.wait_to_read()
out["no_var"] = x._chunk._var is None  # read without the engine: it made no var

def held_write(z):  # a write held on a worker for a while: a read must wait for it
    if out["gathers"]:  # (the NaiveEngine would run it here and now)
        release = threading.Event()

        def held(run_ctx):
            release.wait(30)
            z._data()[...] = 5.0
        nd.engine.get().push_sync(held, nd.cpu(0), (), (z._chunk.var,), name="held")
        threading.Timer(0.2, release.set).start()
    return z
expected = 5.0 if out["gathers"] else 1.0
out["waited"] = held_write(nd.ones(8)).asnumpy().tolist() == [expected] * 8
out["element_waited"] = float(held_write(nd.ones(8))[3]) == expected
out["item_waited"] = held_write(nd.ones(1)).item() == expected
""",
}


_ENGINES = ["NaiveEngine", "ThreadedEnginePooled", "ThreadedEnginePerDevice"]
# checks the NaiveEngine does not run (it raises at the push)
_THREADED = ("kernel_error", "fp_errors")
# the checks' order in one interpreter: the second thread's last (it ends running at once)
_ORDER = ("chain", "pending_input", "run_hook", "kernel_error", "fp_errors", "reads",
          "second_thread")


@functools.lru_cache(maxsize=None)
def _results(engine):
    """Every check's ``out`` under ``engine``, from one fresh interpreter."""
    body = "".join(f"out = {{'gathers': gathers}}\n{_CHECKS[check]}\nresults[{check!r}] = out\n"
                   for check in _ORDER if engine != "NaiveEngine" or check not in _THREADED)
    code = (_PROLOGUE + "gathers = out['gathers']\nresults = {}\n" + body
            + "print('RESULT', json.dumps(results))\n")
    result = run_script(code, timeout=180, env={"NDENGINE_ENGINE_TYPE": engine})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    line = [line for line in result.stdout.splitlines() if line.startswith("RESULT")][-1]
    return json.loads(line[len("RESULT "):])


def _run(check, engine):
    return _results(engine)[check]




@pytest.mark.parametrize("engine", _ENGINES)
def test_a_chain_on_small_arrays_runs_at_once_with_numpys_values(engine):
    out = _run("chain", engine)
    assert out["values"]
    assert out["at_once"] == out["gathers"]  # the NaiveEngine pushes every op


@pytest.mark.parametrize("engine", _ENGINES)
def test_an_op_on_arrays_something_pending_touches_is_gathered_in_order(engine):
    out = _run("pending_input", engine)
    assert out["values"]
    assert out["gathered"] == out["gathers"]
    assert out["pooled_at_once"]  # (the NaiveEngine ran it at its push)


@pytest.mark.parametrize("engine", _ENGINES)
def test_a_run_hook_sees_every_op(engine):
    out = _run("run_hook", engine)
    assert out["seen"]
    assert out["gathered"] == out["gathers"]


@pytest.mark.parametrize("engine", _ENGINES)
def test_a_second_thread_ends_running_at_once_and_a_forked_child_starts_over(engine):
    out = _run("second_thread", engine)
    assert out["values"] and out["child"] == 0
    assert out["at_once"] == out["gathers"]
    assert out["gathered_after"] == out["gathers"]


@pytest.mark.parametrize("engine", ["ThreadedEnginePooled", "ThreadedEnginePerDevice"])
def test_an_op_that_raises_at_once_fails_its_output_with_its_name_and_line(engine):
    out = _run("kernel_error", engine)
    assert out["at_once_output"]
    assert out["raised"] is True  # at the read, with the op's name and the user's line
    assert out["waitall"] == "clean"  # seen at the read, as a gathered op's error is
    assert out["next_op"]


@pytest.mark.parametrize("engine", ["ThreadedEnginePooled", "ThreadedEnginePerDevice"])
def test_fp_errors_of_an_op_run_at_once_surface_at_the_read(engine):
    # (the NaiveEngine raises at the push: tests/engine/test_engine_errors.py)
    out = _run("fp_errors", engine)
    assert out["raised"] and out["warned"]


@pytest.mark.parametrize("engine", _ENGINES)
def test_values_of_idle_arrays_are_read_without_the_engine_and_pending_ones_waited_for(engine):
    out = _run("reads", engine)
    assert out["values"] and out["waited"] and out["element_waited"] and out["item_waited"]
    assert out["no_var"] == out["gathers"]  # (the NaiveEngine pushed every op: vars exist)
