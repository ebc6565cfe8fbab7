"""Tokens, cost and time in the short forms a message header or a narrow column has room for
(`1.2k`, `$0.004`, `2m05s`); a figure a source does not record (None, NaN) has no text at all."""

from __future__ import annotations

import math

from ..data.usage import TrialUsage
from ..trace.model import StepMetrics


def _known(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def tokens(count: float) -> str:
    """`340`, `1.2k`, `12k`, `3.4M`."""
    if count < 1000:
        return f"{count:.0f}"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if count >= scale * 0.9995:
            value = count / scale
            return f"{value:.1f}{suffix}" if value < 9.95 else f"{value:.0f}{suffix}"
    return f"{count:.0f}"  # not reached


def cost(usd: float) -> str:
    """`$0`, `$0.0004`, `$0.004`, `$0.12`, `$12.34` (a cost under $0.0001 is `<$0.0001`)."""
    if usd <= 0:
        return "$0"
    if usd < 0.0001:
        return "<$0.0001"
    if usd < 0.001:
        return f"${usd:.4f}"
    if usd < 0.1:
        return f"${usd:.3f}"
    return f"${usd:,.2f}"


def seconds(value: float) -> str:
    """`45s`, `2m05s`, `1h02m`."""
    total = round(value)
    if total < 60:
        return f"{total}s"
    if total < 3600:
        return f"{total // 60}m{total % 60:02d}s"
    return f"{total // 3600}h{total % 3600 // 60:02d}m"


def step_usage(metrics: StepMetrics | None) -> str:
    """`1.2k in · 340 out · 800 cached · $0.004`: what the step reported, nothing it did not."""
    if metrics is None:
        return ""
    parts = [
        f"{tokens(value)} {word}"
        for value, word in (
            (metrics.prompt_tokens, "in"),
            (metrics.completion_tokens, "out"),
            (metrics.cached_tokens, "cached"),
        )
        if value is not None
    ]
    if metrics.cost_usd is not None:
        parts.append(cost(metrics.cost_usd))
    return " · ".join(parts)


def trial_usage(usage: TrialUsage | None) -> list[str]:
    """A trial's time split and its tokens and cost, a short line each, as harbor records them:
    `⏱ agent 2m05s · verifier 25s · total 2m40s` and `$0.045 · 4.4k uncached in · 4.8k cached in · 1.2k
    out`; only the figures recorded, no line without one."""
    if usage is None:
        return []
    times = [
        f"{word} {seconds(value)}"
        for word, value in (
            ("agent", usage.agent_seconds),
            ("verifier", usage.verifier_seconds),
            ("total", usage.total_seconds),
        )
        if _known(value)
    ]
    money = [cost(usage.cost_usd)] if _known(usage.cost_usd) else []
    if _known(usage.cached_tokens) and _known(usage.input_tokens):
        money += [f"{tokens(usage.uncached_tokens)} uncached in", f"{tokens(usage.cached_tokens)} cached in"]
    elif _known(usage.input_tokens):
        money.append(f"{tokens(usage.input_tokens)} in")
    if _known(usage.output_tokens):
        money.append(f"{tokens(usage.output_tokens)} out")
    return [line for line in ("⏱ " + " · ".join(times) if times else "", " · ".join(money)) if line]
