"""Element-wise ufuncs whose computation differs from their NumPy loop, or with two outputs.

* logical_and/or/xor: NumPy's loops test each input for truth (``x != 0``, NaN true); we
  cast the inputs to bool and run one bool loop, so there is one compiled loop instead of
  one per dtype.  The output dtype and the errors are still the ufunc's (``dtype=float64``
  is NumPy's TypeError).
* signbit: NumPy computes the sign of a bool/int8/uint8 input in float16, which ndengine
  lacks; float32 holds those values exactly, so the answer is the same.
* divmod, frexp, modf (two outputs) and gcd, lcm, ldexp, spacing, bitwise_count (no Numba
  scalar, no NumPy loop in ``runs``): ``UfuncLoopSpec``, NumPy's own ufunc run inside the
  pushed op on operands cast as NumPy casts them; each output has the dtype of NumPy's loop
  (frexp: the mantissa's float and int32 exponents).
"""
from __future__ import annotations

import math

import numpy as np

from .dtype_rules import resolve_like
from .operators import ElementwiseSpec
from .runs import as_operand, nothing_run
from ..outputs import write_with_req
from ..plans import OpReq

__all__ = ["LogicalSpec", "SignbitSpec", "UfuncLoopSpec"]

_BOOL = np.dtype(bool)
_FLOAT32 = np.dtype(np.float32)
_PLAIN_REQS = (OpReq.WRITE_TO, OpReq.WRITE_INPLACE)


class LogicalSpec(ElementwiseSpec):
    """logical_and/or/xor: inputs cast to bool (the truth NumPy's loops test)."""

    def resolve(self, inputs, params):
        computation, out = super().resolve(inputs, params)  # the ufunc's errors
        return [_BOOL] * len(computation), out


class SignbitSpec(ElementwiseSpec):
    """signbit: a float16 computation (bool, int8, uint8 inputs) runs in float32."""

    def resolve(self, inputs, params):
        return resolve_like(self.ufunc, self.name, inputs,
                            params.get("dtype") if params else None, float16_as=_FLOAT32)


class UfuncLoopSpec(ElementwiseSpec):
    """NumPy's ufunc itself on the cast operands, any number of outputs (divmod, frexp, ...)."""

    def infer(self, *inputs, **params):
        [(shape, dtype)] = super().infer(*inputs, **params)  # NumPy's errors, the shape
        if self.ufunc.nout == 1:
            return [(shape, dtype)]
        computation, _ = self.resolve(inputs, params)
        # the loop the computation dtypes pick is the call's: its outputs' dtypes
        loop = self.ufunc.resolve_dtypes((*computation, *(None,) * self.ufunc.nout))
        return [(shape, np.dtype(d)) for d in loop[self.ufunc.nin:]]

    def make_run(self, inputs, params, computation, shape, out_dtype, target, aliases, req):
        if math.prod(shape) == 0:
            return nothing_run
        ufunc = self.ufunc

        def run(inputs, outputs, req, params):
            operands = [as_operand(v, dtype) for v, dtype in zip(inputs, computation)]
            if all(r in _PLAIN_REQS for r in req):
                ufunc(*operands, out=tuple(outputs))  # copes with overlap
                return
            results = tuple(np.empty(out.shape, out.dtype) for out in outputs)
            ufunc(*operands, out=results)
            for out, r, result in zip(outputs, req, results):
                write_with_req(out, r, lambda target, result=result: np.copyto(target, result))
        return run
