"""The trace model at the bottom of the layers: messages and histories, agent actions, harness-message kinds,
and sanitizing of untrusted text. No Rich, no pyarrow."""
