"""The processor's floating-point exception flags, read and written from compiled loops.

Every Numba loop of ``elementwise/loops`` and every generated fused kernel
(``fusion/codegen``) clears the flags at its start (`fp_clear`) and returns them at its end
(`fp_flags`); a fused kernel puts back (`fp_restore`) what it read before an op NumPy never
reports for, so that op's flags vanish; integer division by zero raises the divide flag itself
(`fp_raise_divide`), and MIN // -1 the overflow flag (`fp_raise_overflow`), as NumPy's
integer loops do. ``fp_status`` turns the returned bits into
NumPy's reports. On x86 the flags live in the SSE control register (two instructions, no
call); elsewhere <fenv.h>'s functions are called (libm, made known to the JIT by name).
"""
import platform

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["fp_clear", "fp_flags", "fp_restore", "fp_raise_divide", "fp_raise_overflow",
           "X86"]

_I32 = ir.IntType(32)
X86 = platform.machine().lower() in ("x86_64", "amd64", "i686", "i386")
_MXCSR_FLAGS = 0x1d   # invalid, divide, overflow, underflow (not denormal, not inexact)
_FENV_FLAGS = 0x0f    # FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW (AArch64)
_MXCSR_DIVIDE, _FENV_DIVIDE = 0x04, 0x02
_MXCSR_OVERFLOW, _FENV_OVERFLOW = 0x08, 0x04


def _mxcsr_call(builder, name, slot):
    fnty = ir.FunctionType(ir.VoidType(), [ir.PointerType(ir.IntType(8))])
    builder.call(cgutils.get_or_insert_function(builder.module, fnty, name),
                 [builder.bitcast(slot, ir.PointerType(ir.IntType(8)))])


def _fenv_call(builder, name, mask):
    fnty = ir.FunctionType(_I32, [_I32])
    return builder.call(cgutils.get_or_insert_function(builder.module, fnty, name),
                        [ir.Constant(_I32, mask)])


def _mxcsr_update(builder, clear, set_bits):
    slot = cgutils.alloca_once(builder, _I32)
    _mxcsr_call(builder, "llvm.x86.sse.stmxcsr", slot)
    value = builder.and_(builder.load(slot), ir.Constant(_I32, ~clear))
    builder.store(builder.or_(value, ir.Constant(_I32, set_bits)), slot)
    _mxcsr_call(builder, "llvm.x86.sse.ldmxcsr", slot)


@intrinsic
def fp_clear(typingctx):
    """Clear the FP exception flags."""
    def codegen(context, builder, sig, args):
        if X86:
            _mxcsr_update(builder, _MXCSR_FLAGS, 0)
        else:
            _fenv_call(builder, "feclearexcept", _FENV_FLAGS)
        return context.get_dummy_value()
    return types.none(), codegen


@intrinsic
def fp_flags(typingctx):
    """The FP exception flags raised since `fp_clear` (platform bits: fp_status.py maps them)."""
    def codegen(context, builder, sig, args):
        if not X86:
            return _fenv_call(builder, "fetestexcept", _FENV_FLAGS)
        slot = cgutils.alloca_once(builder, _I32)
        _mxcsr_call(builder, "llvm.x86.sse.stmxcsr", slot)
        return builder.and_(builder.load(slot), ir.Constant(_I32, _MXCSR_FLAGS))
    return types.int32(), codegen


@intrinsic
def fp_restore(typingctx, flags):
    """Set the FP exception flags to ``flags`` (a value `fp_flags` returned)."""
    if not isinstance(flags, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        value = args[0]
        if flags.bitwidth > 32:
            value = builder.trunc(value, _I32)
        elif flags.bitwidth < 32:
            value = builder.zext(value, _I32)
        if not X86:
            _fenv_call(builder, "feclearexcept", _FENV_FLAGS)
            fnty = ir.FunctionType(_I32, [_I32])
            builder.call(cgutils.get_or_insert_function(builder.module, fnty, "feraiseexcept"),
                         [value])
            return context.get_dummy_value()
        slot = cgutils.alloca_once(builder, _I32)
        _mxcsr_call(builder, "llvm.x86.sse.stmxcsr", slot)
        kept = builder.and_(builder.load(slot), ir.Constant(_I32, ~_MXCSR_FLAGS))
        builder.store(builder.or_(kept, builder.and_(value, ir.Constant(_I32, _MXCSR_FLAGS))),
                      slot)
        _mxcsr_call(builder, "llvm.x86.sse.ldmxcsr", slot)
        return context.get_dummy_value()
    return types.none(flags), codegen


def _raiser(mxcsr_bit, fenv_bit, doc):
    @intrinsic
    def fp_raise(typingctx):
        def codegen(context, builder, sig, args):
            if X86:
                _mxcsr_update(builder, 0, mxcsr_bit)
            else:
                _fenv_call(builder, "feraiseexcept", fenv_bit)
            return context.get_dummy_value()
        return types.none(), codegen
    fp_raise.__doc__ = doc
    return fp_raise


# what NumPy's integer loops report without a float operation raising it
fp_raise_divide = _raiser(_MXCSR_DIVIDE, _FENV_DIVIDE, "Raise the divide-by-zero flag.")
fp_raise_overflow = _raiser(_MXCSR_OVERFLOW, _FENV_OVERFLOW, "Raise the overflow flag.")


def _link_fenv():
    """Make <fenv.h>'s functions known to the JIT by name (not needed on x86)."""
    if X86:
        return
    import ctypes
    import ctypes.util
    from llvmlite import binding
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    for name in ("feclearexcept", "fetestexcept", "feraiseexcept"):
        binding.add_symbol(name, ctypes.cast(getattr(libm, name), ctypes.c_void_p).value)


_link_fenv()
