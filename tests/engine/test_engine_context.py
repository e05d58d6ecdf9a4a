"""Context / RunContext / FnProperty semantics, engine construction options, and the
process-wide engine built from the environment (checked in subprocesses)."""
import pickle
import threading

import pytest

from ndengine import engine as E
from ndengine.engine import Context, FnProperty, RunContext, cpu, current_context, gpu

from engine_helpers import KINDS, THREADED, engines, run_script, run_with_timeout  # noqa: F401


# ---------------------------------------------------------------------------- Context
def test_contexts_are_interned():
    assert cpu() is cpu(0) is Context("cpu") is Context("cpu", 0)
    assert gpu(1) is Context("gpu", 1)
    assert cpu(1) is not cpu(0)
    assert gpu(0) is not cpu(0)
    assert Context(cpu(3)) is cpu(3)  # a Context passes through


def test_context_attributes_and_repr():
    assert cpu(2).device_type == "cpu" and cpu(2).device_id == 2
    assert gpu(1).device_type == "gpu" and gpu(1).device_id == 1
    assert repr(cpu(2)) == "cpu(2)"
    assert repr(gpu(0)) == "gpu(0)"


def test_context_hashing_and_equality():
    d = {cpu(0): "a", gpu(0): "b", cpu(1): "c"}
    assert d[Context("cpu", 0)] == "a"
    assert d[gpu()] == "b"
    assert d[cpu(1)] == "c"
    assert len({cpu(0), cpu(), Context("cpu", 0), gpu(0), gpu()}) == 2
    assert cpu(0) == cpu(0) and cpu(0) != cpu(1) and cpu(0) != gpu(0)


def test_context_ordering():
    items = [gpu(1), cpu(1), gpu(0), cpu(0), cpu(2)]
    assert sorted(items) == [cpu(0), cpu(1), cpu(2), gpu(0), gpu(1)]
    assert cpu(0) < cpu(1) < gpu(0) < gpu(1)
    assert gpu(0) > cpu(5)
    assert not cpu(1) < cpu(1)
    with pytest.raises(TypeError):
        cpu(0) < 3  # noqa: B015


def test_context_pickles_to_the_interned_object():
    assert pickle.loads(pickle.dumps(gpu(3))) is gpu(3)
    assert pickle.loads(pickle.dumps(cpu(0))) is cpu(0)


@pytest.mark.parametrize("device_type", ["tpu", "CPU", "", None, 0])
def test_bad_device_type_raises_value_error(device_type):
    with pytest.raises(ValueError):
        Context(device_type, 0)


@pytest.mark.parametrize("device_id", [-1, 1.5, "0", None])
def test_bad_device_id_raises_value_error(device_id):
    with pytest.raises(ValueError):
        Context("cpu", device_id)


def test_bad_device_id_rejected_even_after_an_equal_valid_context_exists():
    # cpu(1) is interned first; True == 1 and 1.0 == 1 hash alike, but are not valid ids.
    # Validation must not depend on which contexts happen to be interned already.
    cpu(1), gpu(0)
    with pytest.raises(ValueError):
        cpu(True)
    with pytest.raises(ValueError):
        cpu(1.0)
    with pytest.raises(ValueError):
        gpu(False)


@pytest.mark.cpu_only
def test_with_context_sets_current_context_per_thread():
    assert current_context() is cpu(0)
    seen_in_other = []
    inside = threading.Event()
    release = threading.Event()

    def other():
        seen_in_other.append(current_context())
        inside.set()
        release.wait(5)
        seen_in_other.append(current_context())
        with gpu(2):
            seen_in_other.append(current_context())
        seen_in_other.append(current_context())

    with cpu(1) as ctx:
        assert ctx is cpu(1)
        assert current_context() is cpu(1)
        t = threading.Thread(target=other)
        t.start()
        assert inside.wait(5)
        with gpu(0):
            assert current_context() is gpu(0)
            release.set()
            t.join(5)
        assert current_context() is cpu(1)
    assert current_context() is cpu(0)
    assert seen_in_other == [cpu(0), cpu(0), gpu(2), cpu(0)]


@pytest.mark.cpu_only
def test_with_context_restores_on_exception():
    with pytest.raises(KeyError):
        with cpu(3):
            raise KeyError
    assert current_context() is cpu(0)


def test_run_context_and_fnproperty():
    rc = RunContext(cpu(1))
    assert rc.ctx is cpu(1) and rc.stream is None
    stream = object()
    assert RunContext(gpu(0), stream).stream is stream
    assert [p.name for p in FnProperty] == ["NORMAL", "COPY_FROM_GPU", "COPY_TO_GPU",
                                           "CPU_PRIORITIZED", "ASYNC"]


# ---------------------------------------------------------------------------- create()
def test_create_kinds(engines):
    assert isinstance(engines("NaiveEngine"), E.NaiveEngine)
    assert isinstance(engines("ThreadedEnginePooled"), E.ThreadedEnginePooled)
    assert isinstance(engines("ThreadedEngine"), E.ThreadedEnginePooled)
    assert isinstance(engines("ThreadedEnginePerDevice"), E.ThreadedEnginePerDevice)


def test_create_unknown_kind():
    with pytest.raises(ValueError, match="NoSuchEngine"):
        E.create("NoSuchEngine")


@pytest.mark.parametrize("kind", THREADED)
def test_create_options(engines, kind):
    eng = engines(kind, num_cpu_workers=3, num_gpu_workers=4, num_copy_workers=2, max_pending=7)
    assert eng.num_cpu_workers == 3 and eng.num_gpu_workers == 4 and eng.num_copy_workers == 2
    assert eng._executor.max_pending == 7


@pytest.mark.parametrize("kind", THREADED)
@pytest.mark.parametrize("option", ["num_cpu_workers", "num_gpu_workers", "num_copy_workers",
                                    "max_pending"])
@pytest.mark.parametrize("value", [0, -1])
def test_create_rejects_non_positive_counts(kind, option, value):
    with pytest.raises(ValueError):
        E.create(kind, **{option: value})


@pytest.mark.parametrize("kind", KINDS)
def test_create_starts_no_threads(kind):
    before = set(threading.enumerate())
    eng = E.create(kind, num_cpu_workers=2)
    v = eng.new_variable()
    assert set(threading.enumerate()) - before == set()
    eng.notify_shutdown()
    assert v.is_idle()


@pytest.mark.parametrize("kind", KINDS)
def test_variables_have_distinct_ids(engines, kind):
    eng = engines(kind)
    ids = [eng.new_variable().id for _ in range(100)]
    assert len(set(ids)) == 100


@pytest.mark.parametrize("kind", KINDS)
def test_push_after_shutdown_raises(kind):
    eng = E.create(kind)
    v = eng.new_variable()
    eng.push_sync(lambda rc: None, cpu(), mutable_vars=[v])
    run_with_timeout(eng.notify_shutdown)
    with pytest.raises(RuntimeError):
        eng.push_sync(lambda rc: None, cpu(), mutable_vars=[v])
    run_with_timeout(eng.notify_shutdown)  # idempotent


@pytest.mark.parametrize("kind", KINDS)
def test_push_with_bad_ctx_raises_type_error(engines, kind):
    eng = engines(kind)
    v = eng.new_variable()
    with pytest.raises(TypeError):
        eng.push_sync(lambda rc: None, "cpu", mutable_vars=[v])
    assert v.is_idle()
    assert eng._executor.pending == 0


def test_set_engine_and_get_in_process():
    # get() returns the same engine every time; set_engine swaps it and returns the previous.
    code = """
        import ndengine.engine as E
        a = E.get()
        assert E.get() is a
        b = E.create("NaiveEngine")
        assert E.set_engine(b) is a
        assert E.get() is b
        print("OK", type(a).__name__)
    """
    proc = run_script(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["OK", "ThreadedEnginePerDevice"]
    assert proc.stderr == ""


# ---------------------------------------------------------------------------- get() and env
ENV_PROBE = """
    import ndengine.engine as E
    e = E.get()
    print(type(e).__name__, getattr(e, "num_cpu_workers", None),
          getattr(e, "num_gpu_workers", None), e._executor.max_pending)
"""


@pytest.mark.parametrize("env, expected", [
    ({}, ["ThreadedEnginePerDevice", None, "2", "10000"]),
    ({"NDENGINE_ENGINE_TYPE": "NaiveEngine"}, ["NaiveEngine", "1", "1", "10000"]),
    ({"NDENGINE_ENGINE_TYPE": "ThreadedEngine", "NDENGINE_CPU_WORKER_NTHREADS": "3"},
     ["ThreadedEnginePooled", "3", "2", "10000"]),
    ({"NDENGINE_ENGINE_TYPE": "ThreadedEnginePerDevice", "NDENGINE_CPU_WORKER_NTHREADS": "5",
      "NDENGINE_GPU_WORKER_NTHREADS": "4", "NDENGINE_MAX_PENDING": "77"},
     ["ThreadedEnginePerDevice", "5", "4", "77"]),
    ({"NDENGINE_CPU_WORKER_NTHREADS": ""}, ["ThreadedEnginePerDevice", None, "2", "10000"]),
])
def test_get_reads_environment(env, expected):
    proc = run_script(ENV_PROBE, env=env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split()
    if expected[1] is None:  # default cpu worker count: os.cpu_count()
        import os
        expected = [expected[0], str(os.cpu_count() or 1)] + expected[2:]
    assert out == expected
    assert proc.stderr == ""


@pytest.mark.parametrize("name", ["NDENGINE_CPU_WORKER_NTHREADS", "NDENGINE_GPU_WORKER_NTHREADS",
                                  "NDENGINE_MAX_PENDING"])
def test_get_rejects_non_integer_environment_clearly(name):
    code = """
        import ndengine.engine as E
        try:
            E.get()
        except ValueError as exc:
            print("ValueError:", exc)
    """
    proc = run_script(code, env={name: "lots"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ValueError:"), proc.stdout
    assert name in proc.stdout, f"error should name the variable: {proc.stdout!r}"


def test_get_rejects_unknown_engine_type():
    code = """
        import ndengine.engine as E
        try:
            E.get()
        except ValueError as exc:
            print("ValueError:", exc)
    """
    proc = run_script(code, env={"NDENGINE_ENGINE_TYPE": "Bogus"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ValueError:") and "Bogus" in proc.stdout


def test_get_is_thread_safe():
    code = """
        import threading
        import ndengine.engine as E
        seen = []
        barrier = threading.Barrier(8)
        def grab():
            barrier.wait(5)
            seen.append(E.get())
        ts = [threading.Thread(target=grab) for _ in range(8)]
        [t.start() for t in ts]
        [t.join(10) for t in ts]
        print(len(seen), len({id(e) for e in seen}))
    """
    proc = run_script(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["8", "1"]


ENV_ERROR_PROBE = """
    import warnings
    import ndengine.engine as E
    try:
        E.get()
        print("no error")
    except ValueError as exc:
        print("ValueError:", exc)
"""


@pytest.mark.parametrize("name, value", [
    ("NDENGINE_CPU_WORKER_NTHREADS", "abc"), ("NDENGINE_CPU_WORKER_NTHREADS", "0"),
    ("NDENGINE_CPU_WORKER_NTHREADS", "-2"), ("NDENGINE_GPU_WORKER_NTHREADS", "0"),
    ("NDENGINE_MAX_PENDING", "-3"), ("NDENGINE_MAX_PENDING", "0"),
    ("NDENGINE_MAX_PENDING", "1.5"), ("NDENGINE_ENGINE_TYPE", "Bogus"),
])
@pytest.mark.parametrize("kind", KINDS)
def test_bad_environment_fails_at_engine_creation_naming_the_variable(kind, name, value):
    env = {"NDENGINE_ENGINE_TYPE": kind, name: value}
    proc = run_script(ENV_ERROR_PROBE, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ValueError:"), proc.stdout
    assert name in proc.stdout and repr(value) in proc.stdout, proc.stdout


@pytest.mark.parametrize("kind", THREADED)
def test_absurd_worker_count_is_capped_with_a_warning(kind):
    code = f"""
        import threading, warnings
        import ndengine.engine as E
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            eng = E.get()
        assert type(eng).__name__ == {kind!r}
        assert eng.num_cpu_workers == E.MAX_WORKERS, eng.num_cpu_workers
        messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
        assert any("NDENGINE_CPU_WORKER_NTHREADS=100000" in m for m in messages), messages
        v = eng.new_variable()
        eng.push_sync(lambda rc: None, E.cpu(), (), (v,))
        eng.wait_for_var(v)
        assert threading.active_count() <= E.MAX_WORKERS + 2, threading.active_count()
        print("capped", E.MAX_WORKERS)
    """
    proc = run_script(code, env={"NDENGINE_ENGINE_TYPE": kind,
                                 "NDENGINE_CPU_WORKER_NTHREADS": "100000"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("capped")


@pytest.mark.parametrize("kind", KINDS)
def test_create_checks_worker_counts(kind):
    with pytest.raises(ValueError, match="num_cpu_workers"):
        E.create(kind, num_cpu_workers="abc")
    with pytest.warns(RuntimeWarning, match="num_cpu_workers=100000"):
        eng = E.create(kind, num_cpu_workers=100000)
    if kind != "NaiveEngine":
        assert eng.num_cpu_workers == E.MAX_WORKERS
    eng.notify_shutdown()
