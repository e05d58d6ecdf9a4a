"""Random straight-line programs run on NumPy and on ndengine, step by step (issue 9).

A program is a list of steps, each one line of Python over ``v`` (a list of arrays), ``xp``
(``numpy`` or ``ndengine``) and ``np`` (for constant keys); for example
``v.append(v[0] + v[1])``, ``v[2][1:] += v[2][:-1]`` or ``v.append(xp.sum(v[1], axis=0))``.
Steps are drawn one at a time while the program runs on NumPy, so each step can pick operands
that fit the arrays as they are now (and, now and then, ones that do not: those steps must
raise the same kind of error on both). A failing program prints as code that reproduces it.

Every step's result is exact in IEEE arithmetic (integer wrap-around, single float ops,
comparisons, max/min, sums of integers, ...) and is kept in ``v`` for later steps, except the
"observe" steps (transcendental functions, float sums, dot products, means): their result
``r`` depends on the order of float operations, is compared with a tolerance, and is dropped.

Some steps aim at patterns that once differed from NumPy: integer-per-axis element access
(a copy, not a view) and far into a large array, views of 0-d arrays, a call repeated past the
point where a Numba loop replaces NumPy's (zero signs are compared too), reductions over an
empty axis of complex values (real and imaginary parts are compared apart).

reliability_replay.py runs a program on both and compares them. State: ``COUNTS``
(programs, steps, comparisons, errors, ...) is summed over the session by the tests, which
print it at the end.
"""
import threading

import numpy as np
from hypothesis import strategies as st

import ndengine as nd

DTYPES = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64", "float32", "float64")]
ERROR_FAMILIES = (TypeError, ValueError, IndexError, OverflowError, ZeroDivisionError, KeyError)
MAX_LIVE = 10  # arrays in ``v``; beyond it, steps delete some

COUNTS = {"programs": 0, "steps": 0, "comparisons": 0, "expected_errors": 0,
          "deferred_errors": 0}
_counts_lock = threading.Lock()


def count(**increments):
    with _counts_lock:
        for key, n in increments.items():
            COUNTS[key] += n


class Mismatch(AssertionError):
    pass


# ---------------------------------------------------------------- step tables
BINARY_OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv",
                    "%": "mod", "**": "pow", "&": "and", "|": "or", "^": "xor",
                    "<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">": "gt", ">=": "ge"}
IN_PLACE = ("+=", "-=", "*=", "//=", "%=", "&=", "|=", "^=", "/=")
BINARY_FUNCTIONS = ("maximum", "minimum")
EXACT_UNARY = ("-{}", "abs({})", "~{}", "xp.square({})", "xp.sign({})", "xp.floor({})",
               "xp.ceil({})", "xp.round({})", "xp.sqrt({})", "xp.negative({})")
# Transcendental functions (observe only); sigmoid and relu are ndengine's own, spelled out
# for NumPy.
OBSERVED_UNARY = ("xp.exp({})", "xp.log({})", "xp.log1p({})", "xp.expm1({})", "xp.sin({})",
                  "xp.cos({})", "xp.tanh({})", "xp.arctan({})", "sigmoid({})", "relu({})")
EXACT_REDUCTIONS = ("max", "min", "argmax", "argmin")
INT_REDUCTIONS = ("sum", "prod")  # exact on integers and bools, observed on floats
OBSERVED_REDUCTIONS = ("mean", "std", "var")


class NumpyArrays(list):
    """``v`` on the NumPy side: a NumPy scalar result (``np.sum(x)``, ``np.dot`` of 0-d
    arrays) is kept as the 0-d array ndengine gives."""

    def append(self, value):
        super().append(np.asarray(value) if isinstance(value, np.generic) else value)


def namespace(xp):
    """The globals a step runs in."""
    if xp is np:
        def sigmoid(x):  # in the float dtype np.exp gives (no wrap-around of -x)
            x = np.asarray(x)
            return 1 / (1 + np.exp(-x.astype(np.exp(x).dtype)))

        def relu(x):
            return np.maximum(x, 0)
    else:
        sigmoid, relu = nd.sigmoid, nd.relu
    return {"xp": xp, "np": np, "nan": np.nan, "inf": np.inf, "sigmoid": sigmoid,
            "relu": relu}


def literal(values):
    """Source text that rebuilds a NumPy array exactly."""
    values = np.asarray(values)
    text = repr(values.tolist())
    return f"np.array({text}, dtype={values.dtype.name!r})"


# ---------------------------------------------------------------- drawing values
def scalar_for(draw, dtype=None):
    return draw(st.one_of(
        st.sampled_from([0, 1, 2, 3, -1, -2, 7]),
        st.booleans(),
        st.sampled_from([0.5, -1.5, 2.0, 0.0, -0.0, 1e10, float("nan"), float("inf")]),
        st.sampled_from([127, 128, 255, 256, -129, 2**31, 2**63 - 1, -(2**63)])))


def scalar_text(value):
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
    return repr(value)


def draw_values(draw, shape, dtype):
    size = int(np.prod(shape)) if shape else 1
    if dtype.kind == "b":
        flat = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = st.integers(max(info.min, -6), min(info.max, 6))
        edge = st.sampled_from([info.min, info.max, info.max // 2 + 1])
        flat = draw(st.lists(st.one_of(small, small, small, edge), min_size=size,
                             max_size=size))
    else:
        halves = st.integers(-12, 12).map(lambda k: k / 2)
        edge = st.sampled_from([float("nan"), float("inf"), float("-inf"), -0.0, 1e30, 3e-39])
        flat = draw(st.lists(st.one_of(halves, halves, halves, edge), min_size=size,
                             max_size=size))
    return np.array(flat, dtype=dtype).reshape(shape)


# ---------------------------------------------------------------- drawing steps
class ProgramDrawer:
    """Draws a program one step at a time while running it on NumPy (``self.v``)."""

    def __init__(self, draw):
        self.draw = draw
        self.lines = []
        self.ns = namespace(np)
        self.ns["v"] = self.v = NumpyArrays()

    # -- helpers
    def run(self, line, observe=False):
        """Run one step on NumPy and record it (it may raise: that is recorded too)."""
        self.lines.append((line, observe))
        with np.errstate(all="ignore"):  # thread-safe, unlike warnings.catch_warnings
            try:
                exec(line, self.ns)  # noqa: S102 - the step text is generated here
            except Exception:  # noqa: BLE001 - an expected error; the replay checks it
                pass

    def pick(self, where=None):
        indices = [i for i, a in enumerate(self.v) if where is None or where(a)]
        return self.draw(st.sampled_from(indices)) if indices else None

    def axis_for(self, a, allow_none=True):
        choices = list(range(-a.ndim, a.ndim)) + [a.ndim]  # one out of range now and then
        if allow_none:
            choices.append(None)
        return self.draw(st.sampled_from(choices))

    def index_for(self, n):
        return self.draw(st.integers(-n - 1, n))  # may be out of bounds

    def slice_for(self, n):
        start = self.draw(st.sampled_from([None, 0, 1, -1, n // 2]))
        stop = self.draw(st.sampled_from([None, -1, n, n // 2 + 1]))
        step = self.draw(st.sampled_from([None, None, 2, -1]))
        return ":".join("" if x is None else str(x) for x in (start, stop, step))

    def basic_key(self, a):
        if a.ndim == 0:
            return "..."
        parts = []
        for n in a.shape[:self.draw(st.integers(1, a.ndim))]:
            kind = self.draw(st.sampled_from(["slice", "slice", "int", "all"]))
            parts.append(self.slice_for(n) if kind == "slice" else
                         str(self.index_for(n)) if kind == "int" else ":")
        return ", ".join(parts)

    def mask_for(self, a):
        if a.size <= 64:
            return literal(draw_values(self.draw, a.shape, np.dtype(bool)))
        step = self.draw(st.integers(2, 5))
        return f"(np.arange({a.size}) % {step} == 0).reshape({a.shape})"

    def operand(self, a):
        """Another array (often one that broadcasts with ``a``) or a Python scalar."""
        if self.draw(st.integers(0, 3)) == 0:
            return scalar_text(scalar_for(self.draw))
        return f"v[{self.pick()}]"

    # -- the steps
    def new_array(self):
        shape = self.draw(st.sampled_from([(), (3,), (4,), (2, 3), (3, 1), (1, 3), (2, 1, 3),
                                           (3, 3), (0,), (2, 0)]))
        dtype = self.draw(st.sampled_from(DTYPES))
        self.run(f"v.append(xp.array({literal(draw_values(self.draw, shape, dtype))}))")

    def big_array(self):
        """An array above the inline limit (64 KiB): its ops run on the engine's workers."""
        dtype = self.draw(st.sampled_from(["int32", "int64", "float32", "float64", "uint16"]))
        shape = self.draw(st.sampled_from([(96, 96), (96, 1), (9216,), (1, 96)]))
        size = int(np.prod(shape))
        modulus = self.draw(st.sampled_from([3, 7, 11]))
        self.run(f"v.append((xp.arange({size}) % {modulus} - 1).astype({dtype!r})"
                 f".reshape({shape}))")

    def fancy_in_place(self):
        i = self.pick(lambda a: a.ndim >= 1 and a.shape[0] >= 1)
        if i is None:
            return self.in_place()
        n = self.v[i].shape[0]
        idx = self.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=4))
        key = self.draw(st.sampled_from([literal(np.array(idx, dtype=np.intp)),
                                         f"v[{i}] > 0", "1:"]))
        symbol = self.draw(st.sampled_from(("+=", "-=", "*=", "//=")))
        self.run(f"v[{i}][{key}] {symbol} {self.draw(st.sampled_from(['1', '2', 'v[%d]' % i]))}")

    def split_or_broadcast(self):
        i = self.pick(lambda a: a.ndim >= 1)
        if i is None:
            return self.view()
        a = self.v[i]
        if self.draw(st.booleans()):
            parts = self.draw(st.sampled_from([1, 2, 3]))
            axis = self.axis_for(a, allow_none=False)
            # NumPy's parts are views of the array, ndengine's are copies: copy both
            self.run(f"v.extend(p.copy() for p in xp.split(v[{i}], {parts}, axis={axis}))")
        else:
            shape = self.draw(st.sampled_from([(2,) + a.shape, (3,) + a.shape[1:], (2, 3, 3)]))
            # NumPy's broadcast_to is a read-only view; ndengine's a copy: copy both
            self.run(f"v.append(xp.broadcast_to(v[{i}], {shape}).copy())")

    def binary(self):
        i = self.pick()
        symbol = self.draw(st.sampled_from(sorted(BINARY_OPERATORS) + list(BINARY_FUNCTIONS)))
        other = self.operand(self.v[i])
        left, right = f"v[{i}]", other
        if self.draw(st.booleans()):
            left, right = right, left
        if symbol in BINARY_FUNCTIONS:
            expr = f"xp.{symbol}({left}, {right})"
        else:
            if left[0] != "v" and right[0] != "v":
                left = f"v[{i}]"
            expr = f"{left} {symbol} {right}"
        if symbol == "**" and self.v[i].dtype.kind == "f":
            self.run(f"r = {expr}", observe=True)  # pow: libm, not IEEE-exact
        else:
            self.run(f"v.append({expr})")

    def in_place(self):
        i = self.pick()
        symbol = self.draw(st.sampled_from(IN_PLACE))
        self.run(f"v[{i}] {symbol} {self.operand(self.v[i])}")

    def overlapping_write(self):
        i = self.pick(lambda a: a.ndim >= 1 and a.shape[0] >= 2)
        if i is None:
            return self.in_place()
        a = self.v[i]
        forms = [f"v[{i}][1:] += v[{i}][:-1]", f"v[{i}][:-1] = v[{i}][1:]",
                 f"v[{i}][1:] = v[{i}][:-1]", f"v[{i}][::-1] = v[{i}]",
                 f"v[{i}][:-1] -= v[{i}][1:]", f"v[{i}] *= v[{i}][::-1]"]
        if a.ndim == 2 and a.shape[0] == a.shape[1]:
            forms += [f"v[{i}] += v[{i}].T", f"v[{i}][...] = v[{i}].T",
                      f"v[{i}].T[1:] = v[{i}][:-1]"]
        self.run(self.draw(st.sampled_from(forms)))

    def view(self):
        i = self.pick()
        a = self.v[i]
        key = self.basic_key(a)
        key = key if "..." in key else key + ", ..."  # NumPy: a 0-d view, not a scalar
        forms = [f"v[{i}][{key}]", f"v[{i}].T", f"v[{i}].reshape(-1)",
                 f"v[{i}][::-1]" if a.ndim else f"v[{i}][...]",
                 f"v[{i}].reshape({tuple(reversed(a.shape))})",
                 f"v[{i}][None]",
                 f"v[{i}].squeeze()", f"v[{i}].transpose()", f"v[{i}].reshape(5, -1)"]
        self.run(f"v.append({self.draw(st.sampled_from(forms))})")

    def set_item(self):
        i = self.pick(lambda a: a.ndim >= 1)
        if i is None:
            return self.run(f"v[{self.pick()}][...] = {self.operand(None)}")
        a = self.v[i]
        kind = self.draw(st.sampled_from(["basic", "int", "mask", "mask_env"]))
        if kind == "basic":
            key = self.basic_key(a)
        elif kind == "int":
            n = a.shape[0]
            idx = self.draw(st.lists(st.integers(-n - 1, n), min_size=1, max_size=4))
            key = literal(np.array(idx, dtype=np.intp))
        elif kind == "mask":
            key = self.mask_for(a)
        else:
            k = self.pick(lambda b: b.dtype == bool and b.shape == a.shape)
            key = f"v[{k}]" if k is not None else f"v[{i}] > 0"
        self.run(f"v[{i}][{key}] = {self.operand(a)}")

    def take(self):
        i = self.pick(lambda a: a.ndim >= 1)
        if i is None:
            return self.view()
        a = self.v[i]
        kind = self.draw(st.sampled_from(["int", "mask", "mask_expr", "mixed"]))
        if kind == "int":
            n = a.shape[0]
            idx = self.draw(st.lists(st.integers(-n - 1, n), max_size=5))
            key = literal(np.array(idx, dtype=np.intp))
        elif kind == "mask":
            key = self.mask_for(a)
        elif kind == "mask_expr":
            key = f"v[{i}] > 1" if a.dtype != bool else f"v[{i}]"
        else:
            n = a.shape[-1]
            idx = self.draw(st.lists(st.integers(-n - 1, n), min_size=1, max_size=3))
            key = f"..., {literal(np.array(idx, dtype=np.intp))}"
        self.run(f"v.append(v[{i}][{key}])")

    def unary(self):
        i = self.pick()
        if self.draw(st.booleans()):
            form = self.draw(st.sampled_from(EXACT_UNARY))
            self.run(f"v.append({form.format(f'v[{i}]')})")
        else:
            form = self.draw(st.sampled_from(OBSERVED_UNARY))
            self.run(f"r = {form.format(f'v[{i}]')}", observe=True)

    def reduction(self):
        i = self.pick()
        a = self.v[i]
        name = self.draw(st.sampled_from(EXACT_REDUCTIONS + INT_REDUCTIONS +
                                         OBSERVED_REDUCTIONS))
        axis = self.axis_for(a)
        if a.ndim >= 2 and name not in ("argmax", "argmin") and self.draw(st.booleans()):
            axis = self.draw(st.sampled_from([(0, 1), (-1, 0), (0, 0)]))  # (0, 0): an error
        keepdims = self.draw(st.booleans()) and name not in ("argmax", "argmin")
        extra = ", keepdims=True" if keepdims else ""
        if name in ("std", "var") and self.draw(st.booleans()):
            extra += ", ddof=1"
        use_function = self.draw(st.booleans()) and name not in ("argmax", "argmin")
        expr = (f"xp.{name}(v[{i}], axis={axis}{extra})" if use_function else
                f"v[{i}].{name}(axis={axis}{extra})")
        if name in OBSERVED_REDUCTIONS or (name in INT_REDUCTIONS and a.dtype.kind == "f"):
            self.run(f"r = {expr}", observe=True)
        else:
            self.run(f"v.append({expr})")

    def astype(self):
        i = self.pick()
        dtype = self.draw(st.sampled_from(DTYPES))
        a = self.v[i]
        if a.dtype.kind == "f" and dtype.kind in "iu":
            # float -> int of NaN, inf or out-of-range values is undefined in C (and NumPy)
            self.run(f"v.append(xp.where(v[{i}] == v[{i}], xp.clip(v[{i}], 0, 100), 0)"
                     f".astype({dtype.name!r}))")
        else:
            self.run(f"v.append(v[{i}].astype({dtype.name!r}))")

    def where(self):
        c = self.pick(lambda a: a.dtype == bool)
        cond = f"v[{c}]" if c is not None else f"v[{self.pick()}] > 0"
        i = self.pick()
        self.run(f"v.append(xp.where({cond}, v[{i}], {self.operand(self.v[i])}))")

    def clip(self):
        i = self.pick()
        lo = scalar_text(self.draw(st.sampled_from([0, -1, 1, 0.5, -2])))
        hi = scalar_text(self.draw(st.sampled_from([3, 1, 0, 2.5, 100])))
        form = self.draw(st.sampled_from(["xp.clip(v[{i}], {lo}, {hi})",
                                          "v[{i}].clip({lo}, {hi})"]))
        self.run(f"v.append({form.format(i=i, lo=lo, hi=hi)})")

    def product(self):
        i, j = self.pick(), self.pick()
        fn = self.draw(st.sampled_from(["dot", "matmul"]))
        expr = f"xp.{fn}(v[{i}], v[{j}])" if fn == "dot" or self.draw(st.booleans()) else \
            f"v[{i}] @ v[{j}]"
        a, b = self.v[i], self.v[j]
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            self.run(f"r = {expr}", observe=True)
        else:
            self.run(f"v.append({expr})")

    def join(self):
        picks = [self.pick() for _ in range(self.draw(st.integers(1, 3)))]
        fn = self.draw(st.sampled_from(["concatenate", "stack"]))
        axis = self.draw(st.sampled_from([0, 1, -1, 2]))
        arrays = ", ".join(f"v[{k}]" for k in picks)
        self.run(f"v.append(xp.{fn}([{arrays}], axis={axis}))")

    def element(self):
        """An integer per axis: NumPy gives a scalar (kept as a new 0-d array), never a view,
        so writing into it leaves the array as it was (``t = x[0]; t += x[1]``)."""
        i = self.pick(lambda a: a.ndim >= 1)
        if i is None:
            return self.zero_d_view()
        key = ", ".join(str(self.index_for(n)) for n in self.v[i].shape)
        self.run(f"v.append(v[{i}][{key}])")
        self.run(f"v[-1] += {self.operand(None)}")

    def zero_d_view(self):
        """Views of a 0-d array (``x[...]``, ``x[None]``) write into it; ``x[()]`` is
        NumPy's scalar, a copy."""
        i = self.pick(lambda a: a.ndim == 0)
        if i is None:
            dtype = self.draw(st.sampled_from(DTYPES))
            self.run(f"v.append(xp.array({literal(draw_values(self.draw, (), dtype))}))")
            i = len(self.v) - 1
        key = self.draw(st.sampled_from(["...", "None", "()", "..., None"]))
        self.run(f"v.append(v[{i}][{key}])")
        self.run(f"v[-1] += {self.operand(None)}")

    def repeated_call(self):
        """The same call more often than NDENGINE_JIT_AFTER (16): the Numba loop that then
        replaces NumPy's must give NumPy's bits, zero signs included. fmax and fmin run
        NumPy's own loop, whose answer to a tie of 0.0 and -0.0 depends on which of its inner
        loops runs (contiguous or strided, a cast buffered or not): their zero signs are made
        one (``+ 0.0``) before the comparison."""
        i = self.pick()
        fn = self.draw(st.sampled_from(("maximum", "minimum", "fmax", "fmin")))
        other = self.draw(st.sampled_from(["-0.0", "0.0", "nan", f"v[{self.pick()}]"]))
        unsigned = " + 0.0" if fn in ("fmax", "fmin") else ""
        self.run(f"v.append([xp.{fn}(v[{i}], {other}) for _ in range(20)][-1]{unsigned})")

    def empty_reduction(self):
        """Reductions over an empty axis, of complex values too (the mean of none is
        nan+nanj)."""
        i = self.pick(lambda a: a.ndim >= 1)
        if i is None:
            return self.reduction()
        dtype = self.draw(st.sampled_from(["complex64", "complex128", None]))
        name = self.draw(st.sampled_from(["mean", "sum", "prod", "var", "std"]))
        source = f"v[{i}][:0]" + (f".astype({dtype!r})" if dtype else "")
        self.run(f"r = xp.{name}({source}, axis=0)", observe=True)

    def far_element(self):
        """One element far into a large array: computing the view's geometry must never make
        NumPy read memory the array does not own (it crashed the interpreter there)."""
        n = 1 << 24
        k = self.draw(st.sampled_from([-1, n - 1, n // 2 + 3, -n, n]))  # n: out of bounds
        self.run(f"v.append(xp.zeros({n}, dtype='float32')[{k}])")

    def copy_or_drop(self):
        i = self.pick()
        if len(self.v) > 3 and self.draw(st.booleans()):
            self.run(f"del v[{i}]")
        else:
            self.run(f"v.append(v[{i}].copy())")

    STEPS = ("binary", "binary", "in_place", "in_place", "overlapping_write", "view", "view",
             "set_item", "set_item", "take", "unary", "reduction", "astype", "where", "clip",
             "product", "join", "copy_or_drop", "new_array", "big_array", "fancy_in_place",
             "split_or_broadcast", "element", "zero_d_view", "repeated_call", "empty_reduction",
             "far_element")

    def program(self, min_steps=3, max_steps=20):
        for _ in range(self.draw(st.integers(1, 3))):
            self.new_array()
        for _ in range(self.draw(st.integers(min_steps, max_steps))):
            while len(self.v) > MAX_LIVE:
                self.run(f"del v[{self.draw(st.integers(0, len(self.v) - 1))}]")
            getattr(self, self.draw(st.sampled_from(self.STEPS)))()
        return list(self.lines)


@st.composite
def programs(draw, min_steps=3, max_steps=20):
    return ProgramDrawer(draw).program(min_steps, max_steps)


def program_source(lines):
    return "\n".join(f"{line}{'   # observed' if observe else ''}" for line, observe in lines)


def summary():
    c = COUNTS
    return (f"random programs: {c['programs']} programs, {c['steps']} steps, "
            f"{c['comparisons']} comparisons, {c['expected_errors']} matching errors "
            f"({c['deferred_errors']} raised at a wait)")

