"""tracetui: read and triage datasets of coding-agent traces in the terminal."""

__version__ = "0.1.0"
