"""Terminal recordings (asciinema casts) of a trial: the file's index (`cast`) and the terminal at any
moment of it, replayed through pyte with keyframes (`player`). No Textual, no Rich: the renderer
(`render.terminal_screen`) turns frames into styled lines."""

from .cast import Cast, Marker, RecordingError
from .player import Frame, Pen, Player

__all__ = ["Cast", "Frame", "Marker", "Pen", "Player", "RecordingError"]
