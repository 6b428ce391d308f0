"""Answers an agent process computed already, keyed by everything they are computed from.

A benchmark asks each instance's question twice (open and multiple choice) and in two modalities
that carry the same GeoJSON (geojson, together): the tools and centroid agents would parse the
same scene and run the same GIS operations (for an edit, the same search) four times or twice.
Keys hold the exact inputs (scene text, question or constraints), never a hash, so a hit is the
answer the computation gives."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

# A sweep sends a whole run (up to 2,100 requests of one modality) before the next modality's
# run asks the same instances again; the entries are small (a scene's text is a few kB).
MAXSIZE = 8192


class AnswerMemo:
    """``fn()`` computed once per key (least recently used keys dropped past `maxsize`); safe for
    the server's threads (two threads may both compute a missing key: the answer is the same)."""

    def __init__(self, maxsize: int = MAXSIZE):
        self.maxsize = maxsize
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: Hashable, fn: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                self.hits += 1
                return self._values[key]
            self.misses += 1
        value = fn()
        with self._lock:
            self._values[key] = value
            if len(self._values) > self.maxsize:
                self._values.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
