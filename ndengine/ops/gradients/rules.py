"""Gradient rules, one table over op names (tinygrad's ``gradient.py`` is the model).

``RULES[name](f, grads, inputs, outputs, params)`` gives one gradient per input (None where
an input takes none: a condition, an index, a Python scalar), for the op's output gradients
``grads``. Rules are written with ops, through ``f``, which the autograd layer supplies:
``f(name, *inputs, **params)`` pushes the op ``name`` and returns its (first) output, and
``f.zeros(shape, dtype, like)``, ``f.reshape(x, shape)``, ``f.transpose(x, axes)``,
``f.sum_to(g, shape)`` (``g`` summed down to ``shape``, undoing broadcasting),
``f.scatter_add(like, index, values)`` (zeros shaped as ``like``, ``values`` added at
``index``, repeats accumulating: ``numpy.add.at``), ``f.outputs(name, inputs, params,
ctx=None)`` (every output of an op, where ``f`` gives the first: ``eigvalsh``'s gradient
needs ``eigh``'s eigenvectors), ``f.recording()`` (whether the tape records the rule's ops:
``create_graph``); arrays are sliced with ``[...]``. Rules reach arrays only through ``f``
and the arrays handed to them: this package imports nothing of ``core``.
They never compute on data themselves, so gradients are ordinary pushed ops (what they do
compute with NumPy is metadata: index patterns from shapes and params, such as the source
position of each element ``pad`` writes). A gradient may have the broadcast shape: the
caller sums it down to its input's shape. A shared helper, ``_const``, pushes an op without
inputs (``eye`` or ``arange``) on the gradient's context through ``f.outputs``.

The rules live by category, each module one table that ``RULES`` merges:
``elementwise`` (ELEMENTWISE), ``reductions`` (REDUCTIONS: reductions,
accumulations, diff), ``statistics`` (STATISTICS: the nan- and where- reductions,
medians, quantiles), ``linalg`` (LINALG: products, einsum, ``linalg.*``),
``eig_lstsq`` (EIG_LSTSQ: ``linalg.eig``, ``eigvals``, ``lstsq``),
``fft`` (FFT: the ``fft.*`` transforms), ``movement`` (MOVEMENT: joins,
moves, pad, diagonals, triangles) and ``indexing`` (INDEXING: take, writes by
index, choose, sort, ufunc methods) and ``numpy_more`` (NUMPY_MORE: ldexp, frexp,
modf, unwrap, sort_complex, the masked writes copyto/putmask/place, select, vecdot,
matvec, vecmat, the polynomial ops); ``common`` holds what they share. This module
holds the lists and the table.

Every rule is checked against central differences in float64 by
tests/autograd/test_autograd_rules.py (its ``CASES`` table, with test_autograd_numeric's
``MORE_CASES`` and ``COMPLEX_CASES``, must name every op ruled here), and over generated
shapes, axes and broadcasting by tests/autograd/test_autograd_hypothesis.py.
Views (slicing, reshape, transpose, flip, squeeze, expand_dims, swapaxes, ravel, ...) are
no ops: the tape's view rule differentiates them (core/tape.py).

Conventions:
  * complex values follow PyTorch: for a real loss L the gradient of a complex ``z`` is
    ``dL/dRe(z) + i dL/dIm(z)``; a holomorphic op passes ``g`` times its conjugate
    derivative (``multiply``: ``g * conj(y)``; products and ``einsum`` read the other
    operands' conjugates), ``conjugate`` passes ``conj(g)``, ``abs`` ``g * x / |x|``, the FFTs
    their adjoint transforms; a real input takes the real part of a complex gradient
    (``rule_of`` sees to it for every rule). The ``linalg`` decompositions, inverses and
    solvers other than ``eig``/``eigvals`` (``REAL_ONLY``) assume real matrices: a complex
    one raises NotImplementedError at backward;
  * ties give the whole gradient to every tied element (max, min, ptp, nanmax, nanmin,
    vector norms inf/-inf, matrix norms 1/inf) or to the first input (maximum, minimum,
    fmax, fmin); sort and partition pass each element's gradient to where it came from;
  * piecewise-constant ops (sign, floor, ceil, trunc, fix, rint, round, floor_divide,
    heaviside in x1) have a zero gradient;
  * ``prod`` (``nanprod``, ``where=``) is exact with zeros in the input; ``cumprod``/
    ``cumulative_prod``/``nancumprod`` and the ``float_power``/``power`` exponent gradient
    need a nonzero (positive) input; the nan- ops give NaNs a zero gradient, ``where=``
    the elements it leaves out;
  * medians and quantiles pass the gradient to the one or two order statistics they
    interpolate, with the interpolation weights (NumPy's positions, every method but the
    three inverted-CDF steps; ties: the element argsort puts first); a ``q`` input takes
    the slope between them;
  * ``eig`` needs distinct eigenvalues and a loss that does not depend on each
    eigenvector's phase (``abs(V)``: NumPy's are normalized, their phase arbitrary);
    ``lstsq``'s solution gradient is ``pinv(a) b``'s (a real ``a`` of full rank);
  * ``cholesky``, ``eigh`` and ``eigvalsh`` read one triangle of a matrix taken as
    symmetric: their gradient is the symmetric one (for symmetric perturbations);
    ``svd``/``eigh`` need distinct singular values/eigenvalues, ``svd`` needs
    ``full_matrices=False`` (or a square matrix), ``qr`` a tall or square matrix
    (mode "reduced", "complete" of a square one, or "r");
  * ``x[idx] = v`` (``assign_index``), ``put`` and ``put_along_axis``: the gradient of
    the written values is the output's gradient at the written positions (where an
    index repeats, only the value NumPy kept, the last written, gets it); the target's
    gradient is the output's with those positions zeroed; the masked writes (``copyto``
    with ``where=``, ``putmask``, ``place``) and ``select`` alike: each element's gradient
    goes to the value (choice) written there, repeated values summing theirs;
  * ``polyfit`` needs a fit of full rank (its gradient is lstsq's, through the Vandermonde
    matrix to ``x`` and the weights to ``w``);
  * some variants raise NotImplementedError at backward, naming what is missing: pad in
    modes maximum/minimum/mean/median/linear_ramp or reflect_type "odd", or with an array
    of several constant_values; roll with an NDArray shift; ufunc methods other than
    reduce (add, multiply, maximum, minimum), accumulate (add, multiply), outer (a binary
    op with a rule), at (add, subtract); matrix norms other than fro, nuc, 2, -2, 1, -1,
    inf, -inf; polyfit with ``cov=True``; svd(full_matrices=True) of a non-square
    matrix; qr of a wide matrix; quantiles with method inverted_cdf,
    averaged_inverted_cdf, closest_observation or ``weights=``; an n-d FFT with a
    repeated axis; complex input to a ``REAL_ONLY`` rule.

No gradient (``NOT_DIFFERENTIABLE``): their results are constants, as in MXNet and
PyTorch: their rule gives no gradient to any input, so ``x * (x > 0)`` is ``x`` where it is
positive (the mask takes no gradient), and a value reaching ``x`` only through them gives
``x`` a zero gradient (the tape writes zeros into a "write" variable it reached without a
gradient, as MXNet does). They are: integer or boolean results (comparisons, logical and
bitwise ops, ``isnan`` & co., ``signbit``, ``isclose``, ``allclose``, ``array_equal``, ``any``,
``all``, ``count_nonzero``, ``argmax``/``argmin`` (and the nan ones), ``argsort``,
``argpartition``, ``lexsort``, ``searchsorted``, ``digitize``, ``nonzero``, ``argwhere``,
``flatnonzero``, ``unique``, ``unique_count``, ``bincount_length``,
``histogram_bin_count``, ``matrix_rank``, ``isin``, ``set_routine_size``, ``packbits``,
``unpackbits``, ``gcd``, ``lcm``, ``bitwise_count``, ``frexp``'s exponent), ``spacing``
(piecewise constant), the set routines
``intersect1d``, ``setdiff1d`` and ``setxor1d`` (value-sized, as ``unique``), random draws (``random_*``), and ``histogram``,
``histogram2d``, ``histogramdd``, ``histogram_bin_edges`` (piecewise constant in their
data). Creation ops (``fill``, ``arange``, ``linspace``, ``eye``, ``indices``, ``fftfreq``,
``rfftfreq``, the windows ``bartlett`` & co.) read no array, so the tape never records
them (``CREATION``): ``nd.linspace`` with bounds the tape tracks is computed by ops instead,
and ``nd.full``/``nd.arange`` refuse them (ndarray/creation.py).

Not built (``NOT_BUILT``: backward says "has no gradient rule"): ``user_gradient``, the
op that runs a user's NumPy gradient: a second order through it; ``interp`` and
``gradient`` (NumPy's piecewise interpolation and finite differences), and ``i0`` (its
derivative is the Bessel function i1, which NumPy does not have); every other
differentiable built-in op has a rule.

An op registered with a NumPy gradient (``register_op(..., gradient=g)``, ``op.set_gradient``)
is differentiated by it: ``rule_of(op)``, the tape's lookup, gives a rule pushing one
``user_gradient`` op (ops/gradients/user_gradient.py) that runs ``g`` on the values.
"""
from __future__ import annotations

from .common import _is_array, _is_complex, _real
from .eig_lstsq import EIG_LSTSQ
from .elementwise import ELEMENTWISE
from .fft import FFT
from .indexing import INDEXING
from .linalg import LINALG
from .math_extra import MATH_EXTRA
from .movement import MOVEMENT
from .numpy_more import NUMPY_MORE
from .reductions import REDUCTIONS
from .statistics import STATISTICS
from ..families.numpy_operators import thawed

__all__ = ["RULES", "NOT_DIFFERENTIABLE", "NOT_BUILT", "CREATION", "REAL_ONLY", "rule_of"]


# ---------------------------------------------------------------- no gradient

NOT_DIFFERENTIABLE = {
    **dict.fromkeys(("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                     "logical_and", "logical_or", "logical_xor", "logical_not", "isnan",
                     "isinf", "isfinite", "signbit", "isclose", "allclose", "array_equal",
                     "any", "all", "isin"), "a boolean result"),
    **dict.fromkeys(("bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
                     "right_shift", "count_nonzero", "argmax", "argmin", "nanargmax",
                     "nanargmin", "argsort", "argpartition", "lexsort", "searchsorted",
                     "digitize", "nonzero", "argwhere", "flatnonzero", "unique",
                     "unique_count", "bincount_length", "histogram_bin_count",
                     "linalg.matrix_rank", "set_routine_size", "unravel_index",
                     "ravel_multi_index"), "an integer result"),
    **dict.fromkeys(("intersect1d", "setdiff1d", "setxor1d"),
                    "a value-sized set of values, as unique's"),
    **dict.fromkeys(("random_method", "random_normal", "random_order", "random_randint",
                     "random_uniform"), "a random draw"),
    "histogram": "piecewise constant in its data",
    **dict.fromkeys(("histogram2d", "histogramdd", "histogram_bin_edges"),
                    "piecewise constant in its data, as histogram's"),
    **dict.fromkeys(("packbits", "unpackbits", "gcd", "lcm", "bitwise_count"),
                    "an integer result"),
    "spacing": "piecewise constant (the distance to the next float)",
}

CREATION = ("fill", "arange", "linspace", "eye", "indices", "fftfreq", "rfftfreq",
            "bartlett", "blackman", "hamming", "hanning", "kaiser")

NOT_BUILT = ("user_gradient", "interp", "gradient", "i0")


def _constant(f, grads, inputs, outputs, params):
    """A result used as a constant: no gradient to any input."""
    return [None] * len(inputs)


_constant.differentiable = False


# ---------------------------------------------------------------- the table

RULES = {
    **ELEMENTWISE,
    **REDUCTIONS,
    **STATISTICS,
    **LINALG,
    **EIG_LSTSQ,
    **FFT,
    **MOVEMENT,
    **INDEXING,
    **MATH_EXTRA,
    **NUMPY_MORE,
    **dict.fromkeys(NOT_DIFFERENTIABLE, _constant),
}


# rules that assume real values: a complex input raises at backward
REAL_ONLY = ("linalg.inv", "linalg.det", "linalg.slogdet", "linalg.solve", "linalg.cholesky",
             "linalg.eigh", "linalg.eigvalsh", "linalg.svd", "linalg.svdvals", "linalg.qr",
             "linalg.pinv", "linalg.matrix_power", "linalg.lstsq", "convolve", "correlate",
             "cov", "corrcoef")


def _tape_rule(name, rule):
    """``rule`` with the gradient of a real input reduced to its real part where a complex
    value reached it (PyTorch's convention; the tape would otherwise cast it); a complex
    input to a ``REAL_ONLY`` rule raises."""
    real_only = name in REAL_ONLY

    def tape_rule(f, grads, inputs, outputs, params):
        if real_only and any(_is_complex(x) for x in inputs):
            raise NotImplementedError(f"the gradient of {name} of complex arrays is not built "
                                      "(real ones have one)")
        results = rule(f, grads, inputs, outputs, thawed(params))
        return [_real(f, g) if g is not None and _is_complex(g) and _is_array(x)
                and not _is_complex(x) else g for x, g in zip(inputs, results)]
    tape_rule.differentiable = getattr(rule, "differentiable", True)
    return tape_rule


_TAPE_RULES = {}  # (name, rule) -> what the tape calls


def rule_of(op):
    """The tape's rule for the operator ``op``: a user's NumPy gradient (``op.gradient``, given
    to ``register_op(..., gradient=)`` or ``op.set_gradient``) wins, pushed as one
    ``user_gradient`` op; else ``RULES`` (a real input's gradient made real); None when
    there is neither."""
    gradient = op.gradient
    if gradient is None:
        rule = RULES.get(op.name)
        if rule is None or rule is _constant:
            return rule
        tape_rule = _TAPE_RULES.get((op.name, rule))
        if tape_rule is None:
            tape_rule = _TAPE_RULES.setdefault((op.name, rule), _tape_rule(op.name, rule))
        return tape_rule

    def rule(f, grads, inputs, outputs, params):
        arrays = tuple(_is_array(x) for x in inputs)
        if not any(arrays):
            return [None] * len(inputs)
        results = iter(f.outputs("user_gradient", [*grads, *outputs, *inputs],
                                {"gradient": gradient, "params": dict(params),
                                 "num_outputs": len(outputs), "arrays": arrays},
                                ctx=grads[0].context))
        return [next(results) if is_array else None for is_array in arrays]
    return rule
