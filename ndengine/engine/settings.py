"""Run-time settings that apply at once and, used as a ``with`` block, are restored at its exit:
the one mechanism behind ``engine.bulk(size)`` (MXNet's) and ``ndengine.settings(...)``.

Process-wide. The settings behind it (the engine's bulk size, fusion) are performance knobs:
they change how ops are gathered and pushed, never a result or an error, and they live where
every op already reads them (``engine.bulk_size``, lazy.py's flag), so a block costs nothing per
op. A thread-local value would cost a lookup per op; the price of process-wide is that a
block changes the speed of other threads' ops while it lasts, not what they compute.

`SettingsBlock`: made with its changes, ``(key, setter, value)`` each, where ``setter(value)``
sets a setting and returns the value it replaced; it applies them at once (a plain setter,
like ``torch.set_grad_enabled``), in order, undoing those applied when one raises (a bad value:
then nothing changed). As a ``with`` block, its exit restores the values it replaced, of the
settings it named only (one of those changed inside the block by a plain call is restored
too, as ``np.errstate`` does; another setting keeps its new value). Blocks nest. Blocks of several threads may also overlap and exit in
any order: one that exits while a block entered after it is still open and names the same
setting hands its value to restore to that block instead of restoring now, so once every
block exited each setting is back to the value before the first.

State (under ``_lock``): ``_open``, the blocks entered and not yet exited, in entry order; per
block ``_replaced``, dict key -> (setter, value to restore), and ``_stage``: "applied", "open"
(entered) or "exited". A block is entered once: entering it again raises.
"""
import threading

__all__ = ["SettingsBlock"]

_lock = threading.RLock()  # reentrant: a setter may read settings
_open = []


class SettingsBlock:
    """See the module docstring."""

    __slots__ = ("_replaced", "_applied", "_stage")

    def __init__(self, changes):
        replaced, applied = {}, {}
        with _lock:
            try:
                for key, setter, value in changes:
                    previous = setter(value)
                    replaced.setdefault(key, (setter, previous))
                    applied[key] = value
            except BaseException:
                for setter, previous in reversed(list(replaced.values())):
                    setter(previous)
                raise
        self._replaced = replaced
        self._applied = applied
        self._stage = "applied"

    def __repr__(self):
        changes = ", ".join(f"{_name(key)}={value!r}" for key, value in self._applied.items())
        return f"<settings {changes or '(none)'}: {self._stage}>"

    def __enter__(self):
        with _lock:
            if self._stage != "applied":
                raise RuntimeError("a settings block applies its values when it is made and "
                                   "restores them at its exit, once: make a new one for "
                                   "another with block")
            self._stage = "open"
            _open.append(self)
        return self

    def __exit__(self, *exc_info):
        with _lock:
            later = _open[_open.index(self) + 1:]
            _open.remove(self)
            self._stage = "exited"
            for key, (setter, previous) in self._replaced.items():
                heir = next((block for block in later if key in block._replaced), None)
                if heir is None:
                    setter(previous)
                else:  # a block entered later still sets it: it restores ours at its exit
                    heir._replaced[key] = (heir._replaced[key][0], previous)
        return False


def _name(key):
    """A key is a setting's name, or (name, the object it belongs to): an engine's bulk size."""
    return key[0] if isinstance(key, tuple) else key
