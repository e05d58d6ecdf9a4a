"""NumPy's window functions, histogram2d, histogramdd, histogram_bin_edges, packbits and
unpackbits on NDArrays (``WINDOWS_HISTOGRAMS``), each one pushed op whose kernel is NumPy's
own function (``ops.families.windows_histograms``).

Windows (bartlett, blackman, hamming, hanning, kaiser) are creation functions: NumPy's
parameters, and ``ctx=`` as the other creation functions take it (default: the current
context). An NDArray ``M`` or ``beta`` is read at the call (M decides the length).

Histograms take ``bins`` and ``range`` as NumPy does (an int, edges, or one of those per
dimension); an NDArray among them is read at the call, since the edges decide the shapes.
histogram2d returns (H, xedges, yedges) and histogramdd (H, [edges, ...]) as NumPy does;
histogram_bin_edges with a bins rule ('auto', 'fd', ...) waits for its input: the number of
edges depends on the values.
"""
import numpy as np

from ... import ops
from ...engine import Context
from ..arguments import array_of, first_context, frozen, push, read_values
from ..signatures import numpy_function, signed_function

__all__ = ["WINDOWS_HISTOGRAMS"]


def _scalar(value):
    """A scalar argument as an op param: an NDArray is read (its value decides the plan)."""
    value = read_values(value)
    return value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else frozen(value)


def _window(name):
    def implementation(M, beta=None, ctx=None):
        params = {"M": _scalar(M)}
        if name == "kaiser":
            params["beta"] = _scalar(beta)
        return push(name, [], params, ctx=None if ctx is None else Context(ctx))[0]
    parameters = "M, beta, *, ctx=None" if name == "kaiser" else "M, *, ctx=None"
    return signed_function(name, parameters, implementation, keywords=True,
                           doc=f"As ``numpy.{name}``, made on ``ctx`` (default: the current "
                               "context). One pushed op.")


def _histogram_params(bins, range, density, inputs, weights, ctx):
    """Params of a histogram op (bins and range frozen, weights as a named input)."""
    params = {"bins": frozen(read_values(bins)), "range": frozen(read_values(range)),
              "density": density}
    if weights is not None:
        inputs.append(array_of(weights, ctx))
        params["arrays"] = ("weights",)
    return params


def _histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    ctx = first_context(x, y, weights)
    inputs = [array_of(x, ctx), array_of(y, ctx)]
    params = _histogram_params(bins, range, density, inputs, weights, ctx)
    return tuple(push("histogram2d", inputs, params, ctx=ctx))


def _sample_inputs(sample, ctx):
    """histogramdd's sample as NumPy reads it: one (N, D) array, or D coordinate arrays
    -> (inputs, whether they are coordinates, D)."""
    if isinstance(sample, (list, tuple)):
        columns = [array_of(column, ctx) for column in sample]
        if all(column.ndim >= 1 for column in columns):
            return columns, True, max(len(columns), 1)
        sample = np.asarray(read_values(list(sample)))  # numbers: NumPy's one coordinate
    sample = array_of(sample, ctx)
    if sample.ndim == 2:
        return [sample], False, sample.shape[1]
    return [sample], sample.ndim < 2, 1 if sample.ndim < 2 else sample.shape[1]


def _histogramdd(sample, bins=10, range=None, density=None, weights=None):
    ctx = first_context(sample, weights)
    inputs, sequence, dims = _sample_inputs(sample, ctx)
    params = _histogram_params(bins, range, density, inputs, weights, ctx)
    params.update(sequence=sequence, dims=dims)
    hist, *edges = push("histogramdd", inputs, params, ctx=ctx)
    return hist, edges


def _histogram_bin_edges(a, bins=10, range=None, weights=None):
    ctx = first_context(a, weights)
    inputs = [array_of(a, ctx)]
    params = _histogram_params(bins, range, None, inputs, weights, ctx)
    del params["density"]
    if isinstance(bins, str):  # a rule: the number of bins depends on the values
        op = ops.get("histogram_bin_edges")
        op.infer(*inputs, bin_count=0, **params)  # NumPy's errors, before the wait
        count = push("histogram_bin_count", inputs, params, ctx=ctx)[0]
        params["bin_count"] = int(count.item())
    return push("histogram_bin_edges", inputs, params, ctx=ctx)[0]


def _packbits(a, axis=None, bitorder="big"):
    return push("packbits", [array_of(a)], {"axis": axis, "bitorder": bitorder})[0]


def _unpackbits(a, axis=None, count=None, bitorder="big"):
    return push("unpackbits", [array_of(a)],
                {"axis": axis, "count": _scalar(count), "bitorder": bitorder})[0]


_ONE_OP = "One pushed op (NumPy's function runs inside it)."
_ROWS = {
    "histogram2d": (_histogram2d, _ONE_OP + " An NDArray bins or range is read at the call."),
    "histogramdd": (_histogramdd, _ONE_OP + " An NDArray bins or range is read at the call."),
    "histogram_bin_edges": (_histogram_bin_edges, _ONE_OP + " With a bins rule ('auto', "
                            "'fd', ...) it waits for its input: the number of edges depends "
                            "on the values."),
    "packbits": (_packbits, _ONE_OP),
    "unpackbits": (_unpackbits, _ONE_OP),
}

WINDOWS_HISTOGRAMS = {name: _window(name) for name in
                      ("bartlett", "blackman", "hamming", "hanning", "kaiser")}
WINDOWS_HISTOGRAMS.update({name: numpy_function(name, getattr(np, name), implementation, doc)
                           for name, (implementation, doc) in _ROWS.items()})
