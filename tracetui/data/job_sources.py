"""Harbor job folders as a kind of source (see `source_kinds`): a jobs root, a job folder or a trial
folder, told by its layout, opens as one dataset per job, read straight from the folders (`data/jobs`):
nothing is converted, and nothing is ever written into them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .jobs.layout import LOOKED_FOR, kind
from .sources import Progress, ResolvedSource, SourceSpec

if TYPE_CHECKING:
    from .dataset import Storage
    from .jobs.storage import JobSource


class JobFolders:
    name = "jobs"
    looks_for = f"harbor job folders ({LOOKED_FOR})"

    def claims(self, text: str, path: Path) -> bool:
        return path.is_dir() and kind(path) is not None

    def resolve(self, spec: SourceSpec, path: Path) -> ResolvedSource:
        from .jobs.opening import jobs_source

        source = jobs_source(path)
        assert source is not None, f"{path} was claimed as a job folder"
        return replace(source, display=spec.source.strip())

    def prepare(self, spec: SourceSpec, path: Path, download: bool) -> list[ResolvedSource]:
        from .jobs.opening import expand

        return list(expand(self._job(self.resolve(spec, path))))

    def ready(self, source: ResolvedSource) -> bool:
        """Quick when the cache has the job's summaries and no trial folder came since: a reopen stats
        the trials and reads only those that changed (running ones); else they are read with progress."""
        from .jobs.summaries import kept

        return kept(Path(self._job(source).dataset_id))

    def open(self, source: ResolvedSource, progress: Progress, cache_size: int | None) -> Storage:
        from .jobs.opening import open_job

        return open_job(self._job(source), progress)

    @staticmethod
    def _job(source: ResolvedSource) -> JobSource:
        from .jobs.storage import JobSource

        assert isinstance(source, JobSource), f"{source.dataset_id} is not a job folder"
        return source
