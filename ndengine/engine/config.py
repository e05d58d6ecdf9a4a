"""Settings from the environment. Every ``NDENGINE_*`` variable of the package is read through
the helpers here (the engine is the lowest layer, so every layer may use them): a bad value
raises a ValueError that names the variable, its value and what it accepts, where the variable
is read, never a failed op or a silently ignored setting later. An unset or blank variable
takes its default.

Read when an engine is created (engine/__init__.py, core.py):
    NDENGINE_ENGINE_TYPE            one of engine.KINDS (default ThreadedEnginePerDevice)
    NDENGINE_CPU_WORKER_NTHREADS    workers per CPU pool: an integer >= 1 (default: core count)
    NDENGINE_GPU_WORKER_NTHREADS    workers per GPU compute pool: an integer >= 1 (default 2)
    NDENGINE_MAX_PENDING            back-pressure bound on pending work, in ops (a window of
                                    ops pushed as one counts its members, each by its size):
                                    an integer >= 1 (10000)
    NDENGINE_BULK_SIZE              tiny ops gathered into one push: an integer >= 1 (64)
Read at import:
    NDENGINE_PURE_PYTHON            boolean: run the pure-Python core even where the compiled
                                    one is built (ndengine/engine/compiled.py; default off)
    NDENGINE_FULL_STACKS            boolean: errors note the whole stack of the push, not just
                                    its line (errors.py; default off)
    NDENGINE_FAKE_GPUS              fake GPUs: an integer >= 0 (devices.py; 0)
    NDENGINE_JIT_AFTER              calls before an element-wise loop is compiled: an integer
                                    >= 0 (ops/runtime/deferred_loops.py; 16)
    NDENGINE_FUSION                 boolean: automatic fusion (core/lazy.py; on)
    NDENGINE_FUSION_MAX_OPS         ops per fused window: an integer >= 1 (64)
    NDENGINE_FUSION_MIN_ELEMENTS    smallest CPU array fused: an integer >= 0 (262144)
    NDENGINE_FUSION_MIN_NUMPY_ELEMENTS  the same for an op NumPy's own loop computes (float
                                    exp, log, sin, ...): an integer >= 0 (262144)
    NDENGINE_FUSION_MIN_MEDIUM_ELEMENTS  from this many elements an op joins an open window,
                                    and opens one where its windows come out long: an
                                    integer >= 0 (65536)
    NDENGINE_FUSION_INLINE_ELEMENTS under this many elements a CPU op runs in the pushing
                                    thread: an integer >= 0 (262144)
    NDENGINE_INLINE_MAX_BYTES       largest array kept in NumPy's memory, outside the pool: an
                                    integer >= 0 (core/chunk.py; 65536)
    NDENGINE_RUN_AT_ONCE            boolean: an op on small arrays nothing pending touches runs
                                    at its call (core/at_once.py; on)
    NDENGINE_POOL_LIMIT_MB          pooled bytes per device, in MiB: a number >= 0
                                    (core/storage.py; an eighth of memory, at most 2 GiB)
    NDENGINE_FALLBACK_WARNINGS      boolean: a NumPy function ndengine lacks, run on NumPy copies,
                                    warns once (ndarray/interop.py; on)
Read when used:
    NDENGINE_CACHE_DIR              where generated kernels are cached (ops/fusion/codegen.py)
    NDENGINE_KV_SCHEDULER, NDENGINE_KV_RANK, NDENGINE_KV_NUM_WORKERS, NDENGINE_KV_NAME,
    NDENGINE_KV_TIMEOUT             the dask KVStore (kv/dask_store.py)

Booleans take the usual spellings, in any case: 1/0, true/false, yes/no, on/off. Fusion, running
at once and the bulk size can also be changed at run time (``ndengine.settings``, ``engine.bulk``; settings.py).

Worker counts above MAX_WORKERS (4 per core, at least 64) are lowered to it with a
RuntimeWarning: every pool starts that many threads, and thousands of threads only contend for
the GIL while costing memory and start-up time.
"""
import math
import os
import warnings

__all__ = ["env_text", "env_int", "env_float", "env_bool", "env_choice", "worker_count",
           "MAX_WORKERS", "TRUE_WORDS", "FALSE_WORDS"]

MAX_WORKERS = max(64, 4 * (os.cpu_count() or 1))
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def env_text(name, default=None, environ=None):
    """The variable's text, stripped; ``default`` when it is unset or blank."""
    text = (os.environ if environ is None else environ).get(name, "").strip()
    return text if text else default


def _bad(name, accepted, text):
    return ValueError(f"environment variable {name} must be {accepted}, got {text!r}")


def _bounded(what, minimum):
    return what if minimum is None else f"{what} >= {minimum}"


def env_int(name, default=None, minimum=None, what=None, environ=None):
    """An integer variable of at least ``minimum``; ``what`` describes it in the error (default
    "an integer >= minimum")."""
    return _env_number(name, int, "an integer", default, minimum, what, environ)


def env_float(name, default=None, minimum=None, what=None, environ=None):
    """A finite number of at least ``minimum`` (nan and inf are refused)."""
    return _env_number(name, float, "a number", default, minimum, what, environ)


def _env_number(name, parse, kind, default, minimum, what, environ):
    """``parse(text)`` of the variable, finite and at least ``minimum``, else ``default``
    when unset; ``kind`` names what it must be in the error."""
    text = env_text(name, environ=environ)
    if text is None:
        return default
    accepted = what or _bounded(kind, minimum)
    try:
        number = parse(text)
    except ValueError:
        raise _bad(name, accepted, text) from None
    if not math.isfinite(number) or (minimum is not None and number < minimum):
        raise _bad(name, accepted, text)
    return number


def env_bool(name, default, environ=None):
    """A boolean variable: one of TRUE_WORDS or FALSE_WORDS, in any case."""
    text = env_text(name, environ=environ)
    if text is None:
        return default
    word = text.lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise _bad(name, "one of 1/0, true/false, yes/no, on/off (any case)", text)


def env_choice(name, choices, default, environ=None):
    """One of ``choices`` (exact spelling)."""
    text = env_text(name, environ=environ)
    if text is None:
        return default
    if text not in choices:
        raise _bad(name, f"one of {sorted(choices)}", text)
    return text


def worker_count(value, what):
    """A worker count (``what`` names its source in messages): at least 1, at most
    MAX_WORKERS (a larger one is lowered with a warning)."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{what} must be an integer, got {value!r}") from None
    if value < 1:
        raise ValueError(f"{what} must be at least 1, got {value}")
    if value > MAX_WORKERS:
        warnings.warn(f"{what}={value} is more threads than can help; using {MAX_WORKERS} "
                      f"(4 per core, at least 64)", RuntimeWarning, stacklevel=4)
        value = MAX_WORKERS
    return value
