"""ndengine: NumPy-style arrays whose operations run asynchronously, in parallel, on an
MXNet-style dependency engine."""
from . import engine
from .engine import Context, cpu, current_context, gpu

__version__ = "0.1.0"
