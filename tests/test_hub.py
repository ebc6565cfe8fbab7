"""Hub datasets through a local stand-in for the hub (`hub_server.FakeHub`): metadata first, row groups on
demand, the switch to the local copy, downloads interrupted and resumed, a hub that goes away or never
answers, and offline mode unchanged."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from tracetui.data import connections, hub_reads
from tracetui.data.errors import SourceError
from tracetui.data.search import SearchCancelled, search
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.data.threads import detached
from tracetui.data.verifier_index import build_verifier_index
from tracetui.demo import write_demo

from .hub_data import write_traces
from .hub_server import FakeHub, SilentServer, use_hub

REPO = "org/traces"


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """40,000 rows in 4 shards of 1,000-row row groups (~90 MB)."""
    return write_traces(tmp_path_factory.mktemp("big"), 40_000, shards=4, text=600, episodes=4)


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """3,000 rows in 3 shards (~7 MB)."""
    return write_traces(tmp_path_factory.mktemp("shards"), 3_000, shards=3, text=300, episodes=8)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo dataset: sub-agent rows, summarization restarts, hostile content, 2 shards."""
    return write_demo(tmp_path_factory.mktemp("demo"), rows=1200, seed=0)


def data_bytes(hub: FakeHub, repo: str) -> int:
    return sum(p.stat().st_size for name, p in hub.repos[repo].files.items() if name.endswith(".parquet"))


def remote_session(repo: str = REPO, **options):
    return open_session(prepare([SourceSpec(repo)], progressive=True), **options)


def test_the_first_screen_reads_a_few_percent_of_the_bytes(big, serve):
    hub = serve({REPO: big})
    session = remote_session()
    assert session.remote == [0] and not session.local_ready.is_set()
    listed = hub.bytes_served
    first = int(session.ordering.sort(session.facets.apply(session_filters()).visible, "task", False)[0])
    session.fetch(first)
    session.verifier_output(first)
    total = data_bytes(hub, REPO)
    print(
        f"\nbytes read: {listed:,} for the list and facets, {hub.bytes_served:,} with the first trial,"
        f" of {total:,} ({hub.bytes_served / total:.1%}); {len(hub.requests)} requests"
    )
    assert hub.bytes_served <= 0.05 * total
    assert listed < hub.bytes_served  # the first trial's text came on demand
    # the same trials, histories and logs as the local conversion of the same files
    local = open_session(prepare([SourceSpec(str(big))]))
    assert len(local) == len(session) and local.num_rows == session.num_rows == 40_000
    for column in ("trial_name", "result", "model"):
        assert local.trials.labels[column] == session.trials.labels[column]
        assert np.array_equal(local.trials.codes[column], session.trials.codes[column])
    assert session.history(first) == local.history(first)
    assert session.verifier_output(first) == local.verifier_output(first)


def session_filters():
    from tracetui.data.facets import FilterState

    return FilterState()


@pytest.mark.parametrize("cdn", [False, True], ids=["hub", "cdn"])
def test_remote_reading_matches_the_local_copy(demo, serve, cdn):
    """Every trial's history, the search and the verifier index read remotely equal the local ones, the
    files served by the hub itself or, as the hub sends LFS and Xet files, from its CDN."""
    serve({REPO: demo}, cdn=cdn)
    remote = remote_session()
    local = open_session(prepare([SourceSpec(str(demo))]))
    assert [remote.info(t).trial_name for t in range(len(remote))] == [
        local.info(t).trial_name for t in range(len(local))
    ]
    for trial in range(len(remote)):
        remote.fetch(trial)
        assert remote.history(trial) == local.history(trial)
        assert remote.verifier_output(trial) == local.verifier_output(trial)
    for pattern, regex in (("pytest", False), (r"Error\w+", True)):
        a, b = search(remote, pattern, regex=regex), search(local, pattern, regex=regex)
        assert np.array_equal(a.trials, b.trials) and np.array_equal(a.in_verifier, b.in_verifier)
    a, b = build_verifier_index(remote), build_verifier_index(local)
    assert a.short == b.short and a.failed == b.failed


def test_search_streams_row_groups_without_a_download_and_waits_for_one(big, serve):
    from tracetui.data.download import Download

    hub = serve({REPO: big})
    session = remote_session()
    hub.reset_counts()
    seen: list[float] = []
    result = search(session, "collected 3 items", progress=seen.append)  # in every verifier log
    assert result.matched_trials == len(session) and result.in_verifier.all() and seen[-1] == pytest.approx(1.0)
    assert hub.bytes_served < data_bytes(hub, REPO)  # the message texts and logs only, not the roles or metadata
    # while a download runs, a search waits for it (saying how far it is), and Esc stops the wait
    session.download = Download(total=100, done=40)
    waited: list[float] = []
    with pytest.raises(SearchCancelled):
        search(session, "x", waiting=waited.append, cancelled=lambda: len(waited) >= 2)
    assert waited and waited[0] == pytest.approx(Download(total=100, done=40).fraction)


def test_a_search_streams_many_small_row_groups_from_a_far_hub_in_few_round_trips(tmp_path, serve):
    """A streamed scan asks for the row groups ahead of the one searched by their bytes, not a few at a
    time: 40 small row groups on a hub 0.2 s away come in a couple of round trips in a row (asked for
    four at a time, it took ten or more: a search of 400,000 rows on a hub 100 ms away took 112 s, now 7 s)."""
    hub = serve({REPO: write_traces(tmp_path, 2_000, shards=2, text=100, episodes=4, row_group=50)})
    session = remote_session()
    assert len(session.datasets[0].groups) == 40
    hub.delay = 0.2
    hub.reset_counts()
    began = time.monotonic()
    result = search(session, "collected 3 items")
    assert result.matched_trials == len(session)
    print(f"\nround trips in a row: {hub.in_a_row(since=began)} for {len(hub.requests)} requests")
    assert hub.in_a_row(since=began) <= 4


def test_a_search_from_the_hub_keeps_few_footers_and_gives_its_memory_back(big, serve, monkeypatch):
    """A scan of every row group parses every file's footer (~10x its bytes): only the last FOOTERS are
    kept (all 450 of a 400,000-row dataset held 128 MB for the rest of the session); the text streamed
    is given back to the system once the search is over (130 MB more)."""
    from tracetui.data import remote
    from tracetui.data import search as searching

    monkeypatch.setattr(remote, "FOOTERS", 2)
    given: list[bool] = []
    monkeypatch.setattr(searching, "give_back", lambda: given.append(True))
    serve({REPO: big})
    session = remote_session()
    search(session, "collected 3 items")
    assert len(list(big.glob("data/*.parquet"))) == 4 and len(session.datasets[0]._footers) == 2
    assert given == [True]


def test_the_verifier_index_streams_the_verifier_column_only(big, serve):
    import pyarrow.parquet as pq

    hub = serve({REPO: big})
    session = remote_session()
    hub.reset_counts()
    index = build_verifier_index(session)
    assert len(index.short) == len(session)
    footers = [pq.ParquetFile(p).metadata for p in sorted((big / "data").glob("*.parquet"))]
    verifier = sum(
        f.row_group(i).column(j).total_compressed_size
        for f in footers
        for i in range(f.num_row_groups)
        for j in range(f.num_columns)
        if f.row_group(i).column(j).path_in_schema == "verifier_output"
    )
    assert verifier <= hub.bytes_served <= 1.2 * verifier
    hub.reset_counts()
    assert build_verifier_index(remote_session()).short == index.short  # kept: read back, nothing fetched
    assert hub.bytes_served == 0


def test_row_groups_kept_on_disk_stay_within_the_cache_size(big, serve, tmp_path):
    from tracetui.data.group_cache import GroupCache
    from tracetui.paths import cache_dir

    serve({REPO: big})
    session = remote_session(cache_size=1)  # less than one row group: only the last one fetched stays
    dataset = session.datasets[0]
    for trial in (0, len(session) // 2, len(session) - 1):
        session.fetch(trial)
    dataset.kept()  # each one is written to disk after it is shown
    last = dataset._group_of(int(session.trials.rows(len(session) - 1)[-1]))
    assert list(cache_dir().glob("*.remote/groups/*.arrow")) == [GroupCache.path(dataset.folder, last)]
    assert len(dataset.groups) > 3


def test_a_fetched_row_group_is_read_before_it_is_written_to_disk(big, serve, monkeypatch):
    """The first conversation does not wait for its row groups to be written (~10 MB each): they are
    read from memory, written on a thread of their own, then read from their mapping on disk."""
    from tracetui.data.group_cache import GroupCache

    serve({REPO: big})
    session = remote_session()
    dataset = session.datasets[0]
    writing = threading.Event()
    store = GroupCache.store

    def held(cache, folder, group, batch):
        assert writing.wait(10)
        return store(cache, folder, group, batch)

    monkeypatch.setattr(GroupCache, "store", held)
    history = session.fetch(0)  # returns while the write waits
    group = dataset._group_of(int(session.trials.rows(0)[0]))
    in_memory = dataset._loaded.get(group)
    assert history.messages and not GroupCache.path(dataset.folder, group).exists()
    writing.set()
    dataset.kept()
    assert GroupCache.path(dataset.folder, group).is_file()
    mapped = dataset._loaded.get(group)
    assert mapped is not in_memory and mapped.equals(in_memory)
    session._histories.clear()
    assert session.history(0) == history


@pytest.fixture
def slow_headers(monkeypatch):
    """huggingface_hub's headers built only once the returned event is set (as its ~0.15 s of imports
    delay them on a first open), with HF_TOKEN set: what a logged-in user's requests carry."""
    import huggingface_hub.utils

    from tracetui.data import connections

    built = threading.Event()
    build = huggingface_hub.utils.build_hf_headers

    def slow(*args, **kwargs):
        assert built.wait(10)
        return build(*args, **kwargs)

    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    monkeypatch.setattr(huggingface_hub.utils, "build_hf_headers", slow)
    monkeypatch.setattr(connections, "_HEADERS", (float("-inf"), {}))
    return built


def test_a_public_repo_is_listed_before_the_hub_headers_are_built_and_read_with_them(shards, serve, slow_headers):
    hub = serve({REPO: shards})
    resolving = detached(lambda: prepare([SourceSpec(REPO)], progressive=True), "test-prepare")
    sources = resolving.result(timeout=10)  # listed, its card read, while the headers are not built
    assert hub.authorizations and set(hub.authorizations) == {None}
    slow_headers.set()
    session = open_session(sources)
    session.fetch(0)
    ranged = [auth for (_, _, byte_range), auth in zip(hub.requests, hub.authorizations) if byte_range]
    assert ranged and set(ranged) == {"Bearer hf_secret"}  # the files are read as the user


def test_a_private_repo_is_asked_again_with_the_token(shards, serve, slow_headers):
    hub = serve({REPO: shards})
    hub.private[REPO] = "hf_secret"
    threading.Timer(0.3, slow_headers.set).start()
    session = remote_session()
    assert len(session) > 0 and session.fetch(0).messages
    listings = [
        auth for (_, path, _), auth in zip(hub.requests, hub.authorizations) if path.startswith("/api/datasets/")
    ]
    assert listings == [None, "Bearer hf_secret"]


def test_reopening_in_remote_mode_reads_nothing_before_the_first_screen(big, serve):
    from tracetui.data.session import all_cached

    hub = serve({REPO: big})
    remote_session()
    hub.reset_counts()
    sources = prepare([SourceSpec(REPO)], progressive=True)
    assert all_cached(sources)  # the metadata is kept: the app opens it before its first frame
    open_session(sources)
    assert hub.bytes_served == 0 and [r[1] for r in hub.requests] == [f"/api/datasets/{REPO}"]


def test_a_files_reads_go_to_its_cdn_link_and_the_hub_is_asked_once_per_file(big, serve, monkeypatch):
    """The hub answers a data file's resolve with a redirect to a signed link on its CDN. Only a file's
    first read asks the hub (a far hub's round trip, and one of the few thousand resolves it allows in 5
    minutes); the others go straight to the link, without the user's token; a link that has expired is
    asked of the hub again."""
    from tracetui.data import connections

    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    monkeypatch.setattr(connections, "_HEADERS", (float("-inf"), {}))
    hub = serve({REPO: big}, cdn=True)
    shards = sorted(name for name in hub.repos[REPO].files if name.endswith(".parquet"))
    resolves = {f"/datasets/{REPO}/resolve/{hub.repos[REPO].sha}/{name}": name for name in shards}

    def requests() -> tuple[list[str], list[str | None], list[str | None]]:
        """(the files asked of the hub, its requests' tokens, the CDN's requests' tokens)"""
        sent = list(zip((path for _, path, _ in hub.requests), hub.authorizations))
        asked = [(resolves[path], auth) for path, auth in sent if path in resolves]
        return [name for name, _ in asked], [auth for _, auth in asked], [a for p, a in sent if p.startswith("/_cdn/")]

    session = remote_session()
    for trial in range(0, len(session), len(session) // 4):
        session.fetch(trial)
    asked, tokens, linked = requests()
    assert sorted(asked) == shards and set(tokens) == {"Bearer hf_secret"}
    assert len(linked) > 4 * len(shards) and set(linked) == {None}

    hub.expire_links()
    hub.reset_counts()
    assert session.fetch(next(t for t in range(len(session)) if not session.ready(t))).messages
    asked, _, linked = requests()
    assert asked and linked  # refused by the CDN, asked of the hub again, read from the new link


def test_a_download_from_the_cdn_completes(shards, serve):
    from tracetui.data.hub import download

    serve({REPO: shards}, cdn=True)
    source = prepare([SourceSpec(REPO)], progressive=True)[0]
    download(source.hub_files, lambda count: None)
    assert source.downloaded
    session = open_session(prepare([SourceSpec(REPO)]))
    assert session.local_ready.is_set() and session.num_rows == 3_000


def test_a_download_resumes_after_a_dropped_connection(shards, serve):
    from tracetui.data.hub import CHUNK_BYTES, download

    hub = serve({REPO: shards})
    source = prepare([SourceSpec(REPO)], progressive=True)[0]
    hub.reset_counts()
    hub.cut_after = source.hub_files.sizes[0] // 2  # the connection drops once, in the middle of the first file
    download(source.hub_files, lambda count: None, workers=1)
    assert source.downloaded
    resumed = [r for method, _, r in hub.requests if method == "GET" and r]
    assert resumed and int(resumed[0].removeprefix("bytes=").split("-")[0]) > 0  # from where it stopped
    assert (
        source.hub_files.total < hub.bytes_served < source.hub_files.total + CHUNK_BYTES
    )  # only the chunk in flight twice


def test_an_interrupted_download_resumes_with_the_missing_files(shards, serve):
    from tracetui.data.hub import Cancelled, download

    hub = serve({REPO: shards})
    source = prepare([SourceSpec(REPO)], progressive=True)[0]
    assert len(source.files) == 3 and not source.downloaded
    first_size = source.hub_files.sizes[0]
    hub.reset_counts()

    def quit_during_the_second_file(count: int) -> None:
        if hub.bytes_served > first_size:
            raise Cancelled()

    with pytest.raises(Cancelled):
        download(source.hub_files, quit_during_the_second_file, workers=1)
    assert [file.exists() for file in source.files] == [True, False, False]
    hub.settle()  # the body the cancelled download left in flight is not counted below
    hub.reset_counts()
    again = prepare([SourceSpec(REPO)], progressive=True)[0]
    download(again.hub_files, lambda count: None)
    fetched = {path for method, path, _ in hub.requests if method == "GET" and "/resolve/" in path}
    assert fetched == {f"/datasets/{REPO}/resolve/{again.revision}/{path}" for path in again.hub_files.paths[1:]}
    assert hub.bytes_served == sum(again.hub_files.sizes[1:])
    session = open_session(prepare([SourceSpec(REPO)]))
    assert session.local_ready.is_set() and session.num_rows == 3_000


def test_export_before_the_download_is_one_line_then_works(shards, serve, tmp_path):
    from tracetui.data.export import export_trials
    from tracetui.data.hub import download

    serve({REPO: shards})
    session = remote_session()
    with pytest.raises(SourceError, match="not downloaded yet"):
        export_trials(session, [0], tmp_path / "out.jsonl")
    download(session.datasets[0].source.hub_files)
    assert export_trials(session, [0], tmp_path / "out.jsonl") == session.info(0).episodes


def test_the_hub_going_away_is_one_line_and_what_was_read_stays(big, serve):
    hub = serve({REPO: big})
    session = remote_session()
    last = len(session) - 1
    session.fetch(0)
    hub.stop()
    began = time.monotonic()
    with pytest.raises(SourceError) as failure:
        session.fetch(last)
    assert time.monotonic() - began < 10  # no retry back-off
    assert "\n" not in str(failure.value)
    assert session.history(0).messages  # read before: still there
    assert session.info(last).trial_name  # the list and facets need no network
    began = time.monotonic()
    with pytest.raises(SourceError) as failure:  # a search streams what is not kept: the 64 row groups
        search(session, "collected")  # it asked for ahead all fail, and it says so once
    assert time.monotonic() - began < 10 and "\n" not in str(failure.value)


@pytest.mark.parametrize("kind", ["refused", "silent"])
def test_an_unreachable_hub_fails_over_quickly(kind, monkeypatch, tmp_path, demo):
    """A closed port or a server that accepts and never answers: the cached snapshot opens, or one line
    says why not, within seconds (huggingface_hub's own retries would take ~24 s)."""
    with FakeHub({REPO: demo}) as hub:
        use_hub(monkeypatch, hub.url)
        source = prepare([SourceSpec(REPO)])[0]  # downloaded into the HF cache
    silent = SilentServer()
    url = silent.url if kind == "silent" else "http://127.0.0.1:9"
    use_hub(monkeypatch, url)
    monkeypatch.setattr(connections, "HUB_CONNECTIONS", 0)  # none opened ahead: counted below are requests
    with silent:
        began = time.monotonic()
        again = prepare([SourceSpec(REPO)], progressive=True)[0]
        assert again.revision == source.revision and again.downloaded
        with pytest.raises(SourceError, match="cannot reach the Hugging Face hub"):
            prepare([SourceSpec("org/never-seen")], progressive=True)
        elapsed = time.monotonic() - began
        if kind == "silent":
            # one request each, no retries; the card is asked for beside the listing of a dataset never opened
            assert silent.connections == 3
    assert elapsed < 12


def test_a_hub_that_says_no_is_one_line_saying_why(demo, serve):
    """The listing goes on connections of our own; an answer that is an error is asked again through
    huggingface_hub's session, whose errors say why."""
    serve({REPO: demo})
    with pytest.raises(SourceError, match=r"^org/missing: no such dataset on the hub"):
        prepare([SourceSpec("org/missing")], progressive=True)
    with pytest.raises(SourceError, match=r"^org/traces: no revision 'v9'"):
        prepare([SourceSpec(REPO, revision="v9")], progressive=True)


def test_offline_mode_sends_nothing(demo, serve, monkeypatch):
    from huggingface_hub import constants

    hub = serve({REPO: demo})
    prepare([SourceSpec(REPO)])
    hub.reset_counts()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    session = open_session(prepare([SourceSpec(REPO)], progressive=True))
    assert session.local_ready.is_set() and hub.requests == []


def test_reading_a_trial_never_fetches_fetching_is_one_call(demo, serve):
    from tracetui.data.dataset import NotFetched

    hub = serve({REPO: demo})
    session = remote_session()
    trial = next(t for t in range(len(session)) if not session.ready(t))
    hub.reset_counts()
    with pytest.raises(NotFetched):
        session.history(trial)
    assert hub.requests == []  # it said "not here yet" without asking the hub
    history = session.fetch(trial)
    assert history.messages and session.ready(trial) and session.history(trial) == history


def test_the_first_conversation_reads_only_its_own_row_groups(big, serve):
    import pyarrow.parquet as pq

    hub = serve({REPO: big})
    session = remote_session()
    first = int(session.ordering.sort(session.facets.apply(session_filters()).visible, "task", False)[0])
    dataset = session.datasets[0]
    rows = session.trials.rows(first)
    mine = {(g.file, g.index) for g in (dataset.groups[dataset._group_of(int(r))] for r in rows)}
    hub.reset_counts()
    session.fetch(first)
    names = sorted(name for name in hub.repos[REPO].files if name.endswith(".parquet"))
    allowed: dict[str, list[tuple[int, int]]] = {}
    for number, name in enumerate(names):
        footer = pq.ParquetFile(hub.repos[REPO].files[name]).metadata
        for index in range(footer.num_row_groups):
            if (number, index) in mine:
                group = footer.row_group(index)
                chunks = [group.column(j) for j in range(group.num_columns)]
                starts = [c.dictionary_page_offset or c.data_page_offset for c in chunks]
                end = max(s + c.total_compressed_size for s, c in zip(starts, chunks))
                allowed.setdefault(name, []).append((min(starts), end))
    reads = [(path.rsplit("/", 1)[-1], ranged) for method, path, ranged in hub.requests if method == "GET"]
    assert reads
    for name, ranged in reads:
        first_byte, last_byte = (int(x) for x in ranged.removeprefix("bytes=").split("-"))
        assert any(start <= first_byte and last_byte < end for start, end in allowed[f"data/{name}"]), ranged
    assert hub.bytes_served <= 0.05 * data_bytes(hub, REPO)


def test_a_far_hub_waits_for_few_round_trips_before_the_first_conversation(demo, serve):
    """Every request waits 0.4 s: the card beside the listing, the split found in that listing, every
    footer (asked of the hub, which sends each file from its CDN; the demo's first shard has a 54 KB
    footer, which the first read brings whole), then every column chunk in flight together (on the CDN
    connections opened at its first redirect: one that found none free cost two round trips more), then
    the first trial's row groups (each file's reads after its first go straight to the CDN: asking the
    hub each time made it 9 and 11). A delay this long, against the 0.1-0.3 s of a far hub, keeps a
    request that a loaded machine starts late from passing for a round trip of its own."""
    hub = serve({REPO: demo}, cdn=True)
    hub.delay = 0.4
    session = remote_session()
    listed = hub.in_a_row()
    session.fetch(int(session.ordering.sort(session.facets.apply(session_filters()).visible, "task", False)[0]))
    print(f"\nround trips in a row: {listed} before the list, {hub.in_a_row()} with the first conversation")
    assert listed <= 4 and hub.in_a_row() <= 5


def test_a_first_open_finds_its_connections_opened_while_it_waited(demo, serve):
    """A new connection to a far host costs two round trips (TCP, TLS) before its first request: those for
    the files' first reads are opened while the listing is on its way, and those to the CDN the hub sends
    the files from as soon as it first does. (0.4 s a request: on a loaded machine the stand-in accepted
    only 4 of the 64 within 0.2 s of the first redirect.)"""
    from tracetui.data.connections import CDN_CONNECTIONS

    hub = serve({REPO: demo}, cdn=True)
    hub.delay = 0.4
    remote_session()
    listed = next(answered for path, _, _, answered in hub.timeline if path.startswith("/api/datasets/"))
    resolves = [answered for path, _, _, answered in hub.timeline if "/resolve/" in path and "/data/" in path]
    to_hub = [at for url, at in hub.opened if url == hub.url]
    to_cdn = [at for url, at in hub.opened if url == hub.cdn]
    assert len(resolves) == 2 and len(to_hub) >= 2 + len(resolves) and max(to_hub) < listed
    assert len([at for at in to_cdn if at < min(resolves) + hub.delay]) >= CDN_CONNECTIONS


def test_the_next_process_connects_to_the_cdn_the_hub_sent_reads_to_before_it_asks_anything(demo, serve, monkeypatch):
    """A far CDN charges a new connection two round trips: the host the hub redirected reads to is
    remembered, and the next process opens its connections there with the hub's, before any request."""
    from tracetui.data.connections import CDN_CONNECTIONS, HUB_CONNECTIONS

    hub = serve({REPO: demo}, cdn=True)

    def opened_by_a_new_process() -> tuple[int, int]:
        monkeypatch.setattr(connections, "CONNECTIONS", connections.Connections())
        hub.opened.clear()
        connections.connect_to_hub()
        until = time.monotonic() + 5
        while len(hub.opened) < HUB_CONNECTIONS and time.monotonic() < until:
            time.sleep(0.02)
        time.sleep(0.1)  # any CDN connection opened after the hub's
        return sum(url == hub.url for url, _ in hub.opened), sum(url == hub.cdn for url, _ in hub.opened)

    assert opened_by_a_new_process() == (HUB_CONNECTIONS, 0)  # nothing known of this hub yet
    remote_session()
    requests = len(hub.timeline)
    assert opened_by_a_new_process() == (HUB_CONNECTIONS, CDN_CONNECTIONS)
    assert len(hub.timeline) == requests  # connections only: nothing asked


def asked_ahead(hub: FakeHub, specs: list[SourceSpec], count: int) -> list[tuple[str, str | None]]:
    """(path, authorization) of the `count` requests `hub_ahead.ask_ahead(specs)` makes."""
    from tracetui.data.hub_ahead import ask_ahead

    ask_ahead(specs)
    until = time.monotonic() + 5
    while len(hub.timeline) < count and time.monotonic() < until:
        time.sleep(0.01)
    time.sleep(0.05)  # and no more
    return [(path, auth) for (_, path, _), auth in zip(hub.requests, hub.authorizations)]


def test_the_listing_and_card_asked_for_from_the_command_line_are_the_answers_the_open_takes(demo, serve):
    """The command line asks for a hub dataset's listing and card before the app's modules import; the
    open takes those answers instead of asking again; a reopen (its card kept) asks for the listing only."""
    hub = serve({REPO: demo})
    listing, card = f"/api/datasets/{REPO}", f"/datasets/{REPO}/resolve/main/README.md"
    assert sorted(asked_ahead(hub, [SourceSpec(REPO)], 2)) == [(listing, None), (card, None)]
    session = remote_session()
    assert len(session) > 0
    assert [path for _, path, _ in hub.requests].count(listing) == 1
    assert [path for _, path, _ in hub.requests].count(card) == 1
    hub.reset_counts()
    assert asked_ahead(hub, [SourceSpec(REPO)], 1) == [(listing, None)]
    prepare([SourceSpec(REPO)], progressive=True)
    assert [path for _, path, _ in hub.requests] == [listing]


def test_a_reopen_opens_no_connection_ahead(demo, serve, monkeypatch):
    """A reopen asks for the listing alone before its first screen: neither the hub nor the CDN it read
    from before is connected to ahead (a TLS handshake each, for connections nothing may use)."""
    hub = serve({REPO: demo}, cdn=True)
    remote_session()  # its card kept, the CDN remembered
    monkeypatch.setattr(connections, "CONNECTIONS", connections.Connections())  # another process
    hub.reset_counts()
    assert asked_ahead(hub, [SourceSpec(REPO)], 1) == [(f"/api/datasets/{REPO}", None)]
    time.sleep(0.2)
    assert [url for url, _ in hub.opened] == [hub.url]  # the listing's own


def test_a_first_open_builds_the_users_headers_while_its_listing_is_on_the_way(demo, serve, monkeypatch):
    """The footers of a first open are read as the user, once the listing is in: huggingface_hub's headers
    (~0.1 s of imports) are built from the moment the listing is asked for, not when the first footer
    asks for them. A reopen, whose first screen needs the listing alone, leaves them for later."""
    import huggingface_hub.utils

    built = threading.Event()
    build = huggingface_hub.utils.build_hf_headers

    def noted(*args, **kwargs):
        built.set()
        return build(*args, **kwargs)

    monkeypatch.setattr(huggingface_hub.utils, "build_hf_headers", noted)
    monkeypatch.setattr(connections, "_HEADERS", (float("-inf"), {}))
    hub = serve({REPO: demo})
    asked_ahead(hub, [SourceSpec(REPO)], 2)
    assert built.wait(5)
    assert not any(byte_range for _, _, byte_range in hub.requests)  # before any file was read

    remote_session()  # its card kept: the next open is a reopen
    monkeypatch.setattr(connections, "_HEADERS", (float("-inf"), {}))
    built.clear()
    asked_ahead(hub, [SourceSpec(REPO)], 1)
    assert not built.wait(0.3)


def test_an_hf_path_is_asked_for_at_its_revision_and_other_sources_not_at_all(demo, serve):
    hub = serve({REPO: demo})
    specs = [SourceSpec("./not/here.parquet"), SourceSpec(f"hf://datasets/{REPO}@main/data"), SourceSpec("hf://x")]
    asked = asked_ahead(hub, specs, 2)
    assert sorted(path for path, _ in asked) == [
        f"/api/datasets/{REPO}/revision/main",
        f"/datasets/{REPO}/resolve/main/README.md",
    ]


def test_a_private_repo_asked_for_ahead_is_asked_again_with_the_token(shards, serve, slow_headers):
    hub = serve({REPO: shards})
    hub.private[REPO] = "hf_secret"
    asked_ahead(hub, [SourceSpec(REPO)], 2)  # both refused: no credentials
    slow_headers.set()
    session = remote_session()
    assert len(session) > 0 and session.fetch(0).messages
    listings = [
        auth for path, auth in zip([r[1] for r in hub.requests], hub.authorizations) if path.startswith("/api/")
    ]
    assert listings == [None, "Bearer hf_secret"]


def test_nothing_is_asked_for_ahead_offline(demo, serve, monkeypatch):
    hub = serve({REPO: demo})
    monkeypatch.setattr(connections, "offline", lambda: True)
    assert asked_ahead(hub, [SourceSpec(REPO)], 1) == [] and hub.opened == []


def test_no_connection_is_opened_ahead_around_a_proxy(demo, serve, monkeypatch):
    """With a proxy set, requests go through huggingface_hub's client: none of ours go to the hub directly."""
    hub = serve({REPO: demo})
    monkeypatch.setattr(connections, "proxied", lambda: True)
    connections.Connections().warm(hub.url, 4)
    time.sleep(0.2)
    monkeypatch.setattr(connections, "proxied", lambda: False)
    connections.Connections().warm(hub.url, 4)
    for _ in range(100):
        if len(hub.opened) == 4:
            break
        time.sleep(0.02)
    assert len(hub.opened) == 4  # the second only


def test_a_shard_whose_footer_takes_a_second_request_holds_back_no_other_shard(demo, serve, monkeypatch):
    """The demo's first shard has a 54 KB footer (two requests when the first read is 32 KB); the second
    shard's column chunks are asked for as soon as its own footer is in, not once the first shard's is."""
    monkeypatch.setattr(hub_reads, "FOOTER_READ", 32 << 10)
    hub = serve({REPO: demo})
    hub.delay = 0.2
    remote_session()
    ranged: dict[str, list[tuple[int, int, float, float]]] = {}
    for path, byte_range, began, answered in hub.timeline:
        if byte_range:
            start, end = (int(n) for n in byte_range.removeprefix("bytes=").split("-"))
            ranged.setdefault(path.rsplit("/", 1)[-1], []).append((start, end, began, answered))
    first, second = (ranged[name] for name in sorted(ranged))
    tail_start = first[0][0]  # the first answered: the tail read with the footer's end
    rest_of_footer = next(r for r in first if r[1] == tail_start - 1)  # the footer's start, asked for second
    columns = [began for start, end, began, _ in second if end < max(e for _, e, *_ in second)]
    assert columns and min(columns) < rest_of_footer[3]


def test_a_footer_in_while_the_shard_before_is_read_has_its_chunks_asked_for_at_once(demo, serve, monkeypatch):
    """The second shard's footer comes in while the first shard's column chunks are on their way: its own
    are asked for then, not once the first shard's are in and decoded (a round trip more on a far hub)."""
    serve({REPO: demo})
    monkeypatch.setattr(hub_reads, "FOOTER_READ", 64 << 10)  # each footer in one read: the shard's first
    get_range, asked, answered = hub_reads.get_range, {}, {}

    def slowly(url: str, start: int, end: int) -> bytes:
        shard = url.rsplit("/", 1)[-1].split("-of-")[0]
        first = not any(key[0] == shard for key in asked)  # its tail, with the footer
        asked[(shard, start)] = time.monotonic()
        time.sleep({("train-00001", True): 0.1, ("train-00000", False): 0.3}.get((shard, first), 0))
        try:
            return get_range(url, start, end)
        finally:
            answered[(shard, start)] = time.monotonic()

    monkeypatch.setattr(hub_reads, "get_range", slowly)
    remote_session()
    chunks = {shard: [key for key in asked if key[0] == shard][1:] for shard in ("train-00000", "train-00001")}
    assert chunks["train-00000"] and chunks["train-00001"]
    assert min(asked[key] for key in chunks["train-00001"]) < min(answered[key] for key in chunks["train-00000"])


def test_the_verifier_index_of_trials_without_a_log_fetches_no_row_group(demo, serve):
    """The demo has trials whose verifier never ran (no log on any row): their summary needs no fetch."""
    serve({REPO: demo})
    remote = remote_session()
    local = open_session(prepare([SourceSpec(str(demo))]))
    assert any(local.verifier_output(t) is None for t in range(len(local)))
    assert build_verifier_index(remote).short == build_verifier_index(local).short
    assert not remote.datasets[0]._loaded  # every answer came from the streamed verifier column


def test_chunks_that_statistics_show_constant_are_not_read(serve, tmp_path):
    """A row group whose statistics say a column holds one value (min == max, no null) gets it from the
    footer: its chunk is never asked for, and the table read is the file's own."""
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    from tracetui.data.hub_reads import Footer, chunk_ranges, read_columns

    rows = 50
    table = pa.table(
        {
            "text": [os.urandom(1000).hex() for _ in range(3 * rows)],  # the row groups do not fit in one read
            "agent": ["terminus-2"] * (2 * rows) + ["other" if i % 2 else "terminus-2" for i in range(rows)],
            "task": [f"task-{i}" if i != 70 else None for i in range(3 * rows)],
            "model": ["gpt"] * (3 * rows - 1) + [None],
        }
    )
    (tmp_path / "data").mkdir()
    pq.write_table(table, tmp_path / "data" / "train-00000-of-00001.parquet", row_group_size=rows)
    hub = serve({REPO: tmp_path})
    hub_files = prepare([SourceSpec(REPO)], progressive=True)[0].hub_files
    assert hub_files is not None
    hub.reset_counts()
    [(_, _, footer, read)] = read_columns(hub_files, lambda n, f: ("agent", "task", "model"), 4, lambda n, f, t: t)
    assert read.equals(table.select(["agent", "task", "model"]))
    skipped = [
        start
        for index, column in ((0, "agent"), (1, "agent"), (0, "model"), (1, "model"))
        for start, _ in chunk_ranges(footer.row_group(index), Footer.of(footer).leaves([column]))
    ]
    asked = [tuple(int(x) for x in r.removeprefix("bytes=").split("-")) for m, p, r in hub.requests if r]
    assert len(asked) > 1 and not any(first <= start <= last for first, last in asked for start in skipped)


def test_the_footers_read_are_freed_once_let_go(shards, serve):
    """Reading the metadata leaves no footer in a reference cycle: each is freed when let go, not at the
    next full garbage collection (a parsed footer weighs ~10x its bytes: 40 MB more at the peak of a
    400,000-row dataset's first screen)."""
    import gc
    import weakref

    from tracetui.data.hub_metadata import layout_of
    from tracetui.data.hub_reads import Footer, read_columns

    serve({REPO: shards})
    hub_files = prepare([SourceSpec(REPO)], progressive=True)[0].hub_files
    assert hub_files is not None

    def columns(number, footer):
        layout = layout_of(footer, hub_files.paths[number])
        Footer.of(footer).leaves([layout.conversation])
        return (*layout.meta, layout.role)

    held = gc.isenabled()
    gc.disable()
    try:
        footers = [weakref.ref(footer) for _, _, footer, _ in read_columns(hub_files, columns, 2, lambda *_: None)]
        assert len(footers) == 3 and all(footer() is None for footer in footers)
    finally:
        if held:
            gc.enable()


def test_range_reads_follow_a_redirect_to_another_host(big, serve):
    """The hub sends LFS files from a CDN: a range read follows the redirect there."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    from tracetui.data.connections import Connections

    hub = serve({REPO: big})
    name = next(n for n in hub.repos[REPO].files if n.endswith(".parquet"))

    class Redirect(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", f"{hub.url}/datasets/{REPO}/resolve/main/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{name}"
        got = Connections().get(url, {"Range": "bytes=4-99", "Authorization": "Bearer not-for-the-cdn"})
    finally:
        server.shutdown()
        server.server_close()
    assert got == hub.repos[REPO].files[name].read_bytes()[4:100]


def test_range_reads_over_tls_verify_the_hubs_certificate(monkeypatch):
    """Our own connections trust what huggingface_hub's client trusts, and check certificate and host
    name, with or without its HTTP library."""
    import importlib
    import ssl

    from tracetui.data.connections import tls_context

    def without_http_libraries(name, *args):
        raise ImportError(name)

    for context in (tls_context(), None):
        if context is None:
            monkeypatch.setattr(importlib, "import_module", without_http_libraries)
            context = tls_context()
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
