"""OSM extract -> feature pools: reading an extract (`osm.py`) or vector layers (`vector.py`),
the pools and their water."""
