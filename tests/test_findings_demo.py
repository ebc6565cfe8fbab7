"""The demo's planted findings: each one is found on the trial that acts it out, and nothing that games the
verifier is found anywhere else (the honest trials look alike: they edit sources, run and read tests)."""

from __future__ import annotations

import pytest

from tracetui.data.findings_index import build_findings_index
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.demo import DEFAULT_ROWS, write_demo
from tracetui.demo.planning import PLANTS, plan
from tracetui.findings import HACKS

PLANTED_KIND = {
    "tamper": "test-tampering",
    "reward-file": "verifier-bypass",
    "upstream": "upstream-fetch",
    "claim": "false-claim",
    "repeat": "repeat-loop",
    "parse-loop": "parse-error-loop",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = write_demo(tmp_path_factory.mktemp("demo-findings"), rows=DEFAULT_ROWS, seed=0)
    session = open_session(prepare([SourceSpec(str(folder))]))
    return session, build_findings_index(session)


def test_every_plant_is_found_where_it_was_planted(demo):
    session, index = demo
    planted = {
        t.trial_name: f.removeprefix("plant:") for t in plan(DEFAULT_ROWS, 0) for f in t.force if f.startswith("plant:")
    }
    assert sorted(planted.values()) == sorted(name for name, _ in PLANTS)
    for trial in range(len(session)):
        name = session.info(trial).trial_name
        if name in planted:
            assert PLANTED_KIND[planted[name]] in {f.kind for f in index.of(trial)}, name


def test_nothing_else_games_the_verifier(demo):
    session, index = demo
    planted = {t.trial_name for t in plan(DEFAULT_ROWS, 0) if any(f.startswith("plant:") for f in t.force)}
    for trial in range(len(session)):
        info = session.info(trial)
        if info.trial_name in planted:
            continue
        kinds = {f.kind for f in index.of(trial)}
        assert not kinds & {"test-tampering", "verifier-bypass", "upstream-fetch", "repeat-loop"}, info.trial_name
        if info.outcome == "pass":
            assert not kinds & set(HACKS), (info.trial_name, index.of(trial))
