"""What the user adds to a dataset and keeps across runs: labels, notes, the last view, the config.

`records`, `sqlite` and `labels` are the SQLite store (standard library only); `trial_keys` finds the
trials of a live session the records belong to; `view` is the view to resume; `unsaved` the file of
changes the disk refused; `facets` the `label` facet; `config` the config file.
"""
