"""The run-time settings of the per-op pipeline: ``ndengine.settings`` and ``get_settings``.

    with nd.settings(fusion=False):       # for the block
        y = f(x)
    nd.settings(bulk_size=16)             # from now on
    nd.get_settings()                     # {'fusion': True, 'bulk_size': 16}

``fusion``     whether element-wise ops on large arrays are recorded and pushed as one fused op
               (lazy.py). Its start value is NDENGINE_FUSION (engine/config.py).
``run_at_once`` whether an op on small arrays that nothing pending touches runs at its call
               instead of being gathered (at_once.py). Its start value is NDENGINE_RUN_AT_ONCE,
               else True.
``bulk_size``  how many tiny ops a thread gathers into one push (segment.py): the process-wide
               engine's, as MXNet's ``engine.bulk`` sets it; 1 pushes every op alone (and so
               fuses nothing either). Its start value is NDENGINE_BULK_SIZE, else 64.

None changes a result or an error, only how ops are gathered and pushed, so both are
process-wide, held where each op already reads them: a block costs nothing per op (a
thread-local value would), and changes the speed, not the values, of the other threads' ops
while it lasts. The NaiveEngine runs every op at its push: its bulk size stays 1 and nothing is
fused whatever the settings say. Blocks nest and restore what they replaced, in whatever order
several threads' blocks exit (engine/settings.py).

The name follows the verb-less ``np.errstate``: one call both sets (at once, like
``torch.set_grad_enabled``) and, as a ``with`` block, restores at the block's exit.
"""
import numpy as np

from .. import engine as _engine_mod
from ..engine.settings import SettingsBlock
from . import at_once as _at_once
from . import lazy as _lazy

__all__ = ["settings", "get_settings"]


def settings(*, fusion=None, bulk_size=None, run_at_once=None):
    """Set run-time settings now; used as a ``with`` block, restore them at its exit.

    fusion     True or False: fuse chains of element-wise ops on large arrays into one op.
    bulk_size  an integer >= 1: tiny ops gathered per push by the process-wide engine.
    run_at_once  True or False: run an op on small arrays nothing pending touches at its call.
    A setting left None keeps its value. A bad value raises before anything changes. Returns
    the block (its repr says what it set); `get_settings` reads the values."""
    changes = []
    if bulk_size is not None:  # checked first: a bad size raises before fusion changed
        engine = _engine_mod.get()
        changes.append((("bulk_size", engine), engine.set_bulk_size, bulk_size))
    if fusion is not None:
        if not isinstance(fusion, (bool, np.bool_)):
            raise TypeError(f"settings: fusion must be True or False, got {fusion!r}")
        changes.append(("fusion", _lazy.set_enabled, bool(fusion)))
    if run_at_once is not None:
        if not isinstance(run_at_once, (bool, np.bool_)):
            raise TypeError(f"settings: run_at_once must be True or False, got {run_at_once!r}")
        changes.append(("run_at_once", _at_once.set_enabled, bool(run_at_once)))
    return SettingsBlock(changes)


def get_settings():
    """The current settings, as a dict: ``fusion``, ``run_at_once`` and ``bulk_size`` (see
    `settings`)."""
    return {"fusion": _lazy.ENABLED, "run_at_once": _at_once.enabled(),
            "bulk_size": _engine_mod.get().bulk_size}
