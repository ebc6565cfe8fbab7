"""F on the triage screen: the verifier, focused, at a failed test's traceback; again, the next one,
then the first one of the next trial in the list that has any."""

from __future__ import annotations

from ...data.verifier_index import VerifierIndex


class FailureActions:
    """Mixed into TriageScreen (needs `session`, `trial_list`, `verifier`, `_show_trial`, `status`)."""

    verifier_index: VerifierIndex | None = None
    UNINDEXED_SCAN = 2000
    """Trials F parses on the spot, looking for the next failure, before the background index is in."""

    def action_next_failure(self) -> None:
        """F: the verifier, focused, at the traceback of the first failed test; again, at the next one,
        then at the first one of the next trial in the list that has any (wrapping at the end)."""
        self._show_trial(self.trial_list.current_trial)  # a list move still in the queue comes first
        panel = self.verifier
        panel.display = True
        following = panel.failure + 1 if panel.has_focus else 0
        if panel.goto_failure(following):
            return self._reached_failure("")
        order, start = self.trial_list.order, self.trial_list.cursor
        if not len(order):
            return self.status("No trials listed (x clears the filters).")
        scan = len(order) if self.verifier_index is not None else min(len(order), self.UNINDEXED_SCAN)
        for step in range(1, scan + 1):
            position = (start + step) % len(order)
            if self._may_have_failures(int(order[position])):
                self.trial_list.move_to(position)
                self._show_trial(self.trial_list.current_trial)
                if panel.goto_failure(0):
                    return self._reached_failure(" (from the top of the list)" if position <= start else "")
        self.status(
            "No failed tests with a traceback in the listed trials."
            if scan == len(order)
            else "No failed tests in the next trials; the rest are still being read."
        )
        return None

    def _may_have_failures(self, trial: int) -> bool:
        if self.verifier_index is not None:
            return bool(self.verifier_index.failed[trial])
        from ...verifier import parse_verifier

        return bool(parse_verifier(self.session.verifier_output(trial)).failed_tests)

    def _reached_failure(self, note: str) -> None:
        panel = self.verifier
        panel.focus()
        failures = panel.failures()
        name = failures[panel.failure][0]
        self.status(f"Failed test {panel.failure + 1}/{len(failures)}: {name}{note}  (F: next failure)")
