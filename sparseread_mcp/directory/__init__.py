"""Reading a folder: its inventory, the file index and ranking, and answers shaped like the work."""
