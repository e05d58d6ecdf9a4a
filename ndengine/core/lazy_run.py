"""The engine op of a flushed lazy window (lazy.py): the fused kernel of its program, or its
ops one by one.

`FusedRun` runs the window's program through ``ops.fusion.kernel``'s kernel, looked up in the program
cache (`_programs`, keyed by the window's structure: op names, plan keys, how arguments
connect, which nodes are outputs), or each op alone with its own plan and the engine's failure
rule per op: the first time a structure on arrays under ``BUILD_AT_ONCE_ELEMENTS`` is seen,
when the program cannot be fused, when one of its leaves failed, or when the kernel raised.
The window's fields it takes are described in lazy.py; the module docstring there says when
each way is taken and why.

Program cache, module-wide
    _programs        window key -> FusedKernel; None when the program cannot be fused;
                     ``_SEEN_ONCE`` after a first sight of a small structure. Cleared whole
                     past ``_PROGRAMS_LIMIT`` entries.
    _program_counts  hits, misses and unfusible programs since the process began.
"""
import math

import numpy as np

from ..ops import OpReq
from ..ops.fusion.kernel import NotFusible, ProgramBuilder, kernel_for
from ..ops.fusion.builder import Const
from ..ops.fusion.program import ArraySpec
from ..ops.gpu.fusion import kernel_for as gpu_kernel_for
from . import fp_errors as _fp
from . import gpu as _gpu
from . import storage

__all__ = ["FusedRun", "program_stats", "BUILD_AT_ONCE_ELEMENTS"]

BUILD_AT_ONCE_ELEMENTS = 1 << 20
_PROGRAMS_LIMIT = 1024
_programs = {}
_program_counts = {"hits": 0, "misses": 0, "unfusible": 0}
_UNSEEN, _SEEN_ONCE = object(), object()
_WRITE_TO = [OpReq.WRITE_TO]
_fp_kept, _fp_messages = _fp.KEPT, _fp.MESSAGES


def _program_for(key, nodes, leaves, out_nodes, scalars, ctx):
    """The cached kernel of a window structure, or None: when its program cannot be fused,
    and the first time a structure of small arrays is seen (one that never repeats, e.g. a
    loop over random cells, would pay a program build, ~50 us an op, per window: its ops run
    one by one instead). Arrays of ``BUILD_AT_ONCE_ELEMENTS`` or more are worth a build at
    once. On a GPU the kernel is CUDA's (ops.gpu.fusion), on a fake GPU there is none."""
    if ctx.device_type != "cpu":
        key = (key, ctx.device_type)
    kernel = _programs.get(key, _UNSEEN)
    if kernel is not _UNSEEN and kernel is not _SEEN_ONCE:
        _program_counts["hits"] += 1
        return kernel
    _program_counts["misses"] += 1
    if kernel is _UNSEEN and math.prod(nodes[0].shape) < BUILD_AT_ONCE_ELEMENTS:
        if len(_programs) >= _PROGRAMS_LIMIT:
            _programs.clear()
        _programs[key] = _SEEN_ONCE
        return None
    builder = ProgramBuilder()
    ids = [builder.array(ArraySpec(x.shape, x.dtype)) for x in leaves]
    node_ids = []
    try:
        for node in nodes:
            args = []
            for kind, value in node.refs:
                if kind == "l":
                    args.append(ids[value])
                elif kind == "n":
                    args.append(node_ids[value])
                else:
                    args.append(Const(value) if type(value) is int else value)
            if node.tail:
                break
            node_ids.append(builder.apply(node.name, *args, **node.params))
        tail = nodes[-1]
        reduction = None
        if tail.tail and len(nodes) - 1 in out_nodes:
            reduction = (tail.name, node_ids[tail.refs[0][1]], tail.params["axis"],
                         tail.params["keepdims"])
        program = builder.build(outputs=[node_ids[i] for i in out_nodes
                                         if not nodes[i].tail], reduction=reduction)
        kernel = kernel_for(program) if ctx.device_type == "cpu" else \
            gpu_kernel_for(program, _gpu.xp(ctx))
    except (NotFusible, TypeError, ValueError):
        _program_counts["unfusible"] += 1
        kernel = None
    if len(_programs) >= _PROGRAMS_LIMIT:
        _programs.clear()
    _programs[key] = kernel
    return kernel


def program_stats():
    """Window programs: {"hits", "misses", "unfusible", "cached"} since the process began."""
    return {**_program_counts, "cached": len(_programs)}


class FusedRun:
    """The engine op of a flushed lazy window (see the module docstring)."""

    __slots__ = ("engine", "ctx", "nodes", "leaves", "scalars", "key", "reads", "writes",
                 "outputs", "out_nodes", "ran", "name", "names", "origin", "used", "prop",
                 "fuse", "kernel", "work")

    def __init__(self, window, reads, writes, outputs, out_nodes, prop, work):
        self.engine = window.engine
        self.ctx = window.ctx
        self.nodes = nodes = window.nodes
        self.leaves = window.leaves
        self.scalars = window.scalars
        self.key = (tuple(window.key), tuple(out_nodes))
        self.reads = tuple(reads)
        self.writes = tuple(writes)
        self.outputs = outputs
        self.out_nodes = out_nodes
        self.ran = False
        self.names = [node.name for node in nodes]
        self.prop = prop  # the engine's placement: inline or a worker (lazy.py decides)
        self.work = work  # what the engine's back-pressure counts it as (lazy.py decides)
        self.name = nodes[0].name if len(nodes) == 1 else f"fused {len(nodes)} ops"
        self.origin = nodes[0].origin
        self.used = None
        self.kernel = None  # the FusedKernel that ran it

    def describe(self):
        """Profiler arguments: the member ops in order, how they ran, the window program
        cache's counters, and the kernel's (its evaluators' runs, compile or load times)."""
        info = {"ops": self.names, "ran": self.used, "programs": program_stats()}
        if self.kernel is not None:
            info["kernel"] = self.kernel.stats()
        return info

    def __call__(self, run_ctx):
        if self.ran:
            return  # pushed again after a Ctrl-C cut its first push short: it ran already
        self.ran = True
        try:
            if run_ctx.stream is not None:  # a GPU's window: its work goes on its stream
                with run_ctx.stream:
                    self._run(run_ctx.stream)
            else:
                self._run(None)
        finally:  # the engine may keep the op a while: its arrays need not wait for that
            self.leaves = self.outputs = self.nodes = ()

    def _run(self, stream):
        fp = self._one_state()
        if fp is not None and not (self.engine.any_failed(self.reads)
                                   or self.engine.any_failed(self.writes)):
            kernel = _program_for(self.key, self.nodes, self.leaves, self.out_nodes,
                                  self.scalars, self.ctx)
            if kernel is not None:
                arrays = [x._data() for x in self.leaves]
                outs = [x._data() for x in self.outputs]
                token = _fp.set_state(fp.run_state)
                try:
                    kernel(arrays, self.scalars, outs, compile_after=2)
                    self.used, self.kernel = "fused", kernel
                except Exception:  # noqa: BLE001 - op by op finds the op and its line
                    _fp.take_messages()  # op by op reports them again
                finally:
                    _fp.reset_state(token)
                if self.used == "fused":
                    if _fp_kept or _fp_messages:
                        self._fused_reports(fp)
                    return
        self.used = "op by op"
        self._op_by_op(stream)

    def _one_state(self):
        """The NumPy error state every op was pushed under, or None: they differ, or it
        raises (op by op, each op reports, or raises at its own op, as alone; a fused run
        reports after its whole window ran, an error named after the first op that can
        raise it)."""
        fp = self.nodes[0].fp
        for node in self.nodes:
            if node.fp is not fp:
                return None
        return None if fp.raises else fp

    def _fused_reports(self, fp):
        """After the fused kernel: reports kept with the leaves pass to the outputs computed
        from them; the kernel's own (NumPy's evaluator, or the generated kernel's flags reported
        by ops/fusion/fp_report.py) go to the outputs computed from the first op of the ufunc named, at
        that op's line."""
        leaves_of, nodes_of = self._lineage()
        outs = list(zip(self.out_nodes, self.outputs))
        if _fp_kept:
            for node, out in outs:
                _fp.inherit([self.leaves[i] for i in leaves_of[node]], [out])
        if _fp_messages:
            first = {}
            for index, node in enumerate(self.nodes):
                first.setdefault(_fp.ufunc_name(node.name), index)
            culprits = [first.get(name, 0) for name in _fp.pending_ufuncs()]
            targets = [out for node, out in outs if any(c in nodes_of[node] for c in culprits)]
            _fp.collect(fp, targets or self.outputs, origin_of=lambda name: self.nodes[
                first.get(name, 0)].origin)

    def _op_reports(self, index):
        """Op ``index`` ran alone: its reports, and those kept with the leaves it read, go to
        the outputs computed from it."""
        leaves_of, nodes_of = self._lineage()
        targets = [out for node, out in zip(self.out_nodes, self.outputs)
                   if index in nodes_of[node]]
        if _fp_kept:
            _fp.inherit([self.leaves[i] for i in leaves_of[index]], targets)
        if _fp_messages:
            node = self.nodes[index]
            _fp.collect(node.fp, targets, node.origin)

    def _lineage(self):
        """Per node: the leaf indices and the node indices its value was computed from."""
        leaves_of, nodes_of = [], []
        for index, node in enumerate(self.nodes):
            leaves, nodes = set(), {index}
            for kind, value in node.refs:
                if kind == "l":
                    leaves.add(value)
                elif kind == "n":
                    leaves |= leaves_of[value]
                    nodes |= nodes_of[value]
            leaves_of.append(leaves)
            nodes_of.append(nodes)
        return leaves_of, nodes_of

    def _op_by_op(self, stream):
        """Each op alone, in push order, with the engine's failure rule per op."""
        engine = self.engine
        failures, scratch, fp = [], {}, [None, None]  # fp: the state set, its token
        try:
            self._each_op(engine.any_failed(self.reads), failures, scratch, stream, fp)
        finally:
            if fp[1] is not None:
                _fp.reset_state(fp[1])
            for buffer in scratch.values():  # pool buffers: faulted in, as ops' outputs are
                _free(buffer, self.ctx, stream)
        reported = {}
        for node, var in zip(self.out_nodes, self.writes):
            failure = failures[node]
            if failure is None:
                continue
            if failure[0] == "var":
                engine.inherit_failure((failure[1],), (var,))
            else:
                reported.setdefault(id(failure), (failure, []))[1].append(var)
        for (_, exc, name, origin), writes in reported.values():
            engine.fail_part(writes, exc, name, origin)

    def _each_op(self, check, failures, scratch, stream, fp):
        """Run the ops in order; ``failures[i]``: None, ("var", failed var read) or
        ("raised", exc, name, origin); ``scratch``: node -> the pool buffer of its value,
        while a later op reads it (then it goes back, warm in cache, for the next op);
        ``fp``: [the NumPy error state set, its token], set once per run of ops pushed
        under one state."""
        engine, ctx = self.engine, self.ctx
        leaves = [x._data() for x in self.leaves]
        dest_of = {node: out for node, out in zip(self.out_nodes, self.outputs)}
        last_use = {}
        for i, node in enumerate(self.nodes):
            for kind, value in node.refs:
                if kind == "n":
                    last_use[value] = i
        values = []
        for node in self.nodes:
            failure, args = None, []
            for kind, value in node.refs:
                if kind == "l":
                    var = self.leaves[value]._chunk.var
                    if check and failure is None and engine.any_failed((var,)):
                        failure = ("var", var)
                    args.append(leaves[value])
                elif kind == "n":
                    failure = failure or failures[value]
                    args.append(values[value])
                else:
                    args.append(value)
            result = None
            if failure is None:
                target = dest_of.get(len(values))
                if target is None:
                    buffer = storage.alloc(node.dtype.itemsize * math.prod(node.shape), ctx)
                    scratch[len(values)] = buffer
                    result = _scratch_view(buffer, node, ctx)
                else:
                    result = target._data()
                if node.fp is not fp[0]:
                    if fp[1] is not None:
                        _fp.reset_state(fp[1])
                    fp[0], fp[1] = node.fp, _fp.set_state(node.fp.run_state)
                try:
                    node.plan.run(args, [result], _WRITE_TO, node.params)
                except Exception as exc:  # noqa: BLE001 - kept on the outputs it reaches
                    failure = ("raised", exc, node.name, node.origin)
                if _fp_messages or _fp_kept:
                    self._op_reports(len(values))
            index = len(values)
            values.append(result)
            failures.append(failure)
            for kind, value in node.refs:
                if kind == "n" and last_use[value] == index and value in scratch:
                    values[value] = None
                    _free(scratch.pop(value), ctx, stream)


def _scratch_view(buffer, node, ctx):
    """A node's value array over a pool buffer (the device's array type on a GPU)."""
    if ctx.device_type == "cpu":
        return np.ndarray(node.shape, node.dtype, buffer)
    return _gpu.backend(ctx).view(buffer, node.shape, node.dtype, 0, None)


def _free(buffer, ctx, stream):
    """Give a scratch buffer back, fenced by an event of this op's stream on a GPU."""
    storage.free(buffer, ctx, None if stream is None else stream.record())
