"""`--filter` / `--exclude` values that forgive: resolution rules and the one-line errors."""

from __future__ import annotations

import pytest

from tracetui.data.errors import SourceError
from tracetui.data.facets import FACET_NAMES, FilterState, parse_filter_args, resolve_filters

KNOWN = {
    "model": [
        "openai/gpt-5-mini-2025-08-07",
        "gpt-4o",
        "openai/gpt-4o-mini",
        "anthropic/claude-sonnet-4-5",
        "anthropic/claude-sonnet-4-5-thinking",
    ],
    "outcome": ["pass", "partial", "fail", "error", "unknown"],
    "result": ["1.0", "0.0", "AgentTimeoutError", "VerifierTimeoutError"],
    "model_provider": ["openai", "anthropic"],
    "finding": ["test-tampering", "false-claim", "no-tests-run"],
}


def resolve(*filters: str, exclude: tuple[str, ...] = ()) -> FilterState:
    return resolve_filters(parse_filter_args(filters) + parse_filter_args(exclude, "--exclude"), KNOWN)


@pytest.mark.parametrize(
    "given, facet, value",
    [
        ("model=gpt-4o", "model", "gpt-4o"),  # exact wins over the longer names containing it
        ("model=GPT-4O", "model", "gpt-4o"),  # then case-insensitive
        ("model=gpt-5-mini", "model", "openai/gpt-5-mini-2025-08-07"),  # then a unique part
        ("model=claude-sonnet-4-5", "model", "anthropic/claude-sonnet-4-5"),  # a unique suffix before a substring
        ("provider=OpenAI", "model_provider", "openai"),
        ("outcome=fail", "outcome", "fail"),
        ("result=agenttimeout", "result", "AgentTimeoutError"),
        ("finding=tampering", "finding", "test-tampering"),
        ("Model=gpt-4o-mini", "model", "openai/gpt-4o-mini"),
    ],
)
def test_values_resolve(given, facet, value):
    assert resolve(given).selected == {facet: frozenset({value})}


def test_repeated_filters_or_within_a_facet_and_exclusions_apart():
    state = resolve("model=gpt-4o", "model=gpt-5", "outcome=fail", exclude=("finding=false-claim",))
    assert state.selected == {
        "model": frozenset({"gpt-4o", "openai/gpt-5-mini-2025-08-07"}),
        "outcome": frozenset({"fail"}),
    }
    assert state.excluded == {"finding": frozenset({"false-claim"})}
    assert "finding!=false-claim" in state.describe()


@pytest.mark.parametrize(
    "given, message",
    [
        (
            "outcome=failed",
            "--filter outcome=failed: no such value (did you mean fail?); one of: pass, partial, fail, error, unknown",
        ),
        (
            "model=claude",
            "--filter model=claude: matches 2 values (anthropic/claude-sonnet-4-5, anthropic/claude-sonnet-4-5-thinking); be more specific",
        ),
        (
            "result=TimeoutError",
            "--filter result=TimeoutError: matches 2 values (AgentTimeoutError, VerifierTimeoutError); be more specific",
        ),
        (
            "modle=gpt-4o",
            "--filter modle=gpt-4o: no facet 'modle' (did you mean model?); facets: "
            + ", ".join(FACET_NAMES)
            + ", ask:NAME",
        ),
        ("noequals", "--filter 'noequals': expected FACET=VALUE, e.g. model=gpt-4o"),
        ("model=llama", "--filter model=llama: no such value; one of: " + ", ".join(KNOWN["model"])),
        ("label=reward-hack", "--filter label=reward-hack: no such value; one of: (none in this data)"),
    ],
)
def test_errors_are_one_line_with_candidates(given, message):
    with pytest.raises(SourceError) as raised:
        resolve(given)
    assert str(raised.value) == message


def test_single_and_multi_valued_facets_filter_and_count_alike():
    """A facet with one value per trial answers like the same values given as (trial, code) pairs; a trial
    of a multi-valued facet counts once under each of its values."""
    import numpy as np

    from tracetui.data.facets import MultiFacet, SingleFacet

    codes = np.array([0, 2, -1, 1, 2, 0])
    single = SingleFacet("model", "Model", ["a", "b", "c"], codes)
    owners = np.nonzero(codes >= 0)[0]
    multi = MultiFacet("model", "Model", ["a", "b", "c"], owners, codes[owners])
    visible = np.array([True, True, True, False, True, True])
    for selected in ([0], [2], [0, 1], []):
        assert single.mask(selected, len(codes)).tolist() == multi.mask(selected, len(codes)).tolist()
    assert single.counts(visible).tolist() == multi.counts(visible).tolist() == [2, 0, 2]
    both = MultiFacet("label", "Label", ["x", "y"], np.array([0, 0, 3]), np.array([0, 1, 1]))
    assert both.mask([0, 1], 4).tolist() == [True, False, False, True]
    assert both.counts(np.ones(4, bool)).tolist() == [1, 2]
