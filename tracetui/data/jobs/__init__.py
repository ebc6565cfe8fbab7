"""Harbor job folders as a source: `tracetui jobs/`, a job folder or a trial folder, read while harbor
writes them, before anything is exported.

The strategy, in the calls the source machinery makes: `jobs_source(path)` recognises the layout (None:
not a job layout), `expand(source)` gives one source per job folder (every job is a value of the dataset
facet), `open_job(source)` reads it into a Storage (`storage.JobStorage`) whose rows are the ones harbor's
exporter would write. `follow` tells what changed in the folders while the app runs.

Those calls are in `opening`; the package imports nothing itself, so recognising a job folder (`layout`)
costs a few stats and no imports of the rest.
"""
