"""Element-wise ufuncs whose computation differs from their NumPy loop, or with two outputs.

* logical_and/or/xor: NumPy's loops test each input for truth (``x != 0``, NaN true); we
  cast the inputs to bool and run one bool loop, so there is one compiled loop instead of
  one per dtype.  The output dtype and the errors are still the ufunc's (``dtype=float64``
  is NumPy's TypeError).
* signbit: NumPy computes the sign of a bool/int8/uint8 input in float16, which ndengine
  lacks; float32 holds those values exactly, so the answer is the same.
* divmod: two outputs; NumPy's own divmod runs inside the pushed op on operands cast as
  NumPy casts them.
"""
from __future__ import annotations

import math

import numpy as np

from .dtype_rules import resolve_like
from .operators import ElementwiseSpec
from .runs import as_operand, nothing_run
from ..outputs import write_with_req
from ..plans import OpReq

__all__ = ["LogicalSpec", "SignbitSpec", "DivmodSpec"]

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


class DivmodSpec(ElementwiseSpec):
    """divmod(x1, x2) -> (x1 // x2, x1 % x2): NumPy's divmod on the cast operands."""

    def infer(self, *inputs, **params):
        [(shape, dtype)] = super().infer(*inputs, **params)
        return [(shape, dtype), (shape, dtype)]

    def make_run(self, inputs, params, computation, shape, out_dtype, target, aliases, req):
        if math.prod(shape) == 0:
            return nothing_run
        divmod_ufunc = self.ufunc

        def run(inputs, outputs, req, params):
            operands = [as_operand(v, dtype) for v, dtype in zip(inputs, computation)]
            if all(r in _PLAIN_REQS for r in req):
                divmod_ufunc(*operands, out=tuple(outputs))  # copes with overlap
                return
            results = tuple(np.empty(out.shape, out.dtype) for out in outputs)
            divmod_ufunc(*operands, out=results)
            for out, r, result in zip(outputs, req, results):
                write_with_req(out, r, lambda target, result=result: np.copyto(target, result))
        return run
