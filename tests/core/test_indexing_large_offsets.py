"""Elements at large offsets: read and written at any offset, under the three engines, on the
CPU and the (fake) GPU; each body runs with xp=numpy and xp=ndengine. Computing an element's
view once read the element through a stand-in that owns one element: past 16 MiB that
crashed the interpreter. The bodies run in a fresh interpreter, with a timeout, so that a
regression fails the test instead of killing the run."""
import pytest

from engine_helpers import run_script
from ndarray_helpers import ENGINE_KINDS

LARGE = 2 ** 24  # float32 elements (64 MiB): reading the old geometry's element crashed here
HUGE = 2 ** 31  # int8 elements (2 GiB): offsets past a 32-bit int


# ---------------------------------------------------------------- large offsets, in a subprocess
def large_offset_reads(xp):
    x = xp.arange(LARGE, dtype="float32")  # every value exact in float32
    m = xp.arange(4096 * 4096, dtype="float32").reshape(4096, 4096)
    return [x[-1], x[LARGE // 2], x[-LARGE], x[LARGE - 1], m[-1, -1], m[4095, -4096],
            m[-1][-2]]


def large_offset_writes(xp):
    x = xp.zeros(LARGE, dtype="float32")
    x[-1] = 5.0
    x[LARGE // 2] += 3.0
    m = xp.zeros((4096, 4096), dtype="float32")
    m[-1, -1] = 7.0
    m[4095, 0] = m[-1, -1] * 2
    return [x[-1], x[LARGE // 2], x[-2], x[LARGE - 8:], m[-1, -1], m[4095, 0], m[-1, :4]]


def huge_offsets(xp):
    x = xp.ones(HUGE, dtype="int8")
    x[-2] = 5
    return [x[-1], x[-2], x[HUGE - 3]]


_SCRIPT = """
import faulthandler
import sys
faulthandler.dump_traceback_later({dump_after}, exit=True)  # a hang fails with its stacks
sys.path[:0] = ["tests/support", "tests/core"]
import ndengine as nd
from ndengine.engine import devices
from ndarray_helpers import run_xp
import test_indexing_large_offsets as bodies
if {gpu}:
    if devices.device_count() == 0:
        devices.use_fake_gpus(1)  # NumPy standing in for CuPy: the same view geometry
    nd.engine.set_default_context(nd.gpu(0))
    assert nd.zeros(1).context == nd.gpu(0)
for name in {bodies}:
    run_xp(getattr(bodies, name))
nd.waitall()
print("checked", {bodies})
"""


def run_bodies_in_subprocess(kind, bodies, gpu=False, timeout=180):
    script = _SCRIPT.format(gpu=gpu, bodies=bodies, dump_after=timeout - 15)
    done = run_script(script, timeout=timeout, env={"NDENGINE_ENGINE_TYPE": kind})
    assert done.returncode == 0, (
        f"{kind}: exit status {done.returncode} (a negative status is a signal)\n"
        f"{done.stdout}\n{done.stderr}")
    assert f"checked {bodies}" in done.stdout


@pytest.mark.parametrize("gpu", [False, True], ids=["cpu", "gpu"])
@pytest.mark.parametrize("kind", ENGINE_KINDS)
def test_elements_at_large_offsets(kind, gpu):
    run_bodies_in_subprocess(kind, ["large_offset_reads", "large_offset_writes"], gpu)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ENGINE_KINDS)
def test_elements_past_two_gib(kind):
    run_bodies_in_subprocess(kind, ["huge_offsets"], timeout=600)
