"""The on-disk formats one stage writes and later ones read: benchmark, map sets, run directories."""
