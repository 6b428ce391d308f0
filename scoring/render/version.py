"""Renderer version: bump whenever the pixels of a map can change (code, style, pinned settings)."""

RENDERER_VERSION = "1.4.0"  # 1.4: PNG deflated by libdeflate (same pixels, other bytes)
SIDECAR_SCHEMA = "spatialgap.map/1"
