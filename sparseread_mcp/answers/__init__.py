"""How the engine answers one read of one file: the request resolved once, then a handler per action."""
