"""Label and panel placement decide exactly what their plain definitions decide: unions of the
other features' obstacles and of the placed boxes, every candidate tested, one slot at a time.
Scenes on whole pixels make boxes touch obstacles and each other exactly (touching is a hit)."""

import json

import numpy as np
import pytest
import shapely
from shapely.geometry import LineString, Point, Polygon, box

import scoring.render.labels.labelling as labelling
from scoring.geometry.pole import polylabel
from scoring.render.labels.obstacles import (
    MAX_POLYGON_COVER,
    SURELY_FAR_PX,
    SURELY_NEAR_PX,
    CandidateTests,
    MapObstacles,
)
from scoring.render.labels.placement import (
    LabelItem,
    Placement,
    _candidates,
    _leader,
    anchor_points,
    hidden_area,
    is_large_polygon,
    obstacle_for,
    place_box,
    place_labels,
)


class _UnionTests:
    """The collision tests by their definition: one union per item of the other features'
    obstacles, of the placed boxes (grown by 3 px) and of the leaders; nearness by that union
    buffered by 16 px."""

    def __init__(self, item, c, obstacles, placed_boxes, leaders, soft):
        self.item, self.c = item, c
        w, h = item.size
        self.boxes = shapely.box(c[:, 0], c[:, 1], c[:, 0] + w, c[:, 1] + h)
        others = [g for k, g in obstacles.items() if k != item.fid]
        self.others = shapely.union_all(others) if others else None
        self.own = obstacles.get(item.fid)
        grown = [box(x0 - 3, y0 - 3, x1 + 3, y1 + 3) for x0, y0, x1, y1 in placed_boxes]
        self.placed = shapely.union_all(grown) if grown else None
        self.leaders = shapely.union_all(leaders) if leaders else None
        self.soft = [g for k, g in soft.items() if k != item.fid]

    def _hit(self, geom):
        return shapely.intersects(self.boxes, geom) if geom is not None else np.zeros(len(self.c), bool)

    def hits(self):
        hit_own = self._hit(self.own)
        geom = self.item.geom
        if is_large_polygon(geom):
            cover = shapely.area(shapely.intersection(self.boxes, geom)) / geom.area
            hit_own = hit_own | (~hit_own & (cover > MAX_POLYGON_COVER))
        return hit_own, self._hit(self.others), self._hit(self.placed)

    def cost(self):
        cost = self.c[:, 5].copy()
        if self.others is not None:
            cost += 15.0 * shapely.intersects(self.boxes, self.others.buffer(16, quad_segs=2))
        for poly in self.soft:
            cost += 25.0 * shapely.intersects(self.boxes, poly)
        return cost

    def leader_crosses(self, i):
        w, h = self.item.size
        ax_, ay_, x0, y0 = self.c[i, 2], self.c[i, 3], self.c[i, 0], self.c[i, 1]
        lg = LineString([(ax_, ay_), (np.clip(ax_, x0, x0 + w), np.clip(ay_, y0, y0 + h))])
        return any(lg.intersects(g) for g in (self.placed, self.others, self.leaders) if g is not None)


def _place_labels_plainly(items, bounds, obstacles, blocked=(), soft=None):
    """place_labels by its definition: each label takes the free candidate of least (cost,
    index) inside the bounds whose leader crosses nothing, else the least damaging one."""
    soft = soft or {}
    placed, placed_boxes, leaders = {}, list(blocked), []
    for item in items:
        w, h = item.size
        c = _candidates(item)
        t = _UnionTests(item, c, obstacles, placed_boxes, leaders, soft)
        x0, y0 = c[:, 0], c[:, 1]
        inside = (x0 >= bounds[0]) & (y0 >= bounds[1]) & (x0 + w <= bounds[2]) & (y0 + h <= bounds[3])
        hit_own, hit_others, hit_labels = t.hits()
        cost = t.cost()
        ok = inside & ~(hit_own | hit_others | hit_labels)
        ok &= np.array([not (ok[i] and c[i, 6]) or not t.leader_crosses(i) for i in range(len(c))])
        fallback = not ok.any()
        if fallback:
            penalty = cost + 1000.0 * hit_others + 2000.0 * hit_labels + 4000.0 * hit_own + 8000.0 * ~inside
            i = int(np.argmin(penalty))
        else:
            i = int(np.argmin(np.where(ok, cost, np.inf)))
        bb = (float(x0[i]), float(y0[i]), float(x0[i] + w), float(y0[i] + h))
        anchor = (float(c[i, 2]), float(c[i, 3]))
        leader = None
        if c[i, 6] > 0:
            seg = _leader(anchor[0], anchor[1], box(*bb))
            leader = [list(map(float, seg[0])), list(map(float, seg[1]))]
            leaders.append(LineString(seg))
        placed[item.fid] = Placement(item.fid, bb, anchor, bool(c[i, 6] > 0), leader, fallback)
        placed_boxes.append(bb)
    return placed


def _scene(seed: int, n: int = 7, span: float = 420.0):
    """Points, lines (some crossing), small and large polygons on whole pixels, obstacles as
    the renderer builds them, an inset-like frame, and placed boxes."""
    rng = np.random.default_rng(seed)
    items, obstacles = [], {}
    for k in range(n):
        x, y = (float(v) for v in rng.integers(80, 80 + span, 2))
        kind = k % 4
        if kind == 0:
            g = Point(x, y)
        elif kind == 1:
            pts = [(x, y)] + [
                (x + float(rng.integers(-160, 160)), y + float(rng.integers(-160, 160))) for _ in range(2)
            ]
            g = LineString(pts)
        elif kind == 2:
            s = float(rng.integers(20, 90))
            g = Polygon([(x, y), (x + s, y), (x + s, y + s), (x, y + s)])
        else:  # large (labels may go inside), sometimes with a hole, sometimes a thin strip
            s = float(rng.integers(110, 260))
            g = Polygon([(x, y), (x + s, y + 7), (x + s - 11, y + s), (x, y + s * 0.8)])
            if rng.random() < 0.4:
                g = g.difference(Point(x + s / 2, y + s / 2).buffer(s / 6))
        clearance = float(rng.integers(3, 9))
        size = (float(rng.integers(24, 48)), float(rng.integers(16, 26)))
        items.append(LabelItem(f"F{k}", g, size, clearance))
        obstacles[f"F{k}"] = obstacle_for(g, clearance)
    fx, fy = (float(v) for v in rng.integers(100, 400, 2))
    obstacles["__frame_A"] = box(fx, fy, fx + 90, fy + 90).boundary.buffer(3)
    blocked = [
        (float(a), float(b), float(a) + 60.0, float(b) + 30.0) for a, b in rng.integers(60, 520, (3, 2))
    ]
    soft = {it.fid: it.geom for it in items if is_large_polygon(it.geom)}
    return items, obstacles, blocked, soft


def _as_dicts(placed):
    return {k: vars(v) for k, v in placed.items()}


@pytest.mark.parametrize("seed", range(40))
def test_labels_land_where_the_plain_definition_puts_them(seed):
    items, obstacles, blocked, soft = _scene(seed, n=5 + seed % 6, span=200.0 + 10 * seed)
    bounds = (6.0, 6.0, 700.0, 700.0)
    ours = place_labels(items, bounds, obstacles, blocked, soft)
    assert _as_dicts(ours) == _as_dicts(_place_labels_plainly(items, bounds, obstacles, blocked, soft))


def test_crowded_scenes_fall_back_as_the_plain_definition_does():
    fallbacks = 0
    for seed in range(6):
        items, obstacles, blocked, soft = _scene(100 + seed, n=10, span=120.0)
        bounds = (70.0, 70.0, 260.0, 260.0)
        ours = place_labels(items, bounds, obstacles, blocked, soft)
        assert _as_dicts(ours) == _as_dicts(_place_labels_plainly(items, bounds, obstacles, blocked, soft))
        fallbacks += sum(p.fallback for p in ours.values())
    assert fallbacks > 0


def _obstacle_shapes(rng):
    """Obstacles with sharp and blunt corners, crossing and overlapping each other."""
    out = []
    for _ in range(4):
        x, y = rng.uniform(100, 300, 2)
        pts = [
            (x, y),
            (x + rng.uniform(-120, 120), y + rng.uniform(-120, 120)),
            (x + rng.uniform(-40, 40), y),
        ]
        out.append(LineString(pts).buffer(rng.uniform(2, 9), quad_segs=4))
    out.append(Polygon([(150, 150), (260, 158), (152, 163)]).buffer(4, quad_segs=4))  # a spike
    return out


@pytest.mark.parametrize("seed", range(8))
def test_nearness_bounds_never_contradict_the_buffered_union(seed):
    rng = np.random.default_rng(seed)
    shapes = _obstacle_shapes(rng)
    obstacles = {f"F{k}": g for k, g in enumerate(shapes)}
    item = LabelItem("F0", shapes[0], (30.0, 18.0), 4.0)
    n = 3000
    x0, y0 = rng.uniform(40, 380, n), rng.uniform(40, 380, n)
    c = np.zeros((n, 7))
    c[:, 0], c[:, 1] = x0, y0
    tests = CandidateTests(item, c, (x0, y0, x0 + 30.0, y0 + 18.0), MapObstacles(obstacles, {}), [], [])
    idx = np.arange(n)
    sure, unsure = tests.near_bounds(idx)
    exact = shapely.intersects(
        shapely.box(x0, y0, x0 + 30.0, y0 + 18.0), shapely.union_all(shapes[1:]).buffer(16, quad_segs=2)
    )
    assert not (sure & ~exact).any()  # surely near: touches the buffer
    assert not (~sure & ~unsure & exact).any()  # surely far: does not
    assert sure.sum() > 100 and unsure.sum() > 10  # the bands are met, the cases exercised
    assert np.array_equal(tests.near_exact(idx), exact)
    assert np.array_equal(tests.cost(idx), np.where(exact, 15.0, 0.0))
    d = shapely.distance(shapely.box(x0, y0, x0 + 30.0, y0 + 18.0), shapely.union_all(shapes[1:]))
    assert (d[unsure] > SURELY_NEAR_PX - 1e-9).all() and (d[unsure] <= SURELY_FAR_PX + 1e-9).all()


def test_hits_match_the_unions_when_boxes_touch_exactly():
    # obstacles and placed boxes on whole pixels, candidate boxes touching them edge to edge
    obstacles = {"F0": Point(100, 100).buffer(5), "F1": box(140, 80, 160, 120), "F2": box(150, 60, 190, 70)}
    item = LabelItem("F0", Point(100, 100), (40.0, 20.0), 5.0)
    xs, ys = np.meshgrid(np.arange(96.0, 200.0, 1.0), np.arange(38.0, 130.0, 2.0))
    x0, y0 = xs.ravel(), ys.ravel()
    c = np.zeros((len(x0), 7))
    c[:, 0], c[:, 1] = x0, y0
    placed = [(60.0, 120.0, 100.0, 140.0)]
    tests = CandidateTests(item, c, (x0, y0, x0 + 40.0, y0 + 20.0), MapObstacles(obstacles, {}), placed, [])
    plain = _UnionTests(item, c, obstacles, placed, [], {})
    idx = np.arange(len(x0))
    ours = tests.hits(idx)
    theirs = plain.hits()
    for a, b in zip(ours, theirs, strict=True):
        assert np.array_equal(a, b)
    assert ours[1].any() and (~ours[1]).any() and ours[2].any()
    assert np.array_equal(tests.free(idx), ~(theirs[0] | theirs[1] | theirs[2]))


def test_large_polygon_cover_is_the_overlay_share():
    poly = Polygon([(0, 0), (300, 0), (300, 200), (0, 200)], [[(100, 60), (160, 60), (160, 120), (100, 120)]])
    item = LabelItem("F0", poly, (70.0, 70.0), 4.0)
    obstacles = {"F0": obstacle_for(poly, 4.0)}
    rng = np.random.default_rng(3)
    x0, y0 = rng.uniform(-80, 320, 2000), rng.uniform(-80, 220, 2000)
    # a box whose share is the threshold exactly: 0.08 * area / 70 wide
    side = 0.08 * poly.area / 70.0
    c = np.zeros((len(x0) + 1, 7))
    c[:-1, 0], c[:-1, 1] = x0, y0
    c[-1, 0], c[-1, 1] = 200.0, 20.0
    w = np.full(len(c), 70.0)
    h = np.append(np.full(len(x0), 70.0), side)
    tests = CandidateTests(
        item, c, (c[:, 0], c[:, 1], c[:, 0] + w, c[:, 1] + h), MapObstacles(obstacles, {}), [], []
    )
    idx = np.arange(len(c))
    boxes = shapely.box(c[:, 0], c[:, 1], c[:, 0] + w, c[:, 1] + h)
    share = shapely.area(shapely.intersection(boxes, poly)) / poly.area
    cover = tests._cover(idx)
    assert np.allclose(cover, share, rtol=1e-12, atol=0.0)  # the box's area for an interior box
    assert np.array_equal(cover > MAX_POLYGON_COVER, share > MAX_POLYGON_COVER)
    assert cover[-1] == share[-1]  # at the threshold, measured as the plain definition does
    hit_own = tests.hits(idx)[0]
    plain = shapely.intersects(boxes, obstacles["F0"]) | (share > MAX_POLYGON_COVER)
    assert np.array_equal(hit_own, plain)


def test_anchor_points_are_the_one_by_one_interpolations():
    poly = Polygon([(0, 0), (90, 5), (120, 80), (10, 60)], [[(30, 20), (50, 20), (40, 40)]])
    multi = shapely.MultiPolygon([poly, box(200, 200, 260, 230)])
    line = LineString([(0, 0), (40, 70), (120, 65)])
    for geom, fracs, pens in (
        (poly, (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875), [4.0] * 8),
        (multi, (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875), [4.0] * 8),
        (line, (0.5, 0.35, 0.65, 0.2, 0.8, 0.08, 0.92), [2.0 * i for i in range(7)]),
    ):
        pts = anchor_points(geom)
        along = pts[1:] if geom.geom_type != "LineString" else pts
        line_of = geom.boundary if geom.geom_type != "LineString" else geom
        for ((x, y), pen), f, p in zip(along, fracs, pens, strict=True):
            q = line_of.interpolate(f, normalized=True)
            assert (x, y, pen) == (q.x, q.y, p)
    assert anchor_points(Point(3, 4)) == [((3.0, 4.0), 0.0)]


def _place_box_plainly(size, slots, obstacles, blocked, bounds, near=None):
    w, h = size
    best, best_key = None, None
    blk = (
        shapely.union_all([box(x0 - 6, y0 - 6, x1 + 6, y1 + 6) for x0, y0, x1, y1 in blocked])
        if blocked
        else None
    )
    for order, (x0, y0) in enumerate(slots):
        x0 = min(max(x0, bounds[0]), bounds[2] - w)
        y0 = min(max(y0, bounds[1]), bounds[3] - h)
        b = box(x0, y0, x0 + w, y0 + h)
        overlap = 0.0
        if obstacles is not None and not obstacles.is_empty and obstacles.intersects(b):
            overlap += b.intersection(obstacles).area
        if blk is not None and blk.intersects(b):
            overlap += 10.0 * b.intersection(blk).area
        rank = order if near is None else float(np.hypot(x0 + w / 2 - near[0], y0 + h / 2 - near[1]))
        key = (overlap, rank, order)
        if best_key is None or key < best_key:
            best, best_key = (x0, y0, x0 + w, y0 + h), key
    return best


@pytest.mark.parametrize("seed", range(30))
def test_panels_take_the_slot_the_plain_loop_takes(seed):
    rng = np.random.default_rng(seed)
    n = 600
    feats = [Point(*rng.integers(0, n, 2)).buffer(float(rng.integers(5, 60))) for _ in range(3)]
    task = shapely.union_all(feats + [LineString(rng.integers(0, n, (3, 2))).buffer(4)])
    blocked = [(float(a), float(b), float(a + 50), float(b + 40)) for a, b in rng.integers(0, n - 50, (4, 2))]
    size = (float(rng.integers(80, 200)), float(rng.integers(60, 160)))
    # whole-pixel slots (ints, as furniture gives some) touching blocked boxes edge to edge
    slots = [(int(a), int(b)) for a, b in rng.integers(-20, n, (9, 2))]
    slots += [(blocked[0][2] + 6, blocked[0][1]), (blocked[1][0] - 6 - size[0], blocked[1][3] + 6)]
    near = (float(rng.integers(0, n)), float(rng.integers(0, n))) if seed % 2 else None
    bounds = (0.0, 0.0, float(n), float(n))
    for obstacles in (task, shapely.Polygon(), None):
        ours = place_box(size, slots, obstacles, blocked, bounds, near)
        plain = _place_box_plainly(size, slots, obstacles, blocked, bounds, near)
        assert ours == plain and [type(v) for v in ours] == [type(v) for v in plain]
        hidden = box(*ours).intersection(task).area + 10.0 * sum(
            box(*ours).intersection(box(*o)).area for o in blocked
        )
        assert hidden_area(ours, task, blocked) == hidden


def test_polylabel_takes_the_same_pole_prepared_or_not():
    strip = LineString([(0, 0), (50, 200), (100, 100)]).buffer(20)
    square = box(0, 0, 100, 100)  # symmetric cells of one priority: the queue-every-cell search
    for poly in (strip, square, box(3, 7, 250, 40)):
        plain = polylabel(poly, 0.5)
        prepared = shapely.from_wkb(shapely.to_wkb(poly))
        shapely.prepare(prepared)
        assert polylabel(prepared, 0.5).equals_exact(plain, 0.0)
        assert shapely.is_prepared(prepared) and not shapely.is_prepared(poly)  # left as they were


def test_rendered_maps_keep_the_labels_of_the_plain_definition(bench, instances, monkeypatch, tmp_path):
    from scoring.render.batch import load_render_inputs
    from scoring.render.renderer import render_map

    _, insts, ctx = load_render_inputs(bench)
    for inst in insts:
        ours = render_map(inst, ctx)[1]
        monkeypatch.setattr(labelling, "place_labels", _place_labels_plainly)
        plain = render_map(inst, ctx)[1]
        monkeypatch.undo()
        assert json.dumps(ours, sort_keys=True) == json.dumps(plain, sort_keys=True)
