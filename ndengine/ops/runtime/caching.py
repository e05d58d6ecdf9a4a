"""Caches that stay safe across ``fork``.

``functools.cached_property`` on Python 3.11 holds one lock per property while it computes a
value, for every instance of the class: a fork while another thread computes one (say, an
engine worker building an op's loops) leaves that lock held in the child for ever, and the
child's first use of the property hangs. ``cached_property`` here takes no lock: two threads
may both compute the value, the last one stored wins, and both are equal.
"""

__all__ = ["cached_property"]


class cached_property:  # noqa: N801 - a drop-in for functools.cached_property
    """Compute the attribute once per instance and keep it in the instance's ``__dict__``."""

    def __init__(self, func):
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.func(instance)
        instance.__dict__[self.name] = value  # later reads find it there, not here
        return value
