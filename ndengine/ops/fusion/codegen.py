"""Generated Numba kernels for fused programs, cached on disk so a second process compiles
nothing.

``kernel_source`` writes one Python module per (program structure, layout, variant): a loop
that computes every node of one element in registers, calling the same Numba scalar
functions as the unfused ops' loops (``elementwise/scalars``; ``fusion/scalars`` where the
registered op runs a NumPy loop, clip), each node's value cast to the node's dtype (Numba
widens small integers; the unfused op would have stored, and wrapped, each result).
Arguments are the leaves (``a*``: flat 1-D arrays, or broadcast n-d views), the scalar
slots (``s*``: each scalar converted to the dtype its op computes in, a runtime value) and
the destinations (``d*``: output arrays, or a reduction's scratch, cast on store).

A kernel returns the processor's FP flags its elements raised, as the unfused ops' loops do
(``fp_flags``): cleared at the start, read at the end; a parallel kernel runs a fixed count
of contiguous parts (``elementwise/loops``' parallel loops: the flags are per thread, the
part's index unsigned so that LLVM vectorises), each part's flags combined. Ops NumPy never
reports for raise none: the compare family computes with ``scalars``' quiet
functions, and the others whose code may raise (``_FLAGS_PUT_BACK``) put back the flags
they found.

Numba's ``cache=True`` needs a real source file ("no locator available for file
'<string>'" for exec'd code): ``load_kernel`` writes the source under the cache directory
(``runtime/disk_cache``'s, subfolder ``fusion``) in a file named by a hash of the source and
of everything the compiled code depends on (the source of the scalar-function and loop
modules, Numba, NumPy and Python versions), and imports it.  The signature is explicit, so
importing compiles (or loads from Numba's cache) exactly one function.  A cache directory
that cannot be written gives way to a temporary directory of this process (and one
``CacheUnavailableWarning``), removed when the process exits.
"""
from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import platform
import shutil
import sys
import tempfile
import threading

import numba
import numpy as np

from ..elementwise import operators as _elementwise
from ..elementwise import loops as _loops
from ..elementwise.loops import source_digest
from ..elementwise import scalars as _elementwise_scalars
from ..runtime import disk_cache as _disk_cache
from ..runtime import fp_flags as _fp_flags
from . import scalars as _fs
from .program import Leaf, OpNode, Scalar

__all__ = ["kernel_source", "kernel_name", "load_kernel", "cache_dir", "writable_dir", "scalar_slots", "CODEGEN_VERSION"]

CODEGEN_VERSION = "4"
_FLOAT_KINDS = "f"


def _dtype_name(dtype: np.dtype) -> str:
    return "bool_" if dtype.kind == "b" else dtype.name


def _numba_type(dtype: np.dtype) -> str:
    return "nt.boolean" if dtype.kind == "b" else f"nt.{dtype.name}"


def _cast(expr: str, source: np.dtype, target: np.dtype) -> str:
    if source == target:
        return expr
    if target.kind == "b":
        return f"fs.to_bool({expr})"
    return f"np.{_dtype_name(target)}({expr})"


def scalar_slots(program) -> list:
    """(scalar node id, dtype, how) per distinct converted scalar a kernel takes; ``how`` is
    "plain", "wrap" (where: C-style wrap of a Python int) or "bound" (clip: clamped)."""
    slots = []
    for node in program.nodes:
        if not isinstance(node, OpNode):
            continue
        wrap = node.name == "where"
        for pos, arg in enumerate(node.args):
            if isinstance(program.nodes[arg], Scalar):
                slot = (arg, node.computation[pos], "wrap" if wrap else "plain")
                if slot not in slots:
                    slots.append(slot)
        for bound in node.bounds:
            if bound is not None:
                slot = (bound, node.computation[0], "bound")
                if slot not in slots:
                    slots.append(slot)
    return slots


# ops NumPy never reports for, computed by functions that raise no FP flag (scalars)
_QUIET_SCALARS = {"maximum": "fs.numpy_maximum", "minimum": "fs.numpy_minimum",
                  "less": "fs.quiet_less", "less_equal": "fs.quiet_less_equal",
                  "greater": "fs.quiet_greater", "greater_equal": "fs.quiet_greater_equal",
                  "sign": "fs.quiet_sign", "relu": "fs.quiet_relu"}
# ops NumPy never reports for whose code may raise flags (exp's overflow in sigmoid): the
# kernel puts back the flags it read before them
_FLAGS_PUT_BACK = frozenset(("sigmoid",))


def _scalar_function(name: str) -> str:
    quiet = _QUIET_SCALARS.get(name)
    if quiet is not None:
        return quiet
    fn = _elementwise.spec(name).scalar
    if getattr(_elementwise_scalars, fn.__name__, None) is not fn:
        raise LookupError(f"{name}'s scalar function is not in elementwise/scalars")
    return f"es.{fn.__name__}"


def _node_expression(program, node: OpNode, value, slot_of) -> str:
    """The expression computing ``node`` from its arguments' values."""
    args = []
    for pos, arg in enumerate(node.args):
        source = program.nodes[arg]
        if isinstance(source, Scalar):
            args.append(slot_of[(arg, node.computation[pos])])
        else:
            args.append(_cast(value[arg], source.dtype, node.computation[pos]))
    if node.name == "copy":
        return _cast(args[0], node.computation[0], node.dtype)
    if node.name in ("clip", "clip_arrays"):
        if node.name == "clip":
            low, high = (None if b is None else slot_of[(b, node.computation[0])]
                         for b in node.bounds)
        else:
            low, high = args[1], args[2]
        if low is not None and high is not None and node.name == "clip_arrays" \
                and not program.clip_bounds_constant(node):
            # NumPy's clip loop for bound arrays is maximum's then minimum's (a tie of signed
            # zeros gives the bound); for constant bounds it keeps x (numpy_clip)
            call = f"fs.numpy_minimum(fs.numpy_maximum({args[0]}, {low}), {high})"
        elif low is not None and high is not None:
            call = f"fs.numpy_clip({args[0]}, {low}, {high})"
        elif low is not None:
            call = f"fs.numpy_maximum({args[0]}, {low})"
        elif high is not None:
            call = f"fs.numpy_minimum({args[0]}, {high})"
        else:
            call = args[0]
        return _cast(call, node.computation[0], node.dtype)
    if (node.name == "power" and node.dtype.kind == "f"
            and isinstance(program.nodes[node.args[1]], Scalar)):
        call = f"fs.scalar_power({', '.join(args)})"  # NumPy's exact exponents
    else:
        call = f"{_scalar_function(node.name)}({', '.join(args)})"
    if node.dtype.kind == "b":
        return f"fs.to_bool({call})"
    return f"np.{_dtype_name(node.dtype)}({call})"


def _signature(program, mode, ndim, slots, dests) -> str:
    layout_code = "C" if mode == "flat" else "A"
    arguments = [f'nt.Array({_numba_type(leaf.dtype)}, {ndim}, "{layout_code}", readonly=True)'
                 for leaf in program.leaves]
    arguments += [_numba_type(dtype) for _, dtype, _ in slots]
    arguments += [f'nt.Array({_numba_type(dtype)}, {ndim}, "{layout_code}")'
                  for _, dtype in dests]
    return f"nt.int32({', '.join(arguments)})"


def _element_body(program, dests, value, slot_of, index) -> list:
    """The statements computing one element: every op node, then the stores."""
    body = []
    for node_id, node in enumerate(program.nodes):
        if not isinstance(node, OpNode):
            continue
        expression = _node_expression(program, node, value, slot_of)
        if node.name in _FLAGS_PUT_BACK:
            body += [f"f{node_id} = fp_flags()", f"v{node_id} = {expression}",
                     f"fp_restore(f{node_id})"]
        else:
            body.append(f"v{node_id} = {expression}")
        value[node_id] = f"v{node_id}"
    for i, (node_id, dtype) in enumerate(dests):
        body.append(f"d{i}[{index}] = {_cast(value[node_id], program.nodes[node_id].dtype, dtype)}")
    return body


def kernel_source(program, layout: tuple, dests: tuple, parallel: bool) -> str:
    """The module source of one kernel.  ``layout``: ("flat", classes) with a class "full"
    or "one" per leaf, or ("nd", ndim); ``dests``: (node id, dtype) per destination."""
    mode = layout[0]
    ndim = 1 if mode == "flat" else layout[1]
    slots = scalar_slots(program)
    slot_of = {(node_id, dtype): f"s{i}" for i, (node_id, dtype, _) in enumerate(slots)}
    leaf_args = [f"a{leaf.index}" for leaf in program.leaves]
    dest_args = [f"d{i}" for i in range(len(dests))]
    index = "i" if mode == "flat" else ", ".join(f"i{k}" for k in range(ndim))
    lines = [
        f"# ndengine fused kernel (codegen {CODEGEN_VERSION}): {'+'.join(program.member_names)}",
        "import numpy as np",
        "from numba import njit, prange, uintp, types as nt",
        # the modules by their own names, so a move of the package's files follows here
        f"import {_elementwise_scalars.__name__} as es",
        f"import {_loops.__name__} as loops",
        f"import {_fs.__name__} as fs",
        f"from {_fp_flags.__name__} import fp_clear, fp_flags, fp_restore",
        "",
        f"SIGNATURE = {_signature(program, mode, ndim, slots, dests)}",
        "",
        "",
        f"@njit(SIGNATURE, nogil=True, cache=True, error_model=\"numpy\""
        f"{', parallel=True' if parallel else ''})",
        f"def kernel({', '.join(leaf_args + [f's{i}' for i in range(len(slots))] + dest_args)}):",
    ]
    value = {}
    if mode == "flat":
        lines.append("    n = d0.shape[0]")
        for leaf, cls in zip(program.leaves, layout[1]):
            if cls == "one":
                lines.append(f"    a{leaf.index}_0 = a{leaf.index}[0]")
        for node_id, node in enumerate(program.nodes):
            if isinstance(node, Leaf):
                cls = layout[1][node.index]
                value[node_id] = f"a{node.index}_0" if cls == "one" else f"a{node.index}[i]"
        sizes = ["n"]
    else:
        sizes = [f"n{k}" for k in range(ndim)]
        lines.append(f"    {', '.join(sizes)}{',' if ndim == 1 else ''} = d0.shape")
        for node_id, node in enumerate(program.nodes):
            if isinstance(node, Leaf):
                value[node_id] = f"a{node.index}[{index}]"
    loop_vars = ["i"] if mode == "flat" else [f"i{k}" for k in range(ndim)]
    indent = "    "
    if parallel:  # the first axis in parts, each part's flags kept (as elementwise/loops' parallel loops)
        lines += [f"{indent}raised = np.zeros(loops.PARTS, np.int32)",
                  f"{indent}for p in prange(loops.PARTS):"]
        indent += "    "
        lines += [f"{indent}fp_clear()",
                  f"{indent}lo, hi = loops.part_range(p, loops.PARTS, {sizes[0]})",
                  f"{indent}for {loop_vars[0]} in range(uintp(lo), uintp(hi)):"]
    else:
        lines += [f"{indent}fp_clear()", f"{indent}for {loop_vars[0]} in range({sizes[0]}):"]
    indent += "    "
    for var, size in zip(loop_vars[1:], sizes[1:]):
        lines.append(f"{indent}for {var} in range({size}):")
        indent += "    "
    lines += [indent + line for line in _element_body(program, dests, value, slot_of, index)]
    if parallel:
        lines += ["        raised[p] = fp_flags()", "    return loops.combined_flags(raised)"]
    else:
        lines.append("    return fp_flags()")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ the disk cache

_DEPENDENCIES = None
_dir_lock = threading.Lock()
_fallback_dir = None


def _dependencies() -> str:
    """What compiled kernels depend on besides their own source."""
    global _DEPENDENCIES
    if _DEPENDENCIES is None:
        _DEPENDENCIES = "|".join((CODEGEN_VERSION, numba.__version__, np.__version__,
                                  platform.python_version(), platform.machine(),
                                  source_digest(_elementwise_scalars, _loops, _fs,
                                                _fp_flags)))
    return _DEPENDENCIES


def cache_dir() -> str:
    """Where generated kernel modules (and Numba's cache of them) live."""
    return os.path.join(_disk_cache.cache_dir(), "fusion")


def writable_dir() -> str:
    """``cache_dir()``, or when it cannot be written this process's temporary directory."""
    global _fallback_dir
    path = cache_dir()
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
        reason = "not writable"
    except OSError as exc:
        reason = exc.strerror or str(exc)
    with _dir_lock:  # no usable cache directory: this process only
        if _fallback_dir is None:
            _fallback_dir = tempfile.mkdtemp(prefix="ndengine-fusion-")
            atexit.register(_remove_fallback_dir, _fallback_dir, os.getpid())
            _disk_cache.warn_unavailable(f"fused kernels cannot be kept in {path} ({reason})")
        return _fallback_dir


def _remove_fallback_dir(path: str, creator: int) -> None:
    if os.getpid() == creator:  # not in a forked child that exits: its parent may go on
        shutil.rmtree(path, ignore_errors=True)


def _write_once(path: str, source: str) -> None:
    """Create ``path`` with ``source`` unless it exists: never rewritten, since Numba's cache
    is keyed by the file's timestamp and size."""
    if os.path.exists(path):
        return
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(source)
        try:
            os.link(tmp, path)  # atomic, and fails if another process wrote it first
        except FileExistsError:
            pass
        except OSError:  # no hard links here: replace (a concurrent writer wrote the same)
            os.replace(tmp, path)
            tmp = None
    finally:
        if tmp is not None:
            os.unlink(tmp)


def kernel_name(source: str) -> str:
    """The module name of the kernel of ``source``: a hash of it and of its dependencies, so
    that anything kept beside the kernel under this name goes stale with it."""
    digest = hashlib.sha256((_dependencies() + "\n" + source).encode()).hexdigest()[:24]
    return f"ndengine_fused_{digest}"


def load_kernel(source: str):
    """Import the kernel of ``source`` from the cache directory (compiling it, or loading
    Numba's cached machine code); returns (dispatcher, loaded_from_disk)."""
    name = kernel_name(source)
    module = sys.modules.get(name)
    if module is None:
        path = os.path.join(writable_dir(), name + ".py")
        _write_once(path, source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        # registered first: Numba names the module of a function it cannot find in
        # sys.modules "<dynamic>", and its disk cache then cannot load the function back
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    kernel = module.kernel
    loaded = sum(kernel.stats.cache_hits.values()) > 0
    return kernel, loaded
