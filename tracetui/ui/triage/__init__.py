"""The triage screen's parts that are not widgets: labels and notes (`labels`), the query syntax of find
and search (`query`), the pager, editor and clipboard (`external`), trials read from the hub (`fetch`).
The screen (`ui/screens/triage.py`) owns them and forwards its keys to them; none of them reaches back
into it (the fetch only posts its news to the screen)."""
