"""The served agents' fast paths give what the plain paths give: a request body read with its
maps cut out parses to json.loads' value, a request head read without the email parser to the
stdlib's, a remembered answer to the computed one, a pooled server's reply to the agent's."""

import base64
import hashlib
import json
import pickle
import random
import socket

import pytest
from runner_helpers import qa_instance

from scoring.geometry.scene import Scene
from scoring.runner.agents import edit_search, get_agent, parse_prompt
from scoring.runner.agents.edit_search import SEARCHES, EditSearch
from scoring.runner.agents.instructions import parse_instruction
from scoring.runner.agents.prompt_view import request_digest
from scoring.runner.agents.questions import ANSWERS
from scoring.runner.agents.registry import without_images
from scoring.runner.agents.request_body import MIN_SPLICED, is_verbatim, loads_request, verbatim_bytes
from scoring.runner.agents.server import AgentServer
from scoring.runner.prompts import build_messages


def data_url(seed: int, n: int = 120_000) -> str:
    return "data:image/png;base64," + base64.b64encode(random.Random(seed).randbytes(n)).decode("ascii")


def request_body(*urls: str, text: str = "Question: which?", **extra) -> bytes:
    parts = [{"type": "text", "text": text}]
    parts += [{"type": "image_url", "image_url": {"url": u, "detail": "high"}} for u in urls]
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": parts}],
    }
    return json.dumps({**body, **extra}).encode("utf-8")


BODIES = {
    "one map": request_body(data_url(0)),
    "two maps": request_body(data_url(1), data_url(2)),
    "non-ASCII text and escapes": request_body(data_url(3), text='Grüße "quoted" \\ tab\t ÷'),
    "a mark in the text": request_body(data_url(4), text="\ue000sg-spliced-0\ue000"),
    "an escaped mark and a dropped URL": b'{"a": "\\ue000sg-spliced-0\\ue000", "u": "'
    + data_url(15).encode()
    + b'", "u": 1}',
    "an escaped data URL inside the text": request_body(data_url(5), text='say "' + data_url(6) + '"'),
    "a long data URL as a key": json.dumps({"messages": [], data_url(7): 1}).encode(),
    "a long data URL with an escape": request_body(data_url(8) + "\\/x"),
    "a short data URL": request_body("data:image/png;base64,AAAA"),
    "a long URL that is not data:": request_body("https://x/" + "a" * MIN_SPLICED),
    "a duplicate key drops the first URL": b'{"u": "' + data_url(9).encode() + b'", "u": 1}',
    "a bare string": json.dumps(data_url(10)).encode(),
}


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_a_body_read_with_its_maps_cut_out_is_what_json_reads(body):
    value = loads_request(body)
    assert value == json.loads(body)
    assert json.dumps(value, sort_keys=True) == json.dumps(json.loads(body), sort_keys=True)


def test_maps_come_back_with_their_bytes_and_are_hashed_from_them():
    body = BODIES["two maps"]
    value = loads_request(body)
    urls = [p["image_url"]["url"] for p in value["messages"][1]["content"][1:]]
    assert all(type(u) is str and verbatim_bytes(u) == u.encode("ascii") for u in urls)
    assert verbatim_bytes(urls[0][:-1] + urls[0][-1]) is None  # an equal string: by identity only
    plain = json.loads(body)["messages"]
    expected = hashlib.sha256(json.dumps(plain, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    assert request_digest(value["messages"]).hexdigest() == expected
    again = pickle.loads(pickle.dumps(value))  # as sent to a worker process: hashed the plain way
    assert again == value and request_digest(again["messages"]).hexdigest() == expected
    for seed in range(40):  # more maps than are remembered: the first are forgotten, not mistaken
        loads_request(request_body(data_url(100 + seed)))
    assert verbatim_bytes(urls[0]) is None
    assert request_digest(value["messages"]).hexdigest() == expected


@pytest.mark.parametrize(
    "bad",
    [
        request_body(data_url(11))[:-2],  # truncated
        request_body(data_url(12)).replace(b"base64,", b"base64,\x01"),  # a raw control character
        b'{"u": "' + data_url(13).encode() + b'"',  # unclosed object
    ],
)
def test_a_body_json_refuses_is_refused(bad):
    with pytest.raises(ValueError):
        json.loads(bad)
    with pytest.raises(ValueError):
        loads_request(bad)


def test_blank_images_is_what_a_pixel_blind_agent_was_given():
    body = BODIES["two maps"]
    value = loads_request(body, blank_images=True)
    assert value["messages"] == without_images(json.loads(body)["messages"])
    assert value["model"] == "m"


def test_verbatim_check():
    assert is_verbatim(b"data:image/png;base64,AZaz09+/=")
    for bad in (b'a"b', b"a\\b", b"a\x1fb", b"a\x7fb", "é".encode()):
        assert not is_verbatim(b"xx" + bad + b"yy")
    assert is_verbatim(b'"ok"', 1, 3) and not is_verbatim(b'"ok"', 0, 3)


# ---- the request head, read without the email parser


def exchange(srv, raw: bytes) -> bytes:
    """Send `raw` and read until the server closes the connection."""
    with socket.create_connection(srv.server_address[:2], timeout=10) as s:
        s.sendall(raw)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def post(body: bytes, version: str = "HTTP/1.1", headers: str = "") -> bytes:
    head = f"POST /v1/chat/completions {version}\r\nHost: x\r\nContent-Length: {len(body)}\r\n{headers}"
    return head.encode("latin-1") + b"\r\n" + body


CHAT = json.dumps({"messages": build_messages(qa_instance(1), "geojson", "open", None)}).encode()


def test_http10_gets_its_reply_and_the_connection_closed(chance):
    out = exchange(chance, post(CHAT, "HTTP/1.0"))
    assert out.startswith(b"HTTP/1.1 200") and b'"Answer: ' in out


def test_a_folded_header_line_is_read_by_the_email_parser(chance):
    out = exchange(chance, post(CHAT, headers="X-Long: a\r\n  b\r\nConnection: close\r\n"))
    assert out.startswith(b"HTTP/1.1 200")


def test_an_overlong_header_line_is_refused_as_the_stdlib_does(chance):
    out = exchange(chance, post(CHAT, headers="X-Big: " + "a" * 70_000 + "\r\n"))
    assert out.startswith(b"HTTP/1.1 431") and b"Line too long" in out


def test_expect_100_continue(chance):
    out = exchange(chance, post(CHAT, headers="Expect: 100-continue\r\nConnection: close\r\n"))
    assert out.startswith(b"HTTP/1.1 100") and b"HTTP/1.1 200" in out


def test_a_body_sent_in_pieces_on_a_kept_alive_connection(chance):
    messages = build_messages(qa_instance(2), "together", "mcq", b"\x89PNG" + random.randbytes(200_000))
    raw = post(json.dumps({"messages": messages}).encode())
    expected = get_agent("chance")(messages)
    with socket.create_connection(chance.server_address[:2], timeout=10) as s:
        replies = s.makefile("rb")
        for _ in range(2):  # the same connection, twice
            s.sendall(raw[:1000])
            s.sendall(raw[1000:150_000])
            s.sendall(raw[150_000:])
            assert replies.readline().startswith(b"HTTP/1.1 200")
            head = dict(line.decode().split(": ", 1) for line in iter(replies.readline, b"\r\n"))
            reply = json.loads(replies.read(int(head["Content-Length"])))
            assert reply["choices"][0]["message"]["content"] == expected


# ---- remembered answers, pooled replies


@pytest.fixture(scope="module")
def prompts(helsinki_bench):
    out = []
    for task in ("qa", "edit"):
        lines = (helsinki_bench / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()
        for line in lines[::90]:  # a few relations of each task
            inst = json.loads(line)
            forms = ("open", "mcq") if task == "qa" else ("edit",)
            for modality, png in (("geojson", None), ("together", b"\x89PNG")):
                out += [build_messages(inst, modality, f, png) for f in forms]
    return out


@pytest.mark.parametrize("name", ["tools", "centroid"])
def test_remembered_answers_are_the_computed_ones(prompts, name):
    fn = get_agent(name)
    ANSWERS.clear()
    SEARCHES.clear()
    hits = ANSWERS.hits + SEARCHES.hits
    remembered = [fn(m) for m in prompts]
    assert ANSWERS.hits + SEARCHES.hits > hits  # the other form and modality were not recomputed
    computed = []
    for m in prompts:
        ANSWERS.clear()
        SEARCHES.clear()
        computed.append(fn(m))
    assert remembered == computed


def test_a_pooled_server_replies_as_the_agent(prompts):
    srv = AgentServer(("127.0.0.1", 0), "tools", get_agent("tools"), workers=2)
    try:
        for m in prompts:
            assert srv.reply(m) == get_agent("tools")(m)
        assert srv._worker_of(prompts[0]) == srv._worker_of(prompts[2])  # same scene, same worker
    finally:
        srv.server_close()


def one_by_one(search, max_tries=6000):
    """The edit search as it was before the batched search: every candidate through `ok`."""
    limit = search.max_disp if search.max_disp is not None else 150.0
    for gen in (search.seeds(), search.line_searches(limit), search.generic(min(limit, 150.0))):
        for ops in gen:
            if search.tries >= max_tries:
                return None
            if search.ok(ops):
                return ops
    return None


def test_the_batched_edit_search_finds_the_edit_the_one_by_one_search_finds(helsinki_bench, monkeypatch):
    lines = (helsinki_bench / "edit.jsonl").read_text(encoding="utf-8").splitlines()
    cases = []
    for line in lines[::7]:
        v = parse_prompt(build_messages(json.loads(line), "geojson", "edit", None))
        constraints, allowed = parse_instruction(v.text)
        cases.append((Scene.from_geojson(v.scene), v.target, constraints, allowed))
    found = [EditSearch(*case).solve() for case in cases]
    assert found == [one_by_one(EditSearch(*case)) for case in cases]
    assert sum(ops is not None for ops in found) > len(found) // 2

    def broken(*args, **kw):
        raise ValueError("a check that raises")

    monkeypatch.setattr(edit_search, "satisfying_edits", broken)  # back to one by one
    assert [EditSearch(*case).solve() for case in cases] == found
