"""The one error type the data layer raises for a source it cannot open."""


class SourceError(Exception):
    """A source that cannot be opened; the message is one line, meant for the user as is."""
