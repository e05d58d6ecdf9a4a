"""Every registered op's gpu planner, installed from the gpu family modules' tables.

``register_all`` (called by ``ops/__init__.py`` once the CPU ops exist) gives each op the
planner its family's module makes (``kernels`` has the conventions they share) with
``Operator.set_device_planner("gpu", planner)``; the calls ``kernels.HOST_FALLBACK`` names
run on the host instead. This module is the only one that imports every gpu module.
"""
from __future__ import annotations

from ..host_fallback import host_planner
from ..registry import get, names
from . import elementwise as gpu_elementwise
from . import movement as gpu_movement
from . import numpy_functions as gpu_numpy_functions
from . import numpy_operators as gpu_numpy_ops
from . import random as gpu_random
from . import reductions as gpu_reductions
from .kernels import HOST_FALLBACK

__all__ = ["planners", "register_all"]


def planners() -> dict:
    """op name -> gpu planner, from every table (the host fallbacks last: they win)."""
    found = {}
    for module in (gpu_elementwise, gpu_reductions, gpu_numpy_functions, gpu_numpy_ops,
                   gpu_movement, gpu_random):
        found.update(module.planners())
    for name, entry in HOST_FALLBACK.items():
        found[name] = host_planner if entry.when is None else \
            _host_when(entry.when, found[name])
    return found


def _host_when(when, planner):
    """``planner``, or the host's for the calls whose params ``when`` picks (params are in
    the plan's signature: decided once per signature)."""
    def either(op, inputs, params, cpu_plan):
        chosen = host_planner if when(params) else planner
        return chosen(op, inputs, params, cpu_plan)
    return either


def register_all() -> None:
    """Give every registered op that the tables cover its gpu kernel."""
    table = planners()
    for name in names():
        planner = table.get(name)
        if planner is not None:
            get(name).set_device_planner("gpu", planner)
