"""The one error type the data layer raises for a source it cannot open."""


class SourceError(Exception):
    """A source that cannot be opened; the message is one line, meant for the user as is."""


def first_line(exc: BaseException) -> str:
    """An exception's message cut to its first line, for a SourceError built from it."""
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
