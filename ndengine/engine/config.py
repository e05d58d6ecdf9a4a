"""Engine settings from the environment, checked when an engine is created: a bad value raises
a ValueError that names the variable, never a failed op later.

NDENGINE_ENGINE_TYPE           one of engine.KINDS (default ThreadedEnginePerDevice)
NDENGINE_CPU_WORKER_NTHREADS   workers per CPU pool: an integer >= 1 (default: the core count)
NDENGINE_GPU_WORKER_NTHREADS   workers per GPU compute pool: an integer >= 1 (default 2)
NDENGINE_MAX_PENDING           back-pressure bound on pending work, in ops (a window of
                               ops pushed as one counts its members, each by its size):
                               an integer >= 1 (10000)
NDENGINE_FULL_STACKS           1: errors note the whole stack of the push, not just its line

Worker counts above MAX_WORKERS (4 per core, at least 64) are lowered to it with a
RuntimeWarning: every pool starts that many threads, and thousands of threads only contend for
the GIL while costing memory and start-up time.
"""
import os
import warnings

__all__ = ["env_int", "worker_count", "MAX_WORKERS"]

MAX_WORKERS = max(64, 4 * (os.cpu_count() or 1))


def env_int(name, default=None, minimum=None):
    """An integer environment variable; a clear error names it when it is not one."""
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {value!r}") \
            from None
    if minimum is not None and number < minimum:
        raise ValueError(f"environment variable {name} must be at least {minimum}, got {value!r}")
    return number


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
