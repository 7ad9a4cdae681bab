"""Route Health's tests; `tests.support` holds what several test directories share."""
