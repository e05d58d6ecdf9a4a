"""The CUDA text of fused element-wise programs (ops/gpu/fusion.py): checked as text here;
compiled and run against NumPy on a real GPU (tests/core/test_gpu_arrays.py runs the windows)."""
import numpy as np
import pytest

from ndengine.ops.fusion.kernel import ProgramBuilder
from ndengine.ops.fusion.builder import Const
from ndengine.ops.fusion.program import ArraySpec, NotFusible
from ndengine.ops.gpu.fusion import cuda_source, kernel_for


def program(build, dtype=np.float32, n=1000):
    b = ProgramBuilder()
    x = b.array(ArraySpec((n,), np.dtype(dtype)))
    return build(b, x)


def test_a_chain_is_one_expression_per_node_cast_to_its_dtype():
    p = program(lambda b, x: b.build(outputs=[b.apply("exp", b.apply("add", b.apply(
        "multiply", x, 0.5), 0.1))]))
    in_params, out_params, body = cuda_source(p)
    assert in_params == "float32 in0, float64 s0, float64 s1"
    assert out_params == "float32 out0"
    assert body.splitlines() == [
        "const float v2 = (float)(((float)in0) * ((float)s0));",
        "const float v4 = (float)(((float)v2) + ((float)s1));",
        "const float v5 = (float)(exp(((float)v4)));",
        "out0 = v5;"]


def test_comparisons_bool_logic_and_nan_aware_choices():
    def build(b, x):
        m = b.apply("greater", x, 0.5)
        n = b.apply("logical_not", m)
        top = b.apply("maximum", x, 0.25)
        return b.build(outputs=[n, top])
    _, out_params, body = cuda_source(program(build))
    assert out_params == "bool out0, float32 out1"
    assert "(bool)(!((bool)v" in body
    assert "!= " in body and "? " in body  # maximum propagates NaN as NumPy's loop


def test_a_tail_reduction_writes_the_reduced_node():
    def build(b, x):
        return b.build(outputs=[], reduction=("sum", b.apply("square", x), None, False))
    _, out_params, body = cuda_source(program(build))
    assert out_params == "float32 reduced" and body.endswith("reduced = v1;")


@pytest.mark.parametrize("name, dtype", [("floor_divide", np.int32), ("mod", np.float64),
                                         ("power", np.int64)])
def test_what_cuda_cannot_compute_exactly_is_not_fused(name, dtype):
    p = program(lambda b, x: b.build(outputs=[b.apply(name, x, Const(3))]), dtype)
    with pytest.raises(NotFusible):
        cuda_source(p)


def test_extended_dtypes_are_not_fused():
    with pytest.raises(NotFusible):
        p = program(lambda b, x: b.build(outputs=[b.apply("exp", x)]), np.float16)
        cuda_source(p)


def test_a_fake_gpu_has_no_cuda_kernel():
    p = program(lambda b, x: b.build(outputs=[b.apply("exp", x)]))
    with pytest.raises(NotFusible, match="fake GPU"):
        kernel_for(p, np)


# ---------------------------------------------------------------- the text, run on the host
# The generated body is C++ that CUDA compiles per element; compiled here by the host's C++
# compiler in a loop over the elements, its values must be the unfused ops' (NumPy's): the
# expressions, casts and NaN rules are checked without a GPU. (CUDA's libm and the host's may
# differ in the last bits of transcendentals, as NumPy's SIMD loops do: compared within a
# few ulps; everything else exactly.)
import ctypes  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402

from ndengine.ops.fusion import kernel as fusion  # noqa: E402
from ndengine.ops.fusion.program import FUSIBLE_OPS  # noqa: E402
from ndengine.ops.gpu.fusion import _C_TYPES  # noqa: E402

_CTYPES = {"bool": ctypes.c_bool, "int8": ctypes.c_int8, "uint8": ctypes.c_uint8,
           "int16": ctypes.c_int16, "uint16": ctypes.c_uint16, "int32": ctypes.c_int32,
           "uint32": ctypes.c_uint32, "int64": ctypes.c_int64, "uint64": ctypes.c_uint64,
           "float32": ctypes.c_float, "float64": ctypes.c_double}
DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64]


def _params(text):
    return [tuple(part.split()) for part in text.split(", ")] if text else []


def _host_function(k, program):
    in_params, out_params, body = cuda_source(program)
    ins, outs = _params(in_params), _params(out_params)
    args, locals_ = [], []
    for dtype, name in ins:
        c = _C_TYPES[np.dtype(dtype)]
        if name.startswith("in"):
            args.append(f"const {c}* p_{name}")
            locals_.append(f"const {c} {name} = p_{name}[i];")
        else:
            args.append(f"{c} {name}")
    for dtype, name in outs:
        c = _C_TYPES[np.dtype(dtype)]
        args.append(f"{c}* p_{name}")
        locals_.append(f"{c}& {name} = p_{name}[i];")
    return (f'extern "C" void f{k}(long n, {", ".join(args)}) {{\n'
            f"  for (long i = 0; i < n; ++i) {{\n    " + "\n    ".join(locals_) + "\n    "
            + body.replace("\n", "\n    ") + "\n  }\n}\n"), ins, outs


def _cases():
    """(name, dtype, program, arrays, scalars) for every fusible op and dtype CUDA takes."""
    values = {np.dtype(d): np.array([0, 1, -1, 2, -3, 5, 7, -8, 100, -100], dtype=np.float64)
              for d in DTYPES}
    for d in (np.float32, np.float64):
        values[np.dtype(d)] = np.array([0.0, -0.0, 1.5, -2.25, np.nan, np.inf, -np.inf, 0.5,
                                        3.0, -7.5])
    cases = []
    for name, arity in sorted(FUSIBLE_OPS.items()):
        if name in ("clip_arrays", "copy") or arity == 3 and name != "where":
            continue
        for dtype in DTYPES:
            dtype = np.dtype(dtype)
            x = values[dtype].astype(dtype) if dtype.kind != "b" else values[dtype] > 0
            y = np.roll(x, 3)
            b = ProgramBuilder()
            try:
                if name == "where":
                    leaves = [b.array(ArraySpec(x.shape, np.dtype(bool))),
                              b.array(ArraySpec(x.shape, dtype)),
                              b.array(ArraySpec(x.shape, dtype))]
                    arrays = [x != y if dtype.kind != "b" else x, x, y]
                elif name == "clip":
                    leaves, arrays = [b.array(ArraySpec(x.shape, dtype))], [x]
                else:
                    leaves = [b.array(ArraySpec(x.shape, dtype)) for _ in range(arity)]
                    arrays = [x, y][:arity]
                if name == "clip":
                    node = b.apply("clip", leaves[0], a_min=dtype.type(0) if dtype.kind != "b"
                                   else False, a_max=dtype.type(5) if dtype.kind != "b" else True)
                else:
                    node = b.apply(name, *leaves)
                program = b.build(outputs=[node])
                cuda_source(program)
            except (NotFusible, TypeError, ValueError):
                continue
            cases.append((name, dtype, program, arrays))
    return cases + _chains(values)


def _chains(values):
    """Programs of several nodes with weak and strong scalars (casts between nodes)."""
    x32 = values[np.dtype(np.float32)].astype(np.float32)
    i32 = values[np.dtype(np.int32)].astype(np.int32)
    found = []
    b = ProgramBuilder()
    x = b.array(ArraySpec(x32.shape, np.dtype(np.float32)))
    y = b.apply("exp", b.apply("add", b.apply("multiply", x, 0.5), 0.1))
    found.append(("exp(x*0.5+0.1)", np.dtype(np.float32),
                  b.build(outputs=[y, b.apply("greater", y, 1.0)]), [x32]))
    b = ProgramBuilder()
    i = b.array(ArraySpec(i32.shape, np.dtype(np.int32)))
    j = b.apply("multiply", b.apply("add", i, Const(3)), np.int64(2))
    found.append(("(i+3)*int64(2)", np.dtype(np.int32),
                  b.build(outputs=[j, b.apply("true_divide", j, 4)]), [i32]))
    return found


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("no host C++ compiler")
    cases = _cases()
    source = ["#include <cmath>", "using namespace std;"]
    signatures = []
    for k, (_, _, program, _) in enumerate(cases):
        text, ins, outs = _host_function(k, program)
        source.append(text)
        signatures.append((ins, outs))
    where = tmp_path_factory.mktemp("fusion_host")
    (where / "fused.cpp").write_text("\n".join(source))
    subprocess.run(["g++", "-O1", "-shared", "-fPIC", "-o", str(where / "fused.so"),
                    str(where / "fused.cpp")], check=True, capture_output=True)
    return cases, signatures, ctypes.CDLL(str(where / "fused.so"))


def test_the_generated_expressions_compute_numpys_values(compiled):
    cases, signatures, library = compiled
    assert len(cases) > 100  # every fusible op in the dtypes it takes
    problems = []
    for k, ((name, dtype, program, arrays), (ins, outs)) in enumerate(zip(cases, signatures)):
        scalars = program.scalar_values
        with np.errstate(all="ignore"):
            want = fusion.run_unfused(program, arrays, scalars)
        got = [np.empty(shape, out_dtype) for shape, out_dtype in program.output_specs]
        function = getattr(library, f"f{k}")
        arguments = [ctypes.c_long(arrays[0].size)]
        for dtype_name, param in ins:  # the arrays, then the scalars, as cuda_source lists
            if param.startswith("in"):
                array = np.ascontiguousarray(arrays[int(param[2:])])
                arguments.append(array.ctypes.data_as(ctypes.c_void_p))
            else:
                arguments.append(_CTYPES[dtype_name](scalars[int(param[1:])]))
        arguments += [g.ctypes.data_as(ctypes.c_void_p) for g in got]
        with np.errstate(all="ignore"):
            function(*arguments)
        for g, w in zip(got, want):
            if g.dtype.kind == "f":
                same = np.allclose(g, w, rtol=4 * np.finfo(g.dtype).eps, atol=0, equal_nan=True)
            else:
                same = np.array_equal(g, w)
            if not same:
                problems.append(f"{name} {dtype}: host {g.tolist()} != NumPy {w.tolist()}")
    assert not problems, "\n".join(problems)
