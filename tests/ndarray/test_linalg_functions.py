"""Products (vdot, inner, outer, tensordot, einsum, kron) and ndengine.linalg, differential
against NumPy within tolerance: stacked matrices, dtypes, params, result types, errors at the
call (shapes) and at the wait (a singular matrix, complex eigenvalues); NumPy's docstring
examples."""
import inspect

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ndengine as nd
from ndengine.ndarray.linalg import FUNCTIONS_LINALG
from ndarray_helpers import DTYPES, FLOATS, raises_anywhere, run_xp, shapes, values
from numpy_doc_examples import run_doc_examples

pytestmark = pytest.mark.usefixtures("nd_engine")

REALS = FLOATS + [np.dtype(np.int64), np.dtype(np.int8)]


def run_each(calls, *args, tol="close"):
    for call in calls:
        run_xp(call, *args, tol=tol)


@given(data=st.data())
def test_products(data):
    sa = data.draw(shapes(max_dims=3, max_side=3), label="sa")
    sb = data.draw(st.one_of(shapes(max_dims=3, max_side=3), st.just(sa), st.just(sa[::-1])),
                   label="sb")
    a, b = (data.draw(values(data.draw(st.sampled_from(DTYPES)), s, lo=-9, hi=9))
            for s in (sa, sb))
    axes = data.draw(st.one_of(st.integers(0, 2), st.just(([0], [0])),
                               st.just(([-1], [0]))), label="axes")
    run_each([lambda xp, u, v: xp.vdot(xp.array(u), xp.array(v)),
              lambda xp, u, v: xp.inner(xp.array(u), xp.array(v)),
              lambda xp, u, v: xp.outer(xp.array(u), v),
              lambda xp, u, v: xp.kron(xp.array(u), xp.array(v)),
              lambda xp, u, v: xp.tensordot(xp.array(u), xp.array(v), axes),
              lambda xp, u, v: xp.inner(xp.array(u), 2.5),
              lambda xp, u, v: xp.kron(3, xp.array(v))], a, b)


EINSUM_CASES = [  # subscripts, operand shapes
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("i,i", [(4,), (4,)]), ("i,j->ij", [(2,), (3,)]), ("...ij,...jk", [(2, 2, 3), (3, 1)]),
    ("ij->ji", [(2, 3)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("ij,ij->", [(2, 3)] * 2),
    ("i,->i", [(3,), ()]), ("ij,jk", [(2, 3), (4, 2)]), ("ij->iij", [(2, 2)]),
    ("i...->...", [(2, 3, 4)]), ("ba,ab", [(2, 3), (3, 2)]), ("i j,j", [(2, 2), (2,)])]


@given(case=st.sampled_from(EINSUM_CASES), dtype=st.sampled_from(DTYPES), data=st.data(),
       options=st.sampled_from([{}, {"optimize": True}, {"dtype": np.float32},
                                {"dtype": np.int8, "casting": "unsafe"}, {"order": "F"}]))
def test_einsum(case, dtype, data, options):
    subscripts, operand_shapes = case
    operands = [data.draw(values(dtype, s, lo=-5, hi=5)) for s in operand_shapes]
    run_xp(lambda xp, *ops: xp.einsum(subscripts, *[xp.array(o) for o in ops], **options),
           *operands, tol="close")
    if subscripts == "ij,jk->ik":  # the interleaved form, and out=
        run_xp(lambda xp, u, v: xp.einsum(xp.array(u), [0, 1], xp.array(v), [1, 2], [0, 2]),
               *operands, tol="close")
        run_xp(lambda xp, u, v: xp.einsum(subscripts, xp.array(u), v,
                                          out=xp.zeros((2, 4), dtype=np.float64)),
               *operands, tol="close")


def _matrices(data, dtype, batch, m, n, kind="general"):
    """Well-conditioned matrices: random plus n on the diagonal, or symmetric positive
    definite, or upper triangular (real eigenvalues)."""
    x = data.draw(values(np.float64, batch + (m, n), lo=-1, hi=1), label=kind)
    if kind == "spd":
        x = x @ np.swapaxes(x, -1, -2) + m * np.eye(m)
    elif kind == "triangular":
        x = np.triu(x) + np.diag(np.arange(1.0, m + 1) * 3)
    elif m == n:
        x = x + m * np.eye(m)
    if dtype.kind in "iu":
        x = np.round(x * 3)
    return x.astype(dtype)


@given(data=st.data(), dtype=st.sampled_from(REALS),
       batch=shapes(max_dims=2, max_side=2), n=st.integers(0, 4))
def test_square_matrices(data, dtype, batch, n):
    a = _matrices(data, dtype, batch, n, n)
    spd = _matrices(data, dtype if dtype.kind == "f" else np.dtype(np.float64), batch, n, n,
                    "spd")
    tri = _matrices(data, dtype, batch, n, n, "triangular")
    b = data.draw(values(np.float64, (n,), lo=-1, hi=1))
    power = data.draw(st.integers(-2, 3), label="power")
    uplo = data.draw(st.sampled_from(["L", "U"]), label="UPLO")
    run_each([lambda xp, x, s, t: xp.linalg.inv(xp.array(x)),
              lambda xp, x, s, t: xp.linalg.det(xp.array(x)),
              lambda xp, x, s, t: xp.linalg.slogdet(xp.array(x)),
              lambda xp, x, s, t: xp.linalg.solve(xp.array(x), xp.array(b)),
              lambda xp, x, s, t: xp.linalg.solve(xp.array(x), xp.array(x)),
              lambda xp, x, s, t: xp.linalg.cholesky(xp.array(s)),
              lambda xp, x, s, t: xp.linalg.cholesky(xp.array(s), upper=True),
              lambda xp, x, s, t: xp.linalg.eigh(xp.array(s), uplo),
              lambda xp, x, s, t: xp.linalg.eigvalsh(xp.array(s), UPLO=uplo),
              lambda xp, x, s, t: xp.linalg.eig(xp.array(t)),
              lambda xp, x, s, t: xp.linalg.eigvals(xp.array(t)),
              lambda xp, x, s, t: xp.linalg.matrix_power(xp.array(x), power)], a, spd, tri)


@given(data=st.data(), dtype=st.sampled_from(REALS), batch=shapes(max_dims=1, max_side=2),
       m=st.integers(0, 4), n=st.integers(0, 4))
def test_rectangular_matrices(data, dtype, batch, m, n):
    a = _matrices(data, dtype, batch, m, n)
    full, hermitian = data.draw(st.booleans()), data.draw(st.booleans())
    mode = data.draw(st.sampled_from(["reduced", "complete", "r", "raw", "bogus"]))
    order = data.draw(st.sampled_from([None, "fro", "nuc", 1, -1, 2, np.inf, 0, 3]))
    axis = data.draw(st.sampled_from([None, -1, (-2, -1), (-1, -2), 0]))
    keepdims = data.draw(st.booleans())
    run_each([lambda xp, x: xp.linalg.svd(xp.array(x), full_matrices=full),
              lambda xp, x: xp.linalg.svd(xp.array(x), compute_uv=False),
              lambda xp, x: xp.linalg.svdvals(xp.array(x)),
              lambda xp, x: xp.linalg.qr(xp.array(x), mode),
              lambda xp, x: xp.linalg.pinv(xp.array(x)),
              lambda xp, x: xp.linalg.pinv(xp.array(x), rtol=0.1),
              lambda xp, x: xp.linalg.matrix_rank(xp.array(x)),
              lambda xp, x: xp.linalg.matrix_rank(xp.array(x), tol=0.5, hermitian=hermitian
                                                  and m == n),
              lambda xp, x: xp.linalg.norm(xp.array(x), order, axis, keepdims)], a)


@given(data=st.data(), m=st.integers(0, 5), n=st.integers(0, 4), k=st.integers(0, 2),
       rank_deficient=st.booleans(), rcond=st.sampled_from([None, -1, 0.5]))
def test_lstsq(data, m, n, k, rank_deficient, rcond):
    a = _matrices(data, np.dtype(np.float64), (), m, n)
    if rank_deficient and n:
        a[:, 0] = 0
    b1 = data.draw(values(np.float64, (m,), lo=-1, hi=1))
    bk = data.draw(values(np.float64, (m, k), lo=-1, hi=1))
    run_each([lambda xp, x, y: xp.linalg.lstsq(xp.array(x), xp.array(y), rcond=rcond),
              lambda xp, x, y: xp.linalg.lstsq(xp.array(x), xp.array(bk), rcond)], a, b1)


def test_multi_dot_and_linalg_aliases():
    a, b, c = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4), np.arange(4.0)
    run_each([lambda xp: xp.linalg.multi_dot([xp.array(a), b, xp.array(c)]),
              lambda xp: xp.linalg.multi_dot([xp.array(c[:2]), a, b]),
              lambda xp: xp.linalg.multi_dot([xp.array(a), a]),
              lambda xp: xp.linalg.multi_dot([xp.array(a)]),
              lambda xp: xp.linalg.multi_dot([xp.array(a), b], out=xp.zeros((2, 4))),
              lambda xp: xp.linalg.matmul(xp.array(a), b),
              lambda xp: xp.linalg.tensordot(xp.array(a), a.T, axes=1),
              lambda xp: xp.linalg.tensordot(xp.array(a), a.T, 1),
              lambda xp: xp.linalg.outer(xp.array(c), c),
              lambda xp: xp.linalg.outer(xp.array(a), c)])


def test_shape_errors_at_the_call_and_value_errors_at_the_wait():
    run_each([lambda xp: xp.linalg.inv(xp.ones((2, 3))), lambda xp: xp.linalg.inv(xp.ones(3)),
              lambda xp: xp.linalg.solve(xp.ones((2, 2)), xp.ones(3)),
              lambda xp: xp.linalg.solve(xp.ones((2, 2, 2)), xp.ones((3, 2, 1))),
              lambda xp: xp.linalg.eigh(xp.eye(2), "X"),
              lambda xp: xp.linalg.matrix_power(xp.eye(2), 1.5),
              lambda xp: xp.linalg.norm(xp.ones((2, 2, 2)), 2),
              lambda xp: xp.linalg.norm(xp.ones(2), "fro"),
              lambda xp: xp.linalg.lstsq(xp.ones((3, 2)), xp.ones(2)),
              lambda xp: xp.tensordot(xp.ones((2, 3)), xp.ones((2, 3))),
              lambda xp: xp.inner(xp.ones(2), xp.ones(3)),
              lambda xp: xp.einsum("ij,jk", xp.ones((2, 3)), xp.ones((2, 3))),
              lambda xp: xp.einsum("ij", xp.ones(2)), lambda xp: xp.vdot(xp.ones(2), xp.ones(3)),
              # the values decide: NumPy's LinAlgError, at ndengine's wait
              lambda xp: xp.linalg.inv(xp.zeros((2, 2))),
              lambda xp: xp.linalg.cholesky(-xp.eye(2)),
              lambda xp: xp.linalg.solve(xp.zeros((2, 2)), xp.ones(2))])
    raises_anywhere(np.linalg.LinAlgError, lambda: nd.linalg.inv(nd.zeros((2, 2))).asnumpy(),
                    match="Singular")


def test_complex_eigenvalues_are_refused_at_the_wait():
    rotation = nd.array([[0.0, -1.0], [1.0, 0.0]])
    for call in (lambda: nd.linalg.eig(rotation)[0].asnumpy(),
                 lambda: nd.linalg.eigvals(rotation).asnumpy()):
        raises_anywhere(TypeError, call, match=r"complex.*numpy\.linalg\.eig")
    # given as complex, the matrix has NumPy's complex eigenvalues
    run_xp(lambda xp: xp.linalg.eigvals(xp.array([[0.0, -1.0], [1.0, 0.0]], dtype=complex)),
           tol="close")
    run_xp(lambda xp: xp.linalg.eig(xp.array([[2.0, 1j], [-1j, 2.0]]))[0], tol="close")


_STACK = np.random.default_rng(7).standard_normal((3, 4, 4))
_STACK[1, :, 0] = _STACK[1, :, 1] * (1 + 1e-9)  # nearly rank 3: the tolerance decides


@pytest.mark.parametrize("tolerance", [np.float32(0.5), [1e-12, 1e-3, 0.5], [[1e-12], [0.5]],
                                       [0.1, 0.2], "ndarray"])
@pytest.mark.parametrize("call", [
    lambda xp, a, t: xp.linalg.matrix_rank(a, tol=t),
    lambda xp, a, t: xp.linalg.matrix_rank(a, rtol=t),
    lambda xp, a, t: xp.linalg.matrix_rank(a[0], tol=t),
    lambda xp, a, t: xp.linalg.pinv(a, rcond=t),
    lambda xp, a, t: xp.linalg.pinv(a, rtol=t),
])
def test_tolerances_are_scalars_or_one_per_matrix(call, tolerance):
    """A tolerance array broadcasts with the stack of matrices as NumPy's does (and is
    refused where NumPy refuses it); an NDArray tolerance is read at the call."""
    def body(xp):
        t = tolerance
        if isinstance(t, str):
            t = xp.asarray(np.array([1e-12, 1e-3, 0.5]))
        elif isinstance(t, list):
            t = np.array(t)
        return call(xp, xp.asarray(_STACK), t)
    run_xp(body, tol="close")


def test_result_types_are_numpys_named_tuples():
    a = np.arange(1.0, 5.0).reshape(2, 2) + 3 * np.eye(2)
    for name, args in [("svd", ()), ("eigh", ()), ("eig", ()), ("qr", ()), ("slogdet", ())]:
        ours, theirs = getattr(nd.linalg, name)(nd.array(a), *args), \
            getattr(np.linalg, name)(a, *args)
        assert type(ours).__name__ == type(theirs).__name__
        assert ours._fields == theirs._fields
        assert all(isinstance(part, nd.NDArray) for part in ours)
    assert isinstance(nd.linalg.qr(nd.array(a), "raw"), tuple)
    assert isinstance(nd.linalg.svd(nd.array(a), compute_uv=False), nd.NDArray)
    assert nd.linalg.LinAlgError is np.linalg.LinAlgError


@pytest.mark.parametrize("name", ["vdot", "inner", "outer", "tensordot", "kron", "einsum"])
def test_numpy_doc_examples_of_products(name):
    # einsum's writeable view of a diagonal is NumPy's alone: ndengine's einsum gives a copy
    # (and a timing loop of 500 einsums is left out)
    run_doc_examples(getattr(np, name), skip=("[:] = 1", "for iteration in"))


@pytest.mark.parametrize("name", sorted(set(FUNCTIONS_LINALG) - {"matmul", "tensordot"}))
def test_numpy_doc_examples_of_linalg(name):
    run_doc_examples(getattr(np.linalg, name))


def test_signatures_are_numpys():
    import ndengine.linalg as linalg_module  # importable as numpy.linalg is
    from ndengine.fft import fftshift
    assert linalg_module is nd.linalg and fftshift is nd.fft.fftshift
    for name, function in FUNCTIONS_LINALG.items():
        assert inspect.signature(function) == inspect.signature(getattr(np.linalg, name))
    for name in ("vdot", "inner", "outer", "tensordot", "kron", "einsum"):
        assert inspect.signature(getattr(nd, name)) == inspect.signature(getattr(np, name))
    with pytest.raises(TypeError, match="bogus"):
        nd.linalg.svd(nd.eye(2), bogus=True)
    with pytest.raises(TypeError, match="bogus"):
        nd.einsum("i", nd.ones(2), bogus=True)
