"""The one percentile definition of every latency figure we publish (the bench's report and
the reliability suite's figures), so their p50/p95/p99 can be compared.

Nearest rank: the p-th percentile of n values is the smallest value that at least p % of
the values are less than or equal to, that is the value at rank ceil(p / 100 * n) (1-based)
of the sorted values. It is always one of the measured values, never an interpolation:
p50 of [1, 2, 3, 4] is 2, p95 of 20 values is the 19th smallest, p99 of 100 values the 99th,
and p100 the maximum.
"""

import math
from collections.abc import Iterable


def percentile(values: Iterable[float], p: float) -> float:
    """The nearest-rank p-th percentile (0 < p <= 100) of `values`, in any order; 0.0 when
    there are none. p = 0 is taken as the smallest value."""
    if not 0 <= p <= 100:
        raise ValueError(f"a percentile is between 0 and 100, not {p!r}")
    ordered = sorted(values)
    if not ordered:
        return 0.0
    # Rounded before ceil so that float noise (7 * 0.01 * 100 = 7.000000000000001) cannot
    # move the rank by one.
    rank = max(1, math.ceil(round(p * len(ordered) / 100, 9)))
    return ordered[rank - 1]
