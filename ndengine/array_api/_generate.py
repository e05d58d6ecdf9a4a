"""Functions generated from table rows: the standard's name and parameter list, and the
ndengine function it calls.

A row ``("permute_dims", "x, /, axes", transpose)`` becomes
``def permute_dims(x, /, axes): return target(x, axes=axes)``, made by ndengine's one function
factory (``ndengine.ndarray.signatures.signed_function``): the standard's exact signature
(``inspect.signature`` and the conformance suite read it) at the cost of one extra Python
call, with no argument binding at run time. Positional-only parameters are passed on by
position, the others by keyword, renamed where the row says so; a keyword in ``omit_if_none``
is left out of the call when the caller left it None (ndengine's functions take NumPy's
``<no value>`` defaults, not None).
"""
from ..ndarray.signatures import signature_of, signed_function

__all__ = ["generate", "generate_all"]

MODULE = "ndengine.array_api"


def generate(name, parameter_list, target, renames=None, omit_if_none=(), module=MODULE):
    """A function named ``name`` with the standard's ``parameter_list`` that calls
    ``target``: see the module docstring."""
    target_name = getattr(target, "__name__", repr(target))
    return signed_function(name, parameter_list, target, keywords=True, renames=renames,
                           omit_if_none=omit_if_none, module=module,
                           doc=(f"Array API ``{name}{signature_of(parameter_list)}``: pushes "
                                f"ndengine's ``{target_name}``."))


def generate_all(rows, module=MODULE):
    """``{name: function}`` for table rows ``(name, parameter_list, target[, renames[,
    omit_if_none]])``; a row whose target is None (ndengine lacks it) is left out."""
    return {row[0]: generate(*row, module=module) for row in rows if row[2] is not None}
