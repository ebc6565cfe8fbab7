"""How far a number can be trusted: a Wilson interval for a pass rate, the unbiased pass@k, and a
paired bootstrap for the difference of two sides over the tasks they share.

Plain math and numpy on counts; `stats` turns trials into the counts. Each figure comes only where
there is enough data to mean something (`MIN_GRADED`, `MIN_SHARED`); otherwise it is nan or None and
the caller says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""
MIN_GRADED = 5
"""A pass rate carries an interval from this many graded trials on; below, it is too few to say."""
MIN_SHARED = 5
"""A difference between two sides gets an interval from this many shared tasks graded on both sides."""
BOOTSTRAP_SEED = 24
BOOTSTRAP_RESAMPLES = 2000
_BLOCK = 1 << 20
"""Resampled task indices drawn at a time (8 MB), so thousands of tasks cost no more memory."""


def wilson(passed: int, graded: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of `passed` / `graded` (95% by default): unlike the normal
    approximation it stays inside [0, 1] and means something at 0 or all passes. (nan, nan) when
    fewer than MIN_GRADED trials are graded."""
    if graded < MIN_GRADED:
        return math.nan, math.nan
    p = passed / graded
    spread = z * z / graded
    centre = (p + spread / 2) / (1 + spread)
    half = z * math.sqrt(p * (1 - p) / graded + spread / (4 * graded)) / (1 + spread)
    # exact at the ends (the bounds reach 0 and 1 there, where rounding would leave 1e-16 off)
    return (0.0 if passed == 0 else max(0.0, centre - half)), (1.0 if passed == graded else min(1.0, centre + half))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task with `c` passes in `n` attempts (HumanEval, Chen et al. 2021):
    1 − C(n−c, k) / C(n, k), the chance that k attempts drawn from the n without replacement hold a pass."""
    if not 0 < k <= n:
        raise ValueError(f"pass@{k} needs 1 <= k <= n attempts (n = {n})")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


@dataclass(frozen=True, slots=True)
class PassAtK:
    k: int
    value: float
    """The mean over `tasks` of each task's pass@k."""
    tasks: int
    """Tasks with at least k graded attempts: the ones averaged."""
    left_out: int
    """Tasks with fewer than k graded attempts, left out of this k."""


def ks(most: int) -> list[int]:
    """The k values reported for tasks of up to `most` attempts: every k up to 10, then (as in
    Harbor's job results) powers of two and multiples of five, and `most` itself."""
    chosen = set(range(1, min(most, 10) + 1))
    chosen |= {2**i for i in range(4, most.bit_length())} | set(range(15, most + 1, 5)) | {most}
    return sorted(k for k in chosen if 0 < k <= most)


def pass_at_ks(attempts: np.ndarray, passes: np.ndarray) -> list[PassAtK]:
    """pass@k averaged over tasks, for the ks up to the most graded attempts any task has: `attempts`
    and `passes` hold one task each (graded attempts, passes among them)."""
    attempts, passes = np.asarray(attempts, np.int64), np.asarray(passes, np.int64)
    if not len(attempts) or attempts.max() < 1:
        return []
    found = []
    for k in ks(int(attempts.max())):
        keep = attempts >= k
        n, c = attempts[keep], passes[keep]
        # 1 − ∏ (n−c−i)/(n−i) over i < k, for every task at once; a factor hits 0 when n − c < k
        factors = np.clip((n - c)[:, None] - np.arange(k), 0, None) / (n[:, None] - np.arange(k))
        value = float(np.mean(1.0 - np.prod(factors, axis=1)))
        found.append(PassAtK(k, value, int(keep.sum()), int((~keep).sum())))
    return found


@dataclass(frozen=True, slots=True)
class Difference:
    """The mean over shared tasks of side A's pass rate minus side B's, with a paired 95% interval."""

    mean: float
    low: float
    high: float
    tasks: int
    """Shared tasks graded on both sides (the ones compared)."""

    @property
    def enough(self) -> bool:
        return not math.isnan(self.low)

    @property
    def noise(self) -> bool | None:
        """Whether the interval holds 0 (the difference could be chance); None with too few tasks."""
        return None if not self.enough else self.low <= 0 <= self.high

    def verdict(self, a: str = "A", b: str = "B", short: bool = False) -> str:
        """The difference in words, e.g. `A ahead by 12 points (95% +3 to +21): more than noise`."""
        if not self.tasks:  # both sides attempted the shared tasks, but no task was graded on both
            return "no shared task graded on both sides" + ("" if short else ": nothing to compare")
        points = round(100 * self.mean)
        lead = f"{a} ahead by {points}" if points > 0 else f"{b} ahead by {-points}" if points < 0 else "even"
        lead += " points" if points else ""
        if not self.enough and short:
            return f"{lead}: too few shared tasks to tell from noise ({self.tasks} of {MIN_SHARED})"
        if not self.enough:
            shared = f"{self.tasks} shared task{'s' * (self.tasks != 1)}"
            return f"{lead}: too few to tell from noise ({shared} graded on both sides; {MIN_SHARED} needed)"
        span = f"95% {100 * self.low:+.0f} to {100 * self.high:+.0f}"
        return f"{lead} ({span}): {'within noise' if self.noise else 'more than noise'}"


def paired_difference(
    a: np.ndarray, b: np.ndarray, seed: int = BOOTSTRAP_SEED, resamples: int = BOOTSTRAP_RESAMPLES
) -> Difference:
    """mean(a − b) of two sides' per-task pass rates (one task per index) and the 2.5 and 97.5
    percentiles of that mean over `resamples` resamplings of the tasks with replacement, both sides
    drawn together (paired). Seeded, so the same data gives the same interval every time."""
    diff = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    count = len(diff)
    mean = float(diff.mean()) if count else math.nan
    if count < MIN_SHARED:
        return Difference(mean, math.nan, math.nan, count)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, _BLOCK // count)
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        means[start : start + size] = diff[rng.integers(0, count, size=(size, count))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Difference(mean, float(low), float(high), count)
