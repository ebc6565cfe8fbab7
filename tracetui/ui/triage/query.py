"""What the user types after `s` (search every trial) and `/` (find in the open conversation).

Both read a query the same way: `/…/` is a regular expression, anything else a literal, and the match
ignores case unless the query has an upper-case letter (smart case, as in vim and ripgrep); `/…/i`
ignores case whatever the letters.
"""

from __future__ import annotations

import re


def parse_query(text: str) -> tuple[str, bool, bool]:
    """(pattern, regex, ignore_case) of what the user typed."""
    flagged = len(text) > 3 and text.startswith("/") and text.endswith("/i")
    regex = flagged or (len(text) > 2 and text.startswith("/") and text.endswith("/"))
    pattern = text[1 : -2 if flagged else -1] if regex else text
    letters = re.sub(r"\\.", "", pattern) if regex else pattern
    return pattern, regex, flagged or not any(c.isupper() for c in letters)


def compile_query(text: str) -> re.Pattern[str]:
    """The Python pattern of a query; raises ValueError with a one-line message when invalid."""
    from ...data.search import python_regex  # the first query: off the start-up

    return python_regex(*parse_query(text))
