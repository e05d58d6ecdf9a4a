"""The one way ndengine makes a function with a given parameter list: ``signed_function``.

Every family of functions with NumPy's parameter lists (the ufunc-like functions of
``operators``, the statistics, shaping, pushed, linalg and fft functions, the random
Generator's methods, the NDArray methods made from module functions) and every function of
``ndengine.array_api`` with the standard's parameter lists is made here, from a table row:
a name, a parameter list and the target the arguments go to.

``signed_function(name, parameters, target)`` compiles, once, the source
``def name(<parameters>): return target(<the arguments>)``. ``parameters`` is a parameter list
as written in a ``def`` (``"x, /, out=None, *, dtype=None"``; defaults may name ``_NoValue``,
NumPy's "not given", and ``np``) or a NumPy function, whose own signature is taken. The
result is a real Python function: ``inspect.signature`` shows the parameter list, a wrong
call raises Python's own TypeError naming the argument, and a call costs one Python call more
than the target, with no argument binding at run time (the hot ufunc-like functions may also
start with a ``shortcut``, a plain case that skips the target). How the arguments reach the
target:
- ``by_name``: one dict of every argument by name (a ``**kwargs`` parameter's keywords merged
  into it), after the ``lead`` values: ``target(*lead, {"a": a, "axis": axis, ...})``;
- otherwise as the call's own: positional parameters by position (by keyword with
  ``keywords``, or where ``renames`` gives the target's name for them), keyword-only ones by
  keyword, ``*args`` and ``**kwargs`` as they are; ``omit_if_none`` names keywords left out
  of the call when None.

``numpy_function(name, numpy_fn, implementation)`` is the factory for a function of NumPy's
(its parameter list, and a docstring naming it); ``method(function, array_param)`` makes an
NDArray method of a module function with the same factory (NumPy's method signature: the
function's, the array being ``self``).

This module imports nothing else of the package: any layer may make its functions here.
"""
import inspect
import os

import numpy as np

__all__ = ["signature_of", "signed_function", "numpy_function", "method"]

_HERE = os.path.dirname(os.path.abspath(__file__))

_P = inspect.Parameter
# names a parameter list may use in its defaults
_DEFAULT_NAMES = {"_NoValue": np._NoValue, "np": np}

# NumPy's C functions without a text signature in older NumPy 2 releases: their NumPy 2.4
# parameter lists
_C_SIGNATURES = {
    "concatenate": "arrays, /, axis=0, out=None, *, dtype=None, casting='same_kind'",
    "inner": "a, b, /", "vdot": "a, b, /",
    "unravel_index": "indices, shape, order='C'",
    "ravel_multi_index": "multi_index, dims, mode='raise', order='C'",
    "packbits": "a, /, axis=None, bitorder='big'",
    "unpackbits": "a, /, axis=None, count=None, bitorder='big'",
    "asanyarray": "a, dtype=None, order=None, *, device=None, copy=None, like=None",
    "asfortranarray": "a, dtype=None, *, like=None",
    "copyto": "dst, src, casting='same_kind', where=True",
    "frombuffer": "buffer, dtype=None, count=-1, offset=0, *, like=None",
    "fromfile": "file, dtype=None, count=-1, sep='', offset=0, *, like=None",
    "fromiter": "iter, dtype, count=-1, *, like=None",
    "may_share_memory": "a, b, /, max_work=0", "min_scalar_type": "a, /",
    "putmask": "a, /, mask, values", "shares_memory": "a, b, /, max_work=-1"}


def signature_of(parameters):
    """The Signature of a parameter list written as in a ``def``, or of a NumPy function
    (or ``parameters`` itself, a Signature)."""
    if isinstance(parameters, inspect.Signature):
        return parameters
    if not isinstance(parameters, str):
        try:
            return inspect.signature(parameters)
        except ValueError:
            name = getattr(parameters, "__name__", None)
            if name not in _C_SIGNATURES:
                raise
            parameters = _C_SIGNATURES[name]
    scope = dict(_DEFAULT_NAMES)
    exec(f"def parameters({parameters}): pass", scope)  # noqa: S102 - a table's text
    return inspect.signature(scope["parameters"])


class _Source:
    """A default value as the generated source names it (its repr is that name)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


def _argument(parameter, keywords, renames, omit_if_none):
    name, kind = parameter.name, parameter.kind
    if kind is _P.VAR_POSITIONAL:
        return f"*{name}"
    if kind is _P.VAR_KEYWORD:
        return f"**{name}"
    by_position = kind is _P.POSITIONAL_ONLY or (kind is _P.POSITIONAL_OR_KEYWORD
                                                 and not keywords)
    if by_position and name not in renames:
        return name
    keyword = renames.get(name, name)
    if name in omit_if_none:
        return f"**({{}} if {name} is None else {{{keyword!r}: {name}}})"
    return f"{keyword}={name}"


def _arguments(signature, by_name, keywords, renames, omit_if_none):
    """The source of the target's arguments (see the module docstring)."""
    parameters = signature.parameters.values()
    if not by_name:
        return ", ".join(_argument(p, keywords, renames, omit_if_none) for p in parameters)
    items = [f"**{p.name}" if p.kind is _P.VAR_KEYWORD else f"{p.name!r}: {p.name}"
             for p in parameters]
    return "{" + ", ".join(items) + "}"


def signed_function(name, parameters, target, *, lead=(), by_name=False, keywords=False,
                    renames=None, omit_if_none=(), shortcut=None, scope=None, doc=None,
                    module="ndengine", qualname=None):
    """``def name(<parameters>): return target(*lead, <the arguments>)``, compiled once (see
    the module docstring). ``shortcut``: ``(condition, expression)``, source of a first line
    ``if condition: return expression`` reading the parameters and the names of ``scope``."""
    signature = signature_of(parameters)
    scope = {**(scope or {}), "target": target}
    sourced = []
    for index, parameter in enumerate(signature.parameters.values()):
        if parameter.default is not _P.empty:
            scope[f"_default{index}"] = parameter.default
            parameter = parameter.replace(default=_Source(f"_default{index}"))
        sourced.append(parameter.replace(annotation=_P.empty))
    lead_names = []
    for index, value in enumerate(lead):
        scope[f"_lead{index}"] = value
        lead_names.append(f"_lead{index}")
    call = ", ".join(lead_names + [_arguments(signature, by_name, keywords, renames or {},
                                              set(omit_if_none))])
    header = str(signature.replace(parameters=sourced, return_annotation=_P.empty))
    lines = [f"def function{header}:"]
    if shortcut is not None:
        lines += [f"    if {shortcut[0]}:", f"        return {shortcut[1]}"]
    lines.append(f"    return target({call})")
    # named as a file of the package, so that the user's line of an error or a warning
    # (engine/errors.caller_origin: the first frame outside the package) is the caller's
    code = compile("\n".join(lines), os.path.join(_HERE, f"<generated {name}>"), "exec")
    exec(code, scope)  # noqa: S102 - source built from a table's row
    function = scope["function"]
    qualname = qualname or name
    function.__code__ = function.__code__.replace(co_name=name, co_qualname=qualname)
    function.__name__, function.__qualname__ = name, qualname
    function.__module__ = module
    function.__doc__ = doc
    return function


def numpy_function(name, numpy_fn, implementation, doc=None, module="ndengine",
                   by_name=False):
    """``signed_function`` for NumPy's function ``numpy_fn``: its parameter list, and the
    docstring ``As ``numpy.<name>``.`` (then ``doc``)."""
    numpy_name = module.replace("ndengine", "numpy") + "." + name
    return signed_function(name, numpy_fn, implementation, by_name=by_name, module=module,
                           doc=f"As ``{numpy_name}``." + (f" {doc}" if doc else ""))


def method(function, array_param, renames=None):
    """An NDArray method from a module function: the array is ``self`` (NumPy's method
    signature: the function's, without the array; ``renames``: method name -> function
    name of parameters NumPy's method calls differently)."""
    renames = renames or {}
    back = {v: k for k, v in renames.items()}
    signature = inspect.signature(function)
    params = [p.replace(name=back.get(p.name, p.name))
              for p in signature.parameters.values() if p.name != array_param]
    self_param = _P("self", _P.POSITIONAL_ONLY)
    method_signature = signature.replace(parameters=[self_param, *params])
    return signed_function(function.__name__, method_signature, function, keywords=True,
                           renames={"self": array_param, **renames}, doc=function.__doc__,
                           module=function.__module__)
