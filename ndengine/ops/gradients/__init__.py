"""Autograd's gradient rules: one table over op names (``rules.RULES``).

A rule pushes ordinary ops through the object the tape hands it (``f``): it never imports
an array type. Modules, each importing only those above it (and the op model and the
families):

* ``common``: what the rules share (their conventions are written once in ``rules``);
* ``elementwise``, ``reductions``, ``statistics``, ``indexing``, ``movement``, ``linalg``,
  ``eig_lstsq``, ``fft``: the rules of one family of ops each;
* ``rules``: the table, and the lists of ops without a rule;
* ``user_gradient``: the op that runs a user's NumPy gradient.
"""
