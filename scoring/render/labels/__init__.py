"""Labels: collision-avoiding placement, obstacles, feature id labels."""
