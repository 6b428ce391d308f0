"""Renderer version: bump whenever the pixels of a map can change (code, style, pinned settings)."""

RENDERER_VERSION = "1.5.0"  # 1.5: edit maps framed symmetrically about the scene (issue 29)
SIDECAR_SCHEMA = "spatialgap.map/1"
