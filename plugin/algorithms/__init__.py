"""Processing provider and algorithms."""
