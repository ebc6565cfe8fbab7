"""`tracetui web`: the app served to a browser through textual-serve (the optional `web` extra).

Nothing here is imported by the terminal app; `server` needs textual-serve, `driver` only Textual.
"""
