"""`serve-agent` behaves like a real OpenAI-compatible server for what clients and proxies send."""

import http.client
import json

from runner_helpers import qa_instance

from scoring.runner.prompts import build_messages


def request(srv, method, path, body=None, headers=None, chunked=False):
    conn = http.client.HTTPConnection(*srv.server_address[:2], timeout=10)
    try:
        data = json.dumps(body).encode() if body is not None else None
        if chunked:
            conn.putrequest(method, path)
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Transfer-Encoding", "chunked")
            conn.endheaders()
            for i in range(0, len(data), 1000):
                part = data[i : i + 1000]
                conn.send(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            conn.send(b"0\r\n\r\n")
        else:
            conn.request(method, path, body=data, headers=headers or {"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, r.getheader("Content-Type"), r.read()
    finally:
        conn.close()


def messages():
    return build_messages(qa_instance(0), "geojson", "mcq", None)


def test_stream_true_gets_server_sent_events(chance):
    plain = json.loads(
        request(chance, "POST", "/v1/chat/completions", {"model": "chance", "messages": messages()})[2]
    )
    status, ctype, body = request(
        chance,
        "POST",
        "/v1/chat/completions",
        {
            "model": "chance",
            "messages": messages(),
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    assert status == 200 and ctype == "text/event-stream"
    events = [line[6:] for line in body.decode().split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text and text[0] in "ABCD" and len(text) == len(plain["choices"][0]["message"]["content"])
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["usage"]["total_tokens"] > 0


def test_models_routes_and_unknown_models(chance):
    status, _, body = request(chance, "GET", "/v1/models/chance")
    assert status == 200 and json.loads(body)["id"] == "chance"
    status, _, body = request(chance, "GET", "/v1/models/gpt-4o")
    assert status == 404 and json.loads(body)["error"]["code"] == "model_not_found"
    status, _, body = request(
        chance, "POST", "/v1/chat/completions", {"model": "gpt-4o", "messages": messages()}
    )
    assert status == 404 and "The model 'gpt-4o' does not exist" in json.loads(body)["error"]["message"]


def test_chunked_request_body_is_read(chance):
    status, _, body = request(
        chance, "POST", "/v1/chat/completions", {"model": "chance", "messages": messages()}, chunked=True
    )
    assert status == 200 and json.loads(body)["choices"][0]["message"]["content"]


def test_bad_requests_get_a_plain_message(chance):
    status, _, body = request(chance, "POST", "/v1/chat/completions", {"model": "chance"})
    assert (
        status == 400
        and json.loads(body)["error"]["message"] == "'messages' must be a list of message objects"
    )
    conn = http.client.HTTPConnection(*chance.server_address[:2], timeout=10)
    conn.request(
        "POST", "/v1/chat/completions", body=b"{not json", headers={"Content-Type": "application/json"}
    )
    r = conn.getresponse()
    assert r.status == 400 and json.loads(r.read())["error"]["message"] == "the request body is not JSON"
    conn.close()


def test_pixel_blind_agents_get_requests_without_their_images():
    from scoring.runner.agents.registry import PIXEL_BLIND, get_agent, without_images

    get_agent("tools")
    # tools and centroid compute from coordinates; chance seeds its answers with the whole
    # request, maps included
    assert "tools" in PIXEL_BLIND and "centroid" in PIXEL_BLIND and "chance" not in PIXEL_BLIND
    url = "data:image/png;base64," + "A" * 100
    msgs = [
        {"role": "system", "content": "s"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "q"}, {"type": "image_url", "image_url": {"url": url}}],
        },
    ]
    blind = without_images(msgs)
    assert blind[1]["content"][1] == {"type": "image_url", "image_url": {"url": ""}}
    assert blind[1]["content"][0] == msgs[1]["content"][0] and blind[0] == msgs[0]
    assert msgs[1]["content"][1]["image_url"]["url"] == url  # the request itself is left as sent
