"""Drawing backend: the figure, its artists, painting onto Agg, PNG encoding, pixel paths."""
