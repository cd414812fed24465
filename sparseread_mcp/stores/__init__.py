"""Where reading sessions persist: SQLite and Redis, and the one serialization of their fields."""
