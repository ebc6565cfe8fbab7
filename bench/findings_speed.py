"""Findings index build time against one literal search pass over the same dataset (a child process of
bench/run.py; prints one `BENCH` line).

    python -m bench.findings_speed DATA [--repeat 5]

Both run in one process on a warm page cache, interleaved (search, build, search, build...) so that a
machine whose speed drifts slows both alike; the index's stored file is removed before each build. The
verifier index, which the app builds first anyway (and measures as background work), is built once
beforehand and handed to the findings index, as the app does. CPU seconds are reported too: the search
runs on two threads, so on a loaded machine its wall time suffers more than the build's. The build's
CPU seconds are this process's only: at 40k, worker processes (`tracetui.data.trial_workers`) do part of it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from .probes import COMMON_NEEDLE, report
from .search_speed import cli_session


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from tracetui.data import findings_index
    from tracetui.data.search import search
    from tracetui.data.verifier_index import build_verifier_index

    session = cli_session(args.data)
    verifiers = build_verifier_index(session)

    def build() -> tuple[float, float, int]:
        for dataset in session.datasets:
            (dataset.folder / findings_index.INDEX_FILE).unlink(missing_ok=True)
        began, cpu = time.perf_counter(), time.process_time()
        index = findings_index.build_findings_index(session, verifiers=verifiers)
        return time.perf_counter() - began, time.process_time() - cpu, sum(map(len, index.findings))

    def literal_search() -> tuple[float, float]:
        cpu = time.process_time()
        return search(session, COMMON_NEEDLE).seconds, time.process_time() - cpu

    first_search = literal_search()[0]
    first_build, _, found = build()
    runs = [(literal_search(), build()) for _ in range(args.repeat)]
    report(
        trials=len(session),
        findings=found,
        first_search=first_search,
        first_build=first_build,
        search=[s[0] for s, _ in runs],
        search_cpu=[s[1] for s, _ in runs],
        build=[b[0] for _, b in runs],
        build_cpu=[b[1] for _, b in runs],
    )


if __name__ == "__main__":
    main()
