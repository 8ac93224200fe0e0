"""Independent computation of the pentanomial GSPRT LLR used in evidence's sprt tests.

Follows fishtest's LLRcalc (MLE of the pentanomial distribution under a mean constraint),
solved here with scipy's brentq instead of the bisection the Rust code uses.
Run: python3 sprt_reference.py
"""
import math
from scipy.optimize import brentq


def score(elo):
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def mle(phat, a, s):
    g = lambda lam: sum(p * (x - s) / (1 + lam * (x - s)) for p, x in zip(phat, a))
    lo = -1.0 / (max(a) - s) + 1e-12
    hi = 1.0 / (s - min(a)) - 1e-12
    lam = brentq(g, lo, hi, xtol=1e-15, rtol=1e-15)
    return [p / (1 + lam * (x - s)) for p, x in zip(phat, a)]


def llr(counts, elo0, elo1):
    reg = [max(c, 1e-3) for c in counts]
    n = sum(reg)
    phat = [c / n for c in reg]
    a = [0, 0.25, 0.5, 0.75, 1.0]
    p0 = mle(phat, a, score(elo0))
    p1 = mle(phat, a, score(elo1))
    return sum(c * math.log(q1 / q0) for c, q0, q1 in zip(reg, p0, p1))


if __name__ == "__main__":
    print(repr(llr([100, 450, 900, 520, 130], 0.0, 5.0)))
