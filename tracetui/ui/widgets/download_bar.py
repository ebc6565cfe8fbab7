"""The background download's progress, at the right of the status row, and the metadata of a hub dataset's
list still coming in (`Session.growing`); hidden when neither."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from ...data.session import Session
from ..format import human_size

REFRESH_SECONDS = 0.5


class DownloadBar(Horizontal):
    DEFAULT_CSS = """
    DownloadBar {
        display: none;
        width: auto;
        height: 1;
    }
    DownloadBar > Static {
        width: auto;
        height: 1;
        padding: 0 1;
        color: $text-muted;
    }
    DownloadBar > ProgressBar {
        width: 20;
        height: 1;
    }
    """

    def __init__(self, session: Session, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session

    def compose(self) -> ComposeResult:
        yield Static()
        yield ProgressBar(total=1.0, show_eta=False, show_percentage=False)

    def on_mount(self) -> None:
        self.set_interval(REFRESH_SECONDS, self.follow)

    def follow(self) -> None:
        """Show the list's metadata coming in, else the download's state (the workers write them, this
        reads them twice a second)."""
        growing, download = self.session.growing, self.session.download
        self.display = growing is not None or (download is not None and download.running)
        if not self.display:
            return
        if growing is not None:
            read, total = growing
            label, fraction = f"⇣ listing: {read:,} of {total:,} files", read / max(total, 1)
        else:
            assert download is not None  # shown: it runs
            fraction = download.fraction
            if download.converting:
                label = f"⇣ converting {download.converting:.0%}"
            else:
                label = f"⇣ {human_size(download.done)} / {human_size(download.total)}"
        self.query_one(Static).update(Text(label))
        self.query_one(ProgressBar).update(progress=fraction)
