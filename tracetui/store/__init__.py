"""What the user adds to a dataset and keeps across runs: labels, notes, the last view, the config."""
