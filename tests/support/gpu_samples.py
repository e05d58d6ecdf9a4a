"""Sample calls of every registered op that is neither element-wise nor a plain reduction
(those are generated in tests/ops/test_gpu_kernels.py): op name -> [(inputs, params), ...].

Each call is valid on the CPU; the gpu kernels must give the CPU's results for it. Values
are distinct where an order is computed (argsort, unique), so any correct algorithm gives
the same answer.
"""
import numpy as np

_rng = np.random.default_rng(20240611)

F = _rng.permutation(24).reshape(4, 6).astype(np.float64) / 7 - 1.5  # distinct values
F32 = F.astype(np.float32)
NANS = F.copy()
NANS[1, 2] = NANS[3, 0] = np.nan
I = (_rng.permutation(24).reshape(4, 6) - 7).astype(np.int64)
SMALL = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], np.int64)
V = np.linspace(-2.0, 3.0, 7)
SQUARE = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])  # symmetric, SPD
STACK = np.stack([SQUARE, SQUARE * 2 + np.eye(3)])
RECT = _rng.standard_normal((5, 3))
MASK = F > -0.3
SORTED = np.array([-1.0, 0.0, 0.5, 2.0, 7.0])
CPLX = (F + 1j * F[::-1]).astype(np.complex128)


def s(*inputs, **params):
    return (inputs, params)


SAMPLES = {
    # NumPy's element-wise functions that are no ufuncs
    "nan_to_num": [s(np.array([np.nan, np.inf, -np.inf, 1.5])),
                   s(NANS.astype(np.float32), nan=-1.0, posinf=9.0)],
    "isclose": [s(F, F + 1e-9, 1e-5, 1e-8), s(NANS, NANS, 1e-5, 1e-8, equal_nan=True)],
    "allclose": [s(F, F + 1e-9, 1e-5, 1e-8), s(F, F + 1, 1e-5, 1e-8)],
    "array_equal": [s(I, I.copy()), s(NANS, NANS, equal_nan=True)],
    # statistics
    "any": [s(MASK, axis=0), s(I, keepdims=True)],
    "all": [s(MASK, axis=1), s(I)],
    "ptp": [s(F, axis=1), s(I)],
    "count_nonzero": [s(I, axis=0), s(MASK)],
    "nansum": [s(NANS, axis=0), s(NANS)],
    "nanprod": [s(NANS, axis=1)],
    "nanmean": [s(NANS, axis=1, keepdims=True)],
    "nanstd": [s(NANS, axis=0, ddof=1)],
    "nanvar": [s(NANS)],
    "nanmin": [s(NANS, axis=0)],
    "nanmax": [s(NANS, axis=1)],
    "median": [s(F, axis=0), s(I)],
    "nanmedian": [s(NANS, axis=1)],
    "sum_where": [s(F, MASK, arrays=("where",), axis=0), s(I, MASK, arrays=("where",),
                                                            initial=5)],
    "prod_where": [s(F, MASK, arrays=("where",), axis=1)],
    "mean_where": [s(F, MASK, arrays=("where",), axis=1)],
    "max_where": [s(F, MASK, arrays=("where",), axis=0, initial=-9.0)],
    "min_where": [s(F, MASK, arrays=("where",), initial=9.0)],
    "std_where": [s(F, MASK, arrays=("where",), axis=1)],
    "var_where": [s(F, MASK, arrays=("where",), correction=1)],
    "nanargmin": [s(NANS, axis=0)],
    "nanargmax": [s(NANS)],
    "quantile": [s(F, q=0.3, axis=0), s(F, q=np.array([0.1, 0.5, 0.9]))],
    "percentile": [s(F, q=np.array([10.0, 90.0]), axis=1)],
    "nanquantile": [s(NANS, q=0.25, axis=1)],
    "nanpercentile": [s(NANS, q=np.array([50.0]))],
    "cumsum": [s(F, axis=1), s(I)],
    "cumprod": [s(F32, axis=0)],
    "nancumsum": [s(NANS, axis=0)],
    "nancumprod": [s(NANS)],
    "cumulative_sum": [s(I, axis=1, include_initial=True)],
    "cumulative_prod": [s(F, axis=0)],
    "diff": [s(F, n=2, axis=1), s(I, np.zeros((1, 6), np.int64), arrays=("prepend",), axis=0)],
    "average": [s(F, axis=1), s(F, np.arange(1.0, 7.0), arrays=("weights",), axis=1,
                                returned=True)],
    "histogram": [s(V, bins=4), s(F, np.array([-2.0, -1.0, 0.0, 2.0]), arrays=("bins",))],
    "histogram_bin_count": [s(V, bins="auto")],
    # sorting and searching
    "sort": [s(F, axis=1), s(F, axis=None), s(I, axis=0), s(F, kind="stable", stable=None)],
    "argsort": [s(F, axis=0), s(F32), s(I, axis=1, stable=True)],
    "partition": [s(F, kth=2, axis=1)],
    "argpartition": [s(F, kth=1, axis=0)],
    "searchsorted": [s(SORTED, V), s(SORTED, V, side="right")],
    "digitize": [s(V, bins=SORTED), s(V, bins=SORTED, right=True)],
    "lexsort": [s(np.array([1, 0, 1, 0]), np.array([4.0, 3.0, 2.0, 1.0]))],
    "nonzero": [s(I, count=int(np.count_nonzero(I)))],
    "argwhere": [s(MASK, count=int(np.count_nonzero(MASK)))],
    "flatnonzero": [s(MASK, count=int(np.count_nonzero(MASK)))],
    "unique": [s(SMALL, count=7), s(SMALL, count=7, return_counts=True,
                                    return_inverse=True), s(SMALL, count=7, sorted=True)],
    "unique_count": [s(SMALL)],
    # set routines
    "isin": [s(SMALL, np.array([1, 4, 9])), s(SMALL, np.array([2, 3]), invert=True)],
    "set_routine_size": [s(SMALL, np.array([1, 4, 9]), routine="intersect1d"),
                         s(SMALL, SMALL[::2], routine="setxor1d")],
    "intersect1d": [s(SMALL, np.array([1, 4, 9]), count=len(np.intersect1d(SMALL, [1, 4, 9]))),
                    s(SMALL, np.array([1, 4, 9]), count=len(np.intersect1d(SMALL, [1, 4, 9])),
                      return_indices=True)],
    "setdiff1d": [s(SMALL, np.array([1, 4]), count=len(np.setdiff1d(SMALL, [1, 4])))],
    "setxor1d": [s(SMALL, SMALL[::2], count=len(np.setxor1d(SMALL, SMALL[::2])))],
    # signals, interpolation, covariance, finite differences, index conversion
    "convolve": [s(V, SORTED), s(SORTED, V, mode="same"), s(V, SORTED, mode="valid")],
    "correlate": [s(V, SORTED), s(V, SORTED, mode="full")],
    "interp": [s(V, SORTED, np.arange(5.0)), s(V, SORTED, np.arange(5.0), left=-1.0,
                                              right=9.0)],
    "cov": [s(F), s(F, F[::-1], arrays=("y",), rowvar=False, ddof=0),
            s(F, np.array([1, 2, 1, 3, 1, 1]), arrays=("fweights",))],
    "corrcoef": [s(F), s(F32, rowvar=False)],
    "gradient": [s(F), s(F, 2.0, np.arange(6.0) ** 2, edge_order=2), s(V, axis=0)],
    "unravel_index": [s(SMALL, shape=(2, 5)), s(SMALL, shape=(5, 2), order="F")],
    # polynomials, windows, 2-d and n-d histograms, bit packing
    "poly": [s(SORTED)],
    "polyadd": [s(V, SORTED)],
    "polysub": [s(SORTED, V)],
    "polyder": [s(V, m=2)],
    "polyint": [s(V, m=2, k=(1.0, 2.0))],
    "polyval": [s(V, F), s(np.stack([V, V]), np.arange(7.0))],
    "polyfit": [s(V, V ** 2, deg=2, rcond=None, cov=False),
                s(V, np.stack([V, 2 * V], 1), V + 3, arrays=("w",), deg=1, rcond=None,
                  cov=True)],
    **{name: [s(M=7), s(M=4.5)] for name in ("bartlett", "blackman", "hamming", "hanning")},
    "kaiser": [s(M=7, beta=3.0)],
    "histogram2d": [s(V, V[::-1], bins=3, range=None, density=None),
                    s(V, V, V + 2, arrays=("weights",), bins=(2, 4), range=None,
                      density=True)],
    "histogramdd": [s(F[:, :3], bins=2, range=None, density=None, sequence=False, dims=3),
                    s(V, V ** 2, bins=(2, 3), range=None, density=None, sequence=True,
                      dims=2)],
    "histogram_bin_edges": [s(V, bins=4, range=None), s(V, bins="auto", range=None,
                                                        bin_count=4)],
    "packbits": [s(SMALL.astype(np.uint8), axis=None, bitorder="big")],
    "unpackbits": [s(np.arange(6, dtype=np.uint8).reshape(2, 3), axis=1, count=-2,
                     bitorder="little")],
    "ravel_multi_index": [s(SMALL % 2, SMALL % 5, dims=(2, 5)),
                          s(SMALL, SMALL, dims=(4, 4), mode="clip")],
    "bincount": [s(SMALL, length=10), s(SMALL, SMALL * 0.5, arrays=("weights",),
                                        length=12, minlength=12)],
    "bincount_length": [s(SMALL), s(SMALL, minlength=20)],
    # products and linear algebra
    "dot": [s(F, F.T), s(V, V), s(F32, np.float32(2))],
    "matmul": [s(STACK, SQUARE), s(F, np.arange(6.0))],
    "vdot": [s(F, F)],
    "inner": [s(F, F)],
    "outer": [s(V, SORTED)],
    "tensordot": [s(F, F, axes=([1], [1]))],
    "einsum": [s(F, F, subscripts="ij,kj->ik"), s(STACK, subscripts="bii->b")],
    "kron": [s(SQUARE, np.eye(2))],
    "linalg.inv": [s(SQUARE), s(STACK)],
    "linalg.det": [s(STACK)],
    "linalg.slogdet": [s(SQUARE)],
    "linalg.solve": [s(SQUARE, np.arange(3.0)), s(STACK, STACK)],
    "linalg.cholesky": [s(SQUARE)],
    "linalg.eigh": [s(SQUARE)],
    "linalg.eigvalsh": [s(STACK)],
    "linalg.eig": [s(SQUARE)],
    "linalg.eigvals": [s(SQUARE)],
    "linalg.svd": [s(RECT, full_matrices=False)],
    "linalg.svdvals": [s(RECT)],
    "linalg.qr": [s(RECT)],
    "linalg.pinv": [s(RECT)],
    "linalg.matrix_power": [s(SQUARE, n=3)],
    "linalg.matrix_rank": [s(RECT)],
    "linalg.norm": [s(F), s(F, axis=1, ord=1)],
    "linalg.multi_dot": [s(F, F.T, F)],
    "linalg.lstsq": [s(RECT, np.arange(5.0))],
    # fft
    **{f"fft.{name}": [s(F, axis=1), s(V, n=8)] for name in ("fft", "ifft", "rfft", "ihfft")},
    **{f"fft.{name}": [s(CPLX, axis=1), s(CPLX[0], n=8)] for name in ("irfft", "hfft")},
    **{f"fft.{name}": [s(F)] for name in ("fft2", "ifft2", "fftn", "ifftn", "rfft2",
                                          "rfftn")},
    **{f"fft.{name}": [s(CPLX)] for name in ("irfft2", "irfftn")},
    "fftfreq": [s(n=8, d=0.5)],
    "rfftfreq": [s(n=9)],
    # shaping
    "tile": [s(SMALL, reps=(2, 2))],
    "repeat": [s(F, repeats=2, axis=0), s(SMALL, repeats=np.arange(10))],
    "roll": [s(F, shift=2, axis=1), s(I, shift=-3)],
    "pad": [s(F, pad_width=((1, 0), (2, 1))), s(SMALL, pad_width=2, mode="edge"),
            s(F, pad_width=1, mode="median")],
    "tril": [s(F, k=1)],
    "triu": [s(F, k=-1)],
    "diag": [s(V), s(F, k=1)],
    "diagonal": [s(STACK, offset=0, axis1=1, axis2=2)],
    "trace": [s(F)],
    "indices": [s(dimensions=(2, 3)), s(dimensions=(2, 3), sparse=True)],
    # selection and indexing
    "take": [s(F, np.array([2, 0, -1]), axis=1), s(F, np.array([[1, 5], [0, 7]])),
             s(SMALL, np.array([12, -13]), mode="wrap"), s(SMALL, np.array([12, -3]),
                                                           mode="clip")],
    "take_along_axis": [s(F, np.argsort(F, axis=1), axis=1)],
    "choose": [s(np.array([0, 1, 2, 1]), V[:4], SORTED[:4], -V[:4])],
    "put": [s(F, np.array([0, 5, 23]), np.array([9.0, 8.0, 7.0]))],
    "put_along_axis": [s(F, np.array([[0], [1], [2], [3]]), np.array([[-1.0]]), axis=1)],
    "take_index": [s(F, key=(slice(1, 3), np.array([0, 2, 5]))), s(F, key=MASK),
                   s(F, key=(Ellipsis, None, 2))],
    "assign_index": [s(F, np.float64(5), key=(slice(None), 1)),
                     s(F, V[:4], key=(slice(None), np.array(2))),
                     s(I, np.array([7, 8]), key=(np.array([0, 3]), np.array([1, 1])))],
    # masked writes (the target is input 0; copyto's src and where broadcast into it)
    "putmask": [s(F, MASK, np.array([9.0, 8.0, 7.0])), s(I, MASK.ravel(), I[::-1] * 2),
                s(F, MASK, np.empty(0))],
    "place": [s(F, MASK, np.array([9.0, 8.0, 7.0])), s(I, MASK.ravel(), np.array([5, 6])),
              s(F, MASK & False, np.empty(0))],
    "copyto": [s(F, V[:6], MASK), s(I, F, np.array(True), casting="unsafe"),
               s(F32, np.float64(2.5), MASK[0]), s(I, 7, True, casting="safe")],
    "select": [s(MASK, ~MASK, F, I, np.float64(-1.0), count=2),
               s(MASK, I, np.arange(6.0), count=1), s(MASK[0], V[:6], np.int8(3), count=1)],
    # NumPy's i0, unwrap, sort_complex and the NumPy 2 vector-matrix products
    "i0": [s(V), s(F32)],
    "unwrap": [s(F * 4, axis=0), s(V * 3, discont=2.5, period=4.0)],
    "sort_complex": [s(CPLX[0]), s(SMALL)],
    "vecdot": [s(F, F[::-1]), s(CPLX, CPLX[::-1])],
    "matvec": [s(STACK, np.arange(3.0)), s(F, V[:6])],
    "vecmat": [s(np.arange(3.0), STACK), s(V[:4], F)],
    # autograd's op for a user's NumPy gradient: (output grads, outputs, inputs)
    "user_gradient": [s(np.ones(7), V ** 2, V, 2.0, gradient=lambda g, inputs, out, k=1: [
        g * 2 * inputs[0] * k, None], params={"k": 3}, num_outputs=1, arrays=(True, False))],
    # movement and creation
    "copy": [s(I, dtype=np.float32), s(V, shape=(3, 7)), s(2.5, shape=(2, 2))],
    "concatenate": [s(F, I, axis=1), s(F, F32, axis=None)],
    "stack": [s(V, SORTED.repeat(2)[:7], axis=1)],
    "split": [s(F, indices_or_sections=2, axis=0), s(F, indices_or_sections=[1, 4], axis=1)],
    "fill": [s(value=7, shape=(2, 3), dtype=np.uint8), s(value=np.arange(3.0), shape=(2, 3))],
    "arange": [s(start=2, stop=11, step=3), s(start=0.5, stop=2.0, step=0.25,
                                              dtype=np.float32)],
    "linspace": [s(start=-1.0, stop=1.0, num=9), s(start=np.zeros(2), stop=np.ones(2), num=4)],
    "eye": [s(N=3, M=4, k=1, dtype=np.int32)],
    "ufunc_method": [s(F, ufunc=np.add, method="reduce", axis=1),
                     s(F, ufunc=np.maximum, method="reduce", axis=0, initial=0.5),
                     s(F, ufunc=np.multiply, method="accumulate", axis=0),
                     s(V, SORTED, ufunc=np.subtract, method="outer"),
                     s(V, ufunc=np.add, method="reduceat", indices=np.array([0, 3, 5])),
                     s(SMALL, 1, ufunc=np.add, method="at", index=np.array([0, 0, 4]))],
}

# the random ops: the same seeded generator on both devices
ORDER = np.empty(0, np.uint8)  # the array that orders a device's draws (ops/families/random.py)
RANDOM = {
    "random_uniform": [s(low=-1.0, high=2.0, shape=(3, 4)), s(shape=(5,), dtype=np.float32),
                       s(low=np.array([0.0, 10.0]), high=11.0, shape=(3, 2))],
    "random_normal": [s(loc=1.0, scale=2.0, shape=(6,))],
    "random_randint": [s(low=0, high=10, shape=(2, 3)), s(low=-5, shape=(4,), high=5,
                                                          dtype=np.int8)],
    "random_method": [s(ORDER, method="integers", low=0, high=5, size=(3,)),
                      s(ORDER, method="normal", loc=0.0, scale=1.0, size=(2, 2)),
                      s(ORDER, method="choice", a=10, size=(4,), replace=False),
                      s(ORDER, method="permutation", x=6)],
    "random_order": [s()],
}
