"""The element-wise loops' Numba disk cache across processes (``elementwise/loops``).

The loops around a scalar of either scalar module are made by one factory per arity, so
their cache index is ``loops.py``'s: a second process loads them all (nothing compiles),
and a change of the modules they inline (``INLINED_SOURCE``) compiles them afresh."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np

from ndengine.ops.elementwise import loops, scalars, ufunc_scalars
from ndengine.ops.runtime import fp_flags

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SUBPROCESS = textwrap.dedent("""
    import json, sys
    import numpy as np
    from ndengine.ops.elementwise import loops, scalars, ufunc_scalars
    if sys.argv[1:] == ["edited"]:
        loops.INLINED_SOURCE += 1  # as if a module the loops inline had changed
    x = np.linspace(-3.0, 3.0, 101)
    y = np.full_like(x, 0.7)
    counts = {}
    for name, scalar, expected in (("add", scalars.add, np.add(x, y)),
                                   ("fmod", ufunc_scalars.fmod, np.fmod(x, y))):
        kernels = loops.binary_kernels(scalar)
        for loop in (kernels.serial, kernels.parallel):
            out = np.empty_like(x)
            loop(x, y, out)
            assert (out.view(np.int64) == expected.view(np.int64)).all(), name
            counts[f"{name}.{loop.py_func.__name__}"] = (
                sum(loop.stats.cache_hits.values()), sum(loop.stats.cache_misses.values()))
    print(json.dumps(counts))
""")


def _run(env, *args):
    result = subprocess.run([sys.executable, "-c", SUBPROCESS, *args], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_loops_of_both_scalar_modules(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    first, second, edited = _run(env), _run(env), _run(env, "edited")
    assert len(first) == 4
    assert all(counts == [0, 1] for counts in first.values())    # compiled (and saved)
    assert all(counts == [1, 0] for counts in second.values())   # loaded, nothing compiled
    assert all(counts == [0, 1] for counts in edited.values())   # an inlined module changed
    # one index per loop shape, in loops.py's name, holding both modules' loops
    indexes = sorted(p.name for p in tmp_path.rglob("*.nbi"))
    assert indexes and all(name.startswith("loops.binary_kernels") for name in indexes)


def test_every_loop_is_keyed_by_the_source_it_inlines():
    assert loops.INLINED_SOURCE == int(
        loops.source_digest(scalars, ufunc_scalars, fp_flags)[:15], 16)
    for factory, scalar in ((loops.unary_kernels, scalars.negative),
                            (loops.binary_kernels, ufunc_scalars.hypot),
                            (loops.ternary_kernels, scalars.clip)):
        for loop in factory(scalar):
            if loop is not None:
                cells = [cell.cell_contents for cell in loop.py_func.__closure__]
                assert loops.INLINED_SOURCE in cells, loop.py_func.__qualname__


def test_the_loops_give_numpys_bits_for_both_modules():
    x = np.linspace(-5.0, 5.0, 1001, dtype=np.float32)
    for scalar, ufunc in ((scalars.sign, np.sign), (ufunc_scalars.trunc, np.trunc)):
        kernels = loops.unary_kernels(scalar)
        for loop in (kernels.serial, kernels.parallel):
            out = np.empty_like(x)
            loop(x, out)
            np.testing.assert_array_equal(out.view(np.int32), ufunc(x).view(np.int32))
