"""An independent implementation of inferbench's interval rules (crates/stats/src/interval.rs),
in exact rational arithmetic: reads cases as JSON on stdin, writes the intervals as JSON.

Percentile case [n, percent, rank]: the p-quantile (p = percent/100) estimated by the sample at
1-based rank `rank`. Grow l and u from the rank, both sides at once within 1..n, until
P(l <= B < u) >= 0.95 for B ~ Binomial(n, p); null when even [1, n] falls short.
Rate case [successes, trials]: the Wilson score interval at z = 1.959963984540054.
"""
import json
import math
import sys
from fractions import Fraction

NINETY_FIVE = Fraction(95, 100)


def order_statistic_interval(n, percent, rank):
    p = Fraction(percent, 100)
    q = 1 - p
    pmf = [math.comb(n, k) * p**k * q ** (n - k) for k in range(n + 1)]
    if 1 - p**n - q**n < NINETY_FIVE:
        return None
    lo = hi = rank
    while True:
        lo, hi = max(1, lo - 1), min(n, hi + 1)
        if sum(pmf[lo:hi]) >= NINETY_FIVE:
            return [lo, hi]


def wilson(successes, trials):
    z = 1.959963984540054
    phat = successes / trials
    centre = (phat + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(phat * (1 - phat) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return [max(0.0, centre - half), min(1.0, centre + half)]


cases = json.load(sys.stdin)
json.dump(
    {
        "percentiles": [order_statistic_interval(*c) for c in cases["percentiles"]],
        "rates": [wilson(*c) for c in cases["rates"]],
    },
    sys.stdout,
)
