"""Gardening: a pass proposes (detect, passes), people decide (decisions).

Seed 000's "curation pass": nothing here changes a memory by itself. A pass writes
proposals with their evidence; approving one runs the ordinary services (promote,
invalidate, correct), so every change it leads to is an ordinary, ledgered change that names
the proposal.
"""
