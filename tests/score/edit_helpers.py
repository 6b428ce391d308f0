"""Helpers to express a benchmark's metric reference edit as the pixel edit a map-reading model
would write (dx right, dy down, origins [column, row], clockwise as seen on the map)."""

from shapely.geometry import shape

from scoring.constraints.edits import apply_geometry_ops


def pixel_edit_for_reference(inst: dict, pt, extra_dx: float = 0.0, flip_rotation: bool = False) -> dict:
    feat = next(f for f in inst["scene"]["features"] if f["id"] == inst["target"])
    geom = shape(feat["geometry"])
    ops = []
    for op in inst["reference_edit"]["operations"]:
        if op["op"] == "translate":
            c = geom.centroid
            c0 = pt.task_to_pixel(c.x, c.y)
            c1 = pt.task_to_pixel(c.x + op["dx"], c.y + op["dy"])
            ops.append({"op": "translate", "dx": float(c1[0] - c0[0]), "dy": float(c1[1] - c0[1])})
        elif op["op"] in ("rotate", "scale"):
            o = op["origin"] if op["origin"] != "centroid" else list(geom.centroid.coords[0])
            col, row = pt.task_to_pixel(o[0], o[1])
            new = {k: v for k, v in op.items() if k != "origin"}
            if op["op"] == "rotate" and flip_rotation:
                new["degrees_clockwise"] = -op["degrees_clockwise"]
            ops.append({**new, "origin": [float(col), float(row)]})
        else:
            ops.append(dict(op))
        geom = apply_geometry_ops(geom, [op])
    if extra_dx:
        ops.append({"op": "translate", "dx": extra_dx, "dy": 0.0})
    return {"operations": ops}
