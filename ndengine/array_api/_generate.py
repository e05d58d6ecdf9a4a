"""Functions generated from a table row: the standard's name and parameter list, and the
ndengine function it calls.

A row ``("permute_dims", "x, /, axes", nd.transpose)`` becomes the source
``def permute_dims(x, /, axes): return target(x, axes=axes)``, compiled once at import: the
standard's exact signature (``inspect.signature`` and the conformance suite read it) at the
cost of one extra Python call, with no argument binding at run time. Positional-only
parameters are passed on by position, the others by keyword, renamed where the row says so;
a ``None`` in ``dropped`` leaves that keyword out of the call when the caller left it None
(ndengine's functions take NumPy's ``<no value>`` defaults, not None).
"""
import inspect

__all__ = ["generate", "generate_all"]

MODULE = "ndengine.array_api"


def _parameters(parameter_list):
    """The Signature of a parameter list written as in a ``def``."""
    scope = {}
    exec(f"def parsed({parameter_list}): pass", scope)
    return inspect.signature(scope["parsed"])


def _call_arguments(signature, renames, omit_if_none):
    arguments = []
    for parameter in signature.parameters.values():
        name = parameter.name
        if parameter.kind is parameter.POSITIONAL_ONLY:
            arguments.append(name)
        elif parameter.kind is parameter.VAR_POSITIONAL:
            arguments.append(f"*{name}")
        elif name in omit_if_none:
            keyword = renames.get(name, name)
            arguments.append(f"**({{}} if {name} is None else {{{keyword!r}: {name}}})")
        else:
            arguments.append(f"{renames.get(name, name)}={name}")
    return ", ".join(arguments)


def generate(name, parameter_list, target, renames=None, omit_if_none=(), module=MODULE):
    """A function named ``name`` with the standard's ``parameter_list`` that calls
    ``target``: see the module docstring."""
    signature = _parameters(parameter_list)
    call = _call_arguments(signature, renames or {}, set(omit_if_none))
    scope = {"target": target}
    exec(f"def {name}({parameter_list}):\n    return target({call})", scope)
    function = scope[name]
    function.__module__ = module
    target_name = getattr(target, "__name__", repr(target))
    function.__doc__ = (f"Array API ``{name}{signature}``: pushes ndengine's "
                        f"``{target_name}``.")
    return function


def generate_all(rows, module=MODULE):
    """``{name: function}`` for table rows ``(name, parameter_list, target[, renames[,
    omit_if_none]])``; a row whose target is None (ndengine lacks it) is left out."""
    return {row[0]: generate(*row, module=module) for row in rows if row[2] is not None}
