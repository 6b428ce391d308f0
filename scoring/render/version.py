"""Renderer version: bump whenever the pixels of a map can change (code, style, pinned settings)."""

RENDERER_VERSION = "1.3.0"
SIDECAR_SCHEMA = "spatialgap.map/1"
