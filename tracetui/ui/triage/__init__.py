"""The triage screen's parts, one concern each: the filters and sort (`filters`), the reading panes of the
selected trial (`panes`), trials read from the hub (`fetch`), search and find (`search`, on the query
syntax of `query`), export (`export`), the verifier index and `F` (`verifiers`), labels and notes
(`labels`, `labelling`), questions asked (`ask`), the pane layout and zoom (`layout`), the prompt's
answers (`prompts`), copying and the pager and editor (`outlets`, `external`, `browser`), the job
folders followed live (`live`) and the information lines (`lines`).

The screen (`ui/screens/triage.py`) composes the panes, owns the parts and routes keys (`routes`) and
messages to them. A part sees the screen only through its small host protocol (`SearchHost`…), never
imports a screen, and reports its workers' news in messages, which the screen hands back to it."""
