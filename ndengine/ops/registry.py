"""The operator registry: what an op is, how to add one, how to look one up."""
from __future__ import annotations

import difflib
import math
import os
import threading
from typing import Callable

import numpy as np

from .dtypes import EXTENDED_DTYPES, check_dtype, is_array_spec, is_python_scalar, result_type
from .plans import KernelRun, OpReq, Plan, PlanMemo, numpy_aliases, signature
from .shapes import broadcast_shapes, shape_of

KINDS = ("unary", "binary", "reduce", "creation", "random", "other")
DEVICES = ("cpu", "gpu")


class Operator:
    """A registered operator: shape/dtype inference, kernels per device, metadata.

    ``infer(*inputs, **params)`` returns one ``(shape, dtype)`` per output.
    A kernel is called as ``kernel(inputs, outputs, req, **params)``.

    Every call goes through ``plan`` (see ``ops.plans``): a Plan per call signature, built
    once by the general path (``build_plan``) and reused.  ``planner``, when given (the
    built-in ops), builds the plan: ``planner(op, inputs, params, target, aliases, req)``;
    the op's cpu kernel is then the plan's run.  Without one (a user's op), the plan's
    outputs are ``infer``'s and its run calls the device's kernel with the params.
    ``scalars_by_type``: Python/NumPy scalar inputs are keyed by type (the planner's checks
    cover their values); otherwise by value.  ``extended_dtypes``: the op computes float16
    and complex arrays (``dtypes.EXTENDED_DTYPES``); any other op refuses them at its plan.
    ``value_params``: params keyed by type when they are scalars (read per call);
    ``unkeyed_params``: params that change no decision. ``sized_by_outputs``: the op's work
    is the size of its outputs, whatever the size of its inputs (a gather: ``x[index]``
    reads as many elements as it writes), so its plan's ``elements`` counts its outputs only
    (where the op runs is decided by that count).

    Devices other than "cpu" (see ``ops.gpu.kernels``): a kernel installed with
    ``set_device_planner(device, planner)`` reuses the CPU inference exactly: the plan for
    ``device`` is ``Plan(cpu_plan.outputs, planner(op, inputs, params, cpu_plan),
    cpu_plan.check)``, so the outputs, dtypes and errors at the call are the CPU's.  A kernel
    given with ``set_kernel(device, fn)`` (a user's) replaces it and takes the general path.
    """

    def __init__(self, name: str, *, num_inputs=1, num_outputs=1, kind="other",
                 infer: Callable | None = None, inplace=(), gradient=None,
                 write_mode=OpReq.WRITE_TO, doc=None, planner: Callable | None = None,
                 scalars_by_type=False, value_params=(), unkeyed_params=(),
                 extended_dtypes=False, sized_by_outputs=False):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.name = name
        self.num_inputs = num_inputs
        self.num_outputs = num_outputs
        self.kind = kind
        self._infer = infer or default_infer
        self.kernels: dict[str, Callable] = {}
        self.inplace = tuple(tuple(pair) for pair in inplace)
        self.gradient = gradient
        self.write_mode = OpReq(write_mode)
        self.doc = doc
        self.planner = planner
        self.scalars_by_type = scalars_by_type and planner is not None
        self.value_params = frozenset(value_params)
        self.unkeyed_params = frozenset(unkeyed_params)
        self.extended_dtypes = extended_dtypes
        self.sized_by_outputs = sized_by_outputs
        # memos: device -> PlanMemo; plans: the cpu memo's ``recent`` dict, which the NDArray
        # layer reads directly
        self._forget_plans()
        self._device_planners: dict = {}  # device -> planner of the tables' kernel
        self._device_kernels: dict = {}   # device -> the kernel standing for that planner
        if planner is not None:
            self.kernels["cpu"] = self._planned_kernel = self._make_planned_kernel()

    def __repr__(self):
        return f"<Operator {self.name} kind={self.kind} devices={sorted(self.kernels)}>"

    def count_outputs(self, *inputs, **params) -> int:
        if callable(self.num_outputs):
            return int(self.num_outputs(*inputs, params))
        return self.num_outputs

    # ------------------------------------------------------------ plans

    def plan(self, inputs, params=None, *, key=None, target=None, aliases=None, req=None,
             device="cpu") -> Plan:
        """The plan for this call: one dict lookup when the signature was seen before.
        ``target``/``aliases``/``req``: the given write target (an array spec), the alias
        code of each input against it (``plans.NO_ALIAS``, ``SAME_VIEW``, ``OVERLAP``) and
        the write requests, when they are not fresh outputs written plainly.  ``key``: the
        signature, when the caller computed it."""
        if params is None:
            params = {}
        memo = self.memos.get(device)
        if memo is None:
            memo = self.memos.setdefault(device, PlanMemo())
        try:
            if key is None:
                key = signature(self, inputs, params, target, aliases, req)
            found = memo.recent.get(key)
        except TypeError:  # an unhashable param or input: a plan for this call only
            return self.build_plan(inputs, params, target, aliases, req, device)
        if found is None:
            found = memo.find(key)
            if found is None:
                found = self.build_plan(inputs, params, target, aliases, req, device)
                memo.keep(key, found)
            if device == "cpu":
                self.plans = memo.recent  # a new dict after a turnover
        return found

    def build_plan(self, inputs, params=None, target=None, aliases=None, req=None,
                   device="cpu") -> Plan:
        """The general path, uncached: inference (raising every error), checks, kernel."""
        if params is None:
            params = {}
        plan = self._build_plan(inputs, params, target, aliases, req, device)
        sizes = [math.prod(shape) for shape, _ in plan.outputs]
        if not self.sized_by_outputs:
            sizes.extend(math.prod(shape_of(x)) for x in inputs if is_array_spec(x))
        plan.elements = max(sizes, default=0)
        return plan

    def _build_plan(self, inputs, params, target, aliases, req, device) -> Plan:
        kernel = self.kernels.get(device)
        if kernel is None and device != "cpu" and "cpu" in self.kernels:
            # a user's op with a CPU kernel only: that kernel, on host copies of the values
            from .host_fallback import host_planner
            cpu_plan = self.plan(inputs, params, target=target, aliases=aliases, req=req,
                                 device="cpu")
            return Plan(cpu_plan.outputs, host_planner(self, inputs, params, cpu_plan),
                        cpu_plan.check)
        if kernel is None:
            raise NotImplementedError(f"{self.name} has no {device} kernel yet")
        if device != "cpu" and kernel is self._device_kernels.get(device):
            cpu_plan = self.plan(inputs, params, target=target, aliases=aliases, req=req,
                                 device="cpu")
            run = self._device_planners[device](self, inputs, params, cpu_plan)
            return Plan(cpu_plan.outputs, run, cpu_plan.check)
        if self.planner is not None and kernel is self._planned_kernel:
            self._check_inputs(inputs)
            plan = self.planner(self, inputs, params, target, aliases, req)
        else:
            plan = Plan(self.general_infer(inputs, params), kernel_run(kernel))
        if not self.extended_dtypes:
            self._refuse_extended([dtype for _, dtype in plan.outputs])
        return plan

    def _forget_plans(self):
        self.memos = {"cpu": PlanMemo()}
        self.plans = self.memos["cpu"].recent

    def _make_planned_kernel(self):
        def kernel(inputs, outputs, req, **params):
            """Run the plan of this call on NumPy arrays (tests, eager use, benchmarks)."""
            target = aliases = None
            if len(outputs) == 1 and type(outputs[0]) is np.ndarray:
                target = outputs[0]
                aliases = numpy_aliases(inputs, target)
            plan = self.plan(inputs, params, target=target, aliases=aliases,
                             req=req[0] if len(req) == 1 else None)
            if plan.check is not None:
                plan.check(inputs, params)
            plan.run(inputs, outputs, req, params)
        return kernel

    # ------------------------------------------------------------ inference

    def infer(self, *inputs, **params) -> list[tuple[tuple, np.dtype]]:
        """Output (shape, dtype) pairs; raises on bad shapes, dtypes, params or values."""
        plan = self.plan(inputs, params)
        if plan.check is not None:
            plan.check(inputs, params)
        return list(plan.outputs)

    def general_infer(self, inputs, params) -> list[tuple[tuple, np.dtype]]:
        """The op's own inference, no plan, no memo: what every plan's outputs come from."""
        self._check_inputs(inputs)
        results = self._infer(*inputs, **params)
        return [(tuple(int(n) for n in shape), check_dtype(dtype)) for shape, dtype in results]

    def _check_inputs(self, inputs):
        if self.num_inputs is not None and len(inputs) != self.num_inputs:
            raise TypeError(f"{self.name} takes {self.num_inputs} inputs, got {len(inputs)}")
        dtypes = []
        for value in inputs:
            if is_array_spec(value):
                dtypes.append(check_dtype(value.dtype))
            elif isinstance(value, complex):
                dtypes.append(np.dtype(complex))
            elif not is_python_scalar(value):
                raise TypeError(f"{self.name}: inputs must be array specs or Python "
                                f"bool/int/float/complex, got {type(value).__name__}")
        if not self.extended_dtypes:
            self._refuse_extended(dtypes)

    def _refuse_extended(self, dtypes):
        for dtype in dtypes:
            if dtype in EXTENDED_DTYPES:
                raise TypeError(f"{self.name} does not support dtype {dtype} yet; meanwhile "
                                f"call NumPy's on a NumPy copy (x.asnumpy())")

    def set_kernel(self, device: str, kernel: Callable) -> "Operator":
        if device not in DEVICES:
            raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
        self.kernels[device] = kernel
        self._forget_plans()  # plans hold the kernel they run
        return self

    def set_device_planner(self, device: str, planner: Callable) -> "Operator":
        """Install ``device``'s kernel as a planner over the CPU plan (see the class doc):
        ``planner(op, inputs, params, cpu_plan)`` returns the run for that signature.
        ``kernels[device]`` becomes a kernel that plans and runs (eager use); a later
        ``set_kernel(device, fn)`` overrides it."""
        if device == "cpu" or device not in DEVICES:
            raise ValueError(f"device must be one of {DEVICES[1:]}, got {device!r}")
        kernel = self._make_device_kernel(device)
        self.kernels[device] = kernel
        self._device_planners[device] = planner
        self._device_kernels[device] = kernel
        self._forget_plans()
        return self

    def _make_device_kernel(self, device):
        def kernel(inputs, outputs, req, **params):
            """Plan this call for the device (the CPU's inference) and run it."""
            plan = self.plan(inputs, params, req=req[0] if len(req) == 1 else None,
                             device=device)
            if plan.check is not None:
                plan.check(inputs, params)
            plan.run(inputs, outputs, req, params)
        return kernel

    def set_gradient(self, gradient: Callable) -> "Operator":
        self.gradient = gradient
        return self

    def apply(self, *inputs, device="cpu", **params) -> list:
        """Plan, allocate the outputs and run now (for tests and eager use).  The outputs are
        NumPy arrays on the CPU; on another device, arrays of the inputs' array module
        (``outputs.array_module``: CuPy's for CuPy inputs, else NumPy's)."""
        plan = self.plan(inputs, params, device=device)
        if plan.check is not None:
            plan.check(inputs, params)
        xp = np
        if device != "cpu":
            from .host_fallback import inputs_module
            xp = inputs_module(inputs)
        outputs = [xp.empty(shape, dtype) for shape, dtype in plan.outputs]
        plan.run(list(inputs), outputs, [OpReq.WRITE_TO] * len(outputs), params)
        return outputs


def numpy_backed(name: str, **options) -> Operator:
    """An Operator whose kernel runs NumPy's own function (dtypes probed or promoted as NumPy
    does): it computes float16 and complex as NumPy does (``extended_dtypes``)."""
    return Operator(name, extended_dtypes=True, **options)


def kernel_run(kernel):
    """A plan's run for a kernel registered as ``kernel(inputs, outputs, req, **params)``."""
    return KernelRun(kernel)


def default_infer(*inputs, **params):
    """One output: inputs broadcast together, NumPy 2 result_type (weak Python scalars)."""
    shape = broadcast_shapes(*(shape_of(v) for v in inputs))
    return [(shape, result_type(*inputs))]


_registry: dict[str, Operator] = {}
_registry_lock = threading.Lock()


def _new_registry_lock_in_child():
    # A fork copies the lock in whatever state another thread held it: the child's only
    # thread would block forever on its first registration.
    global _registry_lock
    _registry_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_registry_lock_in_child)


def add_operator(op: Operator, *, replace=False) -> Operator:
    with _registry_lock:
        if op.name in _registry and not replace:
            raise ValueError(f"operator {op.name!r} is already registered; "
                             f"pass replace=True to override it")
        _registry[op.name] = op
    return op


def register(name: str, *, num_inputs=1, num_outputs=1, kind="other", infer=None,
             inplace=(), gradient=None, write_mode=OpReq.WRITE_TO, device="cpu",
             doc=None, replace=False):
    """Decorator: register the decorated function as ``name``'s kernel for ``device``.

    Returns the Operator, so ``op.set_kernel("gpu", fn).set_gradient(g)`` chains.
    """
    def decorate(kernel: Callable) -> Operator:
        op = Operator(name, num_inputs=num_inputs, num_outputs=num_outputs, kind=kind,
                      infer=infer, inplace=inplace, gradient=gradient,
                      write_mode=write_mode, doc=doc or kernel.__doc__)
        op.set_kernel(device, kernel)
        return add_operator(op, replace=replace)
    return decorate


# the registry as the per-op path reads it (one dict lookup, no call): name -> Operator; a name
# missing there goes through `get`, whose KeyError suggests close names. Never written but here.
OPERATORS = _registry


def get(name: str) -> Operator:
    try:
        return _registry[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_registry), n=5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no operator named {name!r}{hint} "
                       f"(ndengine.ops.names() lists all {len(_registry)})") from None


def names() -> list[str]:
    return sorted(_registry)
