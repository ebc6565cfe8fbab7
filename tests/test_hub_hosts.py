"""The hosts a hub sent reads to, remembered in the cache for the next open (`hub_hosts`): the latest
first, a few per hub, and a damaged or unwritable cache costs nothing but the head start."""

from __future__ import annotations

import orjson

from tracetui.data import hub_hosts
from tracetui.paths import cache_dir


def test_the_latest_host_a_hub_sent_reads_to_comes_first():
    assert hub_hosts.remembered("https://hub.example/api/datasets/a") == []
    hub_hosts.remember("https://hub.example/datasets/a/resolve/x", "https://lfs.example/sha?Signature=s")
    hub_hosts.remember("https://hub.example/datasets/b/resolve/y", "https://xet.example:8443/t?sig=1")
    hub_hosts.remember("https://other.example/d", "http://user:secret@cdn.example/q")
    assert hub_hosts.remembered("https://hub.example") == ["https://xet.example:8443", "https://lfs.example"]
    assert hub_hosts.remembered("https://other.example/") == ["http://cdn.example"]  # no credentials kept
    hub_hosts.remember("https://hub.example/c", "https://third.example/z")
    assert hub_hosts.remembered("https://hub.example") == ["https://third.example", "https://xet.example:8443"]
    written = (cache_dir() / hub_hosts.FILE).read_bytes()
    assert b"Signature" not in written and b"secret" not in written  # hosts, not the signed links


def test_a_damaged_memory_is_read_as_none_and_written_whole_again():
    path = cache_dir() / hub_hosts.FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"https://hub.example": ["https://cdn.exa')  # cut off
    assert hub_hosts.remembered("https://hub.example") == []
    hub_hosts.remember("https://hub.example/r", "https://cdn.example/s")
    assert orjson.loads(path.read_bytes()) == {"https://hub.example": ["https://cdn.example"]}
    path.write_bytes(orjson.dumps({"https://hub.example": [1, "file:///etc/passwd", "https://cdn.example"], "x": 3}))
    assert hub_hosts.remembered("https://hub.example") == ["https://cdn.example"]
    path.write_bytes(b"[1, 2]")
    assert hub_hosts.remembered("https://hub.example") == []


def test_a_cache_that_cannot_be_written_loses_only_the_head_start(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(blocker / "cache"))
    hub_hosts.remember("https://hub.example/r", "https://cdn.example/s")  # no error
    assert hub_hosts.remembered("https://hub.example") == []
