"""One module per measured area; each exposes `run(...) -> dict` returning its result fields."""
