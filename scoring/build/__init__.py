"""Building a benchmark: pools -> scenes + oracle answers -> instances (`spatialgap build`)."""
