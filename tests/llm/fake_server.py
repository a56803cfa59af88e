#!/usr/bin/env python3
"""A loopback stand-in for LLM APIs, for avo's offline tests.

    fake_server.py PORT_FILE

Listens on 127.0.0.1 on an ephemeral port, writes the port to PORT_FILE and
serves until killed.  Both API shapes:

    POST /v1/chat/completions   OpenAI-compatible Chat Completions
    POST /v1/messages           Anthropic Messages

The behaviour is chosen by the request's model name (its prefix); attempt
counters are kept per full model name, so a test picks a fresh name such as
"retry429-openai" for each scenario:

    plain...      answers "echo: <last user text>"
    tools...      a tool call get_weather{"city": "Paris"}; once the request
                  carries the tool's result, answers "tool said: <result>"
    retry429...   first attempt 429 with Retry-After: 1, then plain
    fail500...    first two attempts 500, then plain
    stall...      waits 5 s before answering (tests set a shorter timeout)
    malformed...  200 with a body that is not JSON
    edit...       a SEARCH/REPLACE block that adds a numbered comment after
                  "#define MAX_UNROLL 8" (kernels/cpu/sgemm.c: llm_mutate and
                  llm_crossover answers that apply); editslow... the same
                  after 0.3 s
    notimpl...    501 with an HTML page carrying terminal escapes (not an
                  OpenAI-compatible server)
    gone404...    404; noput405... 405
    notcompletion... 200 with JSON that is no chat completion
    garbageafter... plain for the first request, then 200 with a body
                  that is not JSON (with an escape sequence)
    jsonstream-X... as X, but a streamed request is answered with one
                  whole JSON completion (Content-Type application/json)
    truncated...  200 with JSON cut off in the middle (correct length)
    cut...        promises more bytes than it sends, then closes
    auth401...    401 with the provider's error body
    badargs...    a tool call whose arguments are not a JSON object
    code...       answers with the text of the last user message's
                  "ANSWER:" line onwards (for operator tests)
    mutate...     answers with the prompt's first fenced code block (the
                  parent kernel) rewritten whole with a fresh numbered
                  comment in place of the parent's: a new candidate of the
                  same size every call (bench/throughput.sh)
    rendezvous... holds each request until another one is in flight too
                  (at most 5 s), then answers "peers: N" with the most
                  requests it saw in flight at once (concurrency tests)
    agent...      one agent step (operators/agent.lua) on the agent tests'
                  synth kernel: tool calls read_source, edit (SPEED 1.0 ->
                  1.25), evaluate, commit, one per answer, chosen by the
                  number of tool results the request carries
    inflight...   holds each request 0.3 s and answers "peers: N, here: M",
                  the most requests of any "inflight" model seen in flight
                  at once, in all (N) and to the request's base URL (M)
    sleepN...     waits N seconds (e.g. sleep30-openai), then plain
    agentbadargs... as agent, but the first answer is an edit call whose
                  arguments are not JSON
    agentnocompact... as agent, but a compaction call (system prompt
                  "condense...") answers 400
    agentoutage... as agent for the first two requests of the model, then
                  the server is "down": every later request has its
                  connection closed without an answer (never with
                  FAKE_LLM_UP=1 in the environment: the server is back)

    idle...       a model that only looks around: every answer to a request
                  with tools is a list_lineage call (SmolLM2-135M did that)
    idlenotc...   as idle, and a named tool_choice is ignored (a schema in
                  response_format is not)
    idleslow...   as idle, each answer after 1 s
    idlelucky...  as idle, a forced edit marks its line LUCKY (measured 3%
                  fast once, then 3% slow: a commit re-timing refuses)
    A request of an agent... or idle... model that forces a tool (a named
    tool_choice, or response_format with a schema and "call NAME now" in the
    last user message: the agent's escalation) is answered with that tool
    and willing arguments (edit raises the synth kernel's SPEED by 0.25,
    set_knobs changes one knob, commit has a message), as a tool call or as
    the JSON text of the arguments.  Logged requests carry their tools
    count, stream, tool messages, tool_choice and response_format.

    runon...      ignores max_tokens, as llama-cpp-python does while it writes
                  tool arguments: 3000 tokens of "tok " (streamed one a
                  chunk, the connection held open; the count of chunks it
                  got to write is logged as {"runon_sent": N} to
                  $FAKE_LLM_LOG)
    slowtools...  a request with tools is answered after FAKE_LLM_SLOW_S
                  seconds (default 20) with a tool call of 3000 tokens
                  whatever max_tokens says (llama-cpp-python on a CPU; with
                  "lcpy-" it streams no tool request, so avo asks unstreamed);
                  {"slow_answered": true} is logged once it has answered
    slowrunon...  as runon, a token every 50 ms (a call read to max_tokens 64
                  takes ~3 s: the status line shows the tokens streamed)

OpenAI-shape requests with "stream": true are answered with server-sent
events (chat.completion.chunk deltas, a usage chunk when
stream_options.include_usage unless FAKE_LLM_NO_USAGE is set, data:
[DONE]); the raw scenarios (malformed,
truncated, cut) answer as without stream.

A model name starting "lcpy-" behaves like llama-cpp-python with
chatml-function-calling: a streamed request with tools and tool_choice
"auto" is answered 200 with a stream of one ping comment; the rest of the name picks the
scenario.

A model name starting "lcpp-" behaves like llama.cpp's server (and
llama-cpp-python): the rest of the name picks the scenario, but a request
that carries tools without "tool_choice" has its tools dropped, so tool
scenarios answer with text (agent: "I would edit the kernel.").

Server metadata, as llama.cpp's server and vLLM give it:

    GET .../v1/models           one model entry
    GET .../props               llama.cpp's {total_slots, default_generation_settings.n_ctx}

chosen by path segments before /v1 (also accepted, and ignored, on POSTs;
"xtok" makes POST /extras/tokenize answer, as llama-cpp-python does, with
no /props):
"slotsN" makes /props answer N slots, "ctxN" a context window of N tokens
(in /props, and in /v1/models as llama.cpp's meta.n_ctx_train); "vllmN"
makes /v1/models answer as vLLM (owned_by vllm, max_model_len N).  Without
slots or ctx segments /props is 404, as on servers other than llama.cpp.
Models named "ctxerrN..." answer 400 with llama-cpp-python's error for a
prompt beyond a context window of N tokens.

With a "ctxN" segment the server also behaves as llama.cpp's does with
n_ctx N on POSTs: it counts the prompt with its own tokenizer (one token
per 2.8 characters of the texts, tool calls and tool schemas: denser than
avo's default estimate, as code is with real tokenizers), answers a prompt
of more than N tokens with HTTP 400 and llama.cpp's error body
(exceed_context_size_error, n_prompt_tokens, n_ctx), and reports the count
as usage.prompt_tokens ("limitN" does the same but the server says nothing
of itself: no /props, no tokenizer); POST /tokenize {"content"} (llama.cpp) and POST
/extras/tokenize {"input"} (llama-cpp-python) answer {"tokens": [...]}.
Every request that reached the server is logged as one JSON line
(model, prompt_tokens, status) to $FAKE_LLM_LOG when that is set.

When FAKE_LLM_KEY is set, requests must carry it (Authorization: Bearer or
x-api-key); Anthropic requests must carry anthropic-version.  Requests of the
wrong shape are answered 400 naming what is wrong.
"""
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNTS = {}
LOCK = threading.Lock()
RENDEZVOUS = threading.Condition()
IN_FLIGHT = {"now": 0, "max": 0}


def rendezvous():
    """Wait (at most 5 s) until two requests are in flight; the most seen."""
    with RENDEZVOUS:
        IN_FLIGHT["now"] += 1
        IN_FLIGHT["max"] = max(IN_FLIGHT["max"], IN_FLIGHT["now"])
        RENDEZVOUS.notify_all()
        RENDEZVOUS.wait_for(lambda: IN_FLIGHT["now"] >= 2, timeout=5)
        seen = IN_FLIGHT["max"]
    # Let the peers that arrived see each other before anyone leaves.
    time.sleep(0.05)
    with RENDEZVOUS:
        IN_FLIGHT["now"] -= 1
    return seen


FLIGHT = {"now": 0, "max": 0}


def inflight(base):
    """Hold the request 0.3 s; the most requests seen in flight at once, in
    all and to base URL `base` (the path before /chat/completions)."""
    here = "now " + base, "max " + base
    with LOCK:
        FLIGHT["now"] += 1
        FLIGHT["max"] = max(FLIGHT["max"], FLIGHT["now"])
        FLIGHT[here[0]] = FLIGHT.get(here[0], 0) + 1
        FLIGHT[here[1]] = max(FLIGHT.get(here[1], 0), FLIGHT[here[0]])
    time.sleep(0.3)
    with LOCK:
        FLIGHT["now"] -= 1
        FLIGHT[here[0]] -= 1
        return FLIGHT["max"], FLIGHT[here[1]]


def fake_tokens(text):
    """The fake tokenizer: one token per 2.8 characters."""
    return (len(text) * 10 + 27) // 28


def prompt_tokens(shape, req):
    """Tokens of a request's prompt as the ctxN server counts them."""
    n = len(req.get("system") or "") if isinstance(req.get("system"), str) else 0
    for m in req.get("messages") or []:
        content = m.get("content")
        if isinstance(content, list):
            for b in content:
                n += len(b.get("text") or "") + len(json.dumps(b.get("input", "")))
                c = b.get("content")
                n += len(c) if isinstance(c, str) else 0
        elif isinstance(content, str):
            n += len(content)
        for tc in m.get("tool_calls") or []:
            n += len(tc.get("function", {}).get("name", "")) + len(tc.get("function", {}).get("arguments", ""))
        n += 8
    for t in req.get("tools") or []:
        n += len(json.dumps(t))
    return fake_tokens("x" * n)


def log_request(doc):
    path = os.environ.get("FAKE_LLM_LOG")
    if path:
        with LOCK, open(path, "a") as f:
            f.write(json.dumps(doc) + "\n")


def bump(model):
    with LOCK:
        COUNTS[model] = COUNTS.get(model, 0) + 1
        return COUNTS[model]


def openai_text(text):
    return {"id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7}}


def openai_tool(args_text):
    return {"id": "chatcmpl-2", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": None,
                                     "tool_calls": [{"id": "call_1", "type": "function",
                                                     "function": {"name": "get_weather",
                                                                  "arguments": args_text}}]}}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5}}


def anthropic_text(text):
    return {"id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 11, "output_tokens": 7}}


def anthropic_tool(args):
    return {"id": "msg_2", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                         "input": args}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 20, "output_tokens": 5}}


AGENT_SCRIPT = [
    ("read_source", {}),
    ("edit", {"search": "#define SPEED 1.0", "replace": "#define SPEED 1.25"}),
    ("evaluate", {}),
    ("commit", {"message": "raise SPEED to 1.25"}),
]


def forced_tool(shape, req):
    """The tool a request forces, as avo's agent escalation sends it: a named
    tool_choice (OpenAI {"type": "function", "function": {"name"}},
    Anthropic {"type": "tool", "name"}), or a response_format schema with the
    tool named in the last user message ("call NAME now"); None otherwise."""
    choice = req.get("tool_choice")
    if isinstance(choice, dict):
        if shape == "openai":
            return (choice.get("function") or {}).get("name"), "tool_choice"
        return choice.get("name"), "tool_choice"
    if isinstance(req.get("response_format"), dict):
        text, _ = last_user_text(shape, req)
        m = re.search(r"call (\w+) now", text or "")
        return (m.group(1) if m else None), "schema"
    return None, None


def forced_args(name, req, lucky=False):
    """Arguments a willing model gives the forced tool `name`: the synth
    kernel's SPEED raised by 0.25 (edit), one knob changed (set_knobs), a
    message (commit), nothing otherwise.  From the schema where the request
    constrains the answer, else from the conversation's text."""
    schema = ((req.get("response_format") or {}).get("schema")) or {}
    # What the model was shown (prompts, tool results), not what it said:
    # the latest whole kernel source in the conversation.
    text = json.dumps([m.get("content") for m in req.get("messages") or []
                       if m.get("role") in ("user", "tool") and "void kernel(" in (m.get("content") or "")
                       or "Knobs: " in (m.get("content") or "")])
    if name == "edit":
        lines = ((schema.get("properties") or {}).get("search") or {}).get("enum")
        speeds = re.findall(r"#define SPEED ([0-9.]+)", text)
        line = None
        if lines is not None:
            line = next((l for l in lines if l.startswith("#define SPEED")), lines[0])
        elif speeds:
            line = "#define SPEED " + speeds[-1]
        m = re.match(r"#define SPEED ([0-9.]+)", line or "")
        new = "#define SPEED %g" % (float(m.group(1)) + 0.25) if m else (line or "") + " "
        if lucky:
            new = (line or "") + " // LUCKY"
        return {"search": line or "", "replace": new}
    if name == "set_knobs":
        choices = ((schema.get("properties") or {}).get("knobs") or {}).get("anyOf")
        if choices:
            knob, spec = next(iter(choices[0]["properties"].items()))
            return {"knobs": {knob: spec["enum"][0]}}
        m = re.search(r"Knobs: (\w+) in \{([^}]*)\} \(now ([^)]*)\)", text)
        if m:
            other = [v.strip() for v in m.group(2).split(",") if v.strip() != m.group(3)]
            return {"knobs": {m.group(1): int(other[0]) if other[0].isdigit() else other[0]}}
        return {"knobs": {}}
    if name == "commit":
        return {"message": "forced commit"}
    return {}


def forced_answer(shape, req, name, how, lucky=False):
    args = forced_args(name, req, lucky)
    if how == "schema":
        return openai_text(json.dumps(args)) if shape == "openai" else anthropic_text(json.dumps(args))
    if shape == "openai":
        return {"id": "chatcmpl-f", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "tool_calls",
                             "message": {"role": "assistant", "content": None,
                                         "tool_calls": [{"id": "call_f%d" % bump("forced-ids"),
                                                         "type": "function",
                                                         "function": {"name": name,
                                                                      "arguments": json.dumps(args)}}]}}],
                "usage": {"prompt_tokens": 30, "completion_tokens": 10}}
    return {"id": "msg_f", "type": "message", "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_f%d" % bump("forced-ids"), "name": name,
                         "input": args}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 30, "output_tokens": 10}}


def idle_answer(shape, req):
    """A model that only ever looks around (as SmolLM2-135M did): list_lineage."""
    if shape == "openai":
        return {"id": "chatcmpl-i", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "tool_calls",
                             "message": {"role": "assistant", "content": None,
                                         "tool_calls": [{"id": "call_i%d" % bump("idle-ids"),
                                                         "type": "function",
                                                         "function": {"name": "list_lineage",
                                                                      "arguments": "{}"}}]}}],
                "usage": {"prompt_tokens": 30, "completion_tokens": 10}}
    return {"id": "msg_i", "type": "message", "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_i%d" % bump("idle-ids"),
                         "name": "list_lineage", "input": {}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 30, "output_tokens": 10}}


def tool_results(shape, req):
    """Number of tool results in the whole conversation."""
    n = 0
    for m in req.get("messages") or []:
        if shape == "openai":
            n += m.get("role") == "tool"
        elif isinstance(m.get("content"), list):
            n += sum(1 for b in m["content"] if b.get("type") == "tool_result")
    return n


def agent_answer(shape, req, bad_first=False):
    n = tool_results(shape, req)
    if bad_first:
        if n == 0:
            if shape == "openai":
                return {"id": "chatcmpl-b", "object": "chat.completion",
                        "choices": [{"index": 0, "finish_reason": "tool_calls",
                                     "message": {"role": "assistant", "content": None,
                                                 "tool_calls": [{"id": "call_bad", "type": "function",
                                                                 "function": {"name": "edit",
                                                                              "arguments": "{search: oops"}}]}}],
                        "usage": {"prompt_tokens": 30, "completion_tokens": 10}}
            return {"id": "msg_b", "type": "message", "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_bad", "name": "edit",
                                 "input": "{search: oops"}],
                    "stop_reason": "tool_use", "usage": {"input_tokens": 30, "output_tokens": 10}}
        n -= 1
    if "tools" not in req:
        text = "I would edit the kernel."
        return openai_text(text) if shape == "openai" else anthropic_text(text)
    if n >= len(AGENT_SCRIPT):
        return openai_text("done") if shape == "openai" else anthropic_text("done")
    name, args = AGENT_SCRIPT[n]
    if shape == "openai":
        return {"id": "chatcmpl-a", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "tool_calls",
                             "message": {"role": "assistant", "content": None,
                                         "tool_calls": [{"id": "call_%d" % n, "type": "function",
                                                         "function": {"name": name,
                                                                      "arguments": json.dumps(args)}}]}}],
                "usage": {"prompt_tokens": 30, "completion_tokens": 10}}
    return {"id": "msg_a", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "Step %d." % (n + 1)},
                        {"type": "tool_use", "id": "toolu_%d" % n, "name": name, "input": args}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 30, "output_tokens": 10}}


def error_body(shape, kind, message):
    if shape == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": None}}


EDITS = {"n": 0}
# A content delta event, as json.dumps writes it, around its json.dumps'd text.
CONTENT_EVENT = '{"choices": [{"index": 0, "delta": {"content": %s}}]}'


def mutate_answer(text):
    """The first fenced code block of the prompt (the parent), rewritten
    whole with a fresh comment in place of the parent's: a new, valid
    candidate every call, of the same size."""
    m = re.search(r"```[a-z]*\n(.*?)```", text, re.S)
    with LOCK:
        EDITS["n"] += 1
        n = EDITS["n"]
    # The parent's own fake comment is replaced, not kept: a kernel that
    # grew by a line a generation would make each call's prompt, answer and
    # record grow with the run, and the benchmark would time that.
    source = re.sub(r"\n/\* fake edit \d+ \*/\n?$", "\n", m.group(1) if m else "")
    return "```c\n" + source.rstrip("\n") + "\n/* fake edit %d */\n```" % n


def last_user_text(shape, req):
    """(text of the last user turn, tool result or None)."""
    msgs = req.get("messages") or []
    if not msgs:
        return "", None
    last = msgs[-1]
    if shape == "openai":
        if last.get("role") == "tool":
            return "", last.get("content")
        return last.get("content") or "", None
    content = last.get("content")
    if isinstance(content, str):
        return content, None
    text, result = "", None
    for block in content or []:
        if block.get("type") == "text":
            text += block.get("text", "")
        elif block.get("type") == "tool_result":
            result = block.get("content")
    return text, result


def shape_error(shape, req):
    """What is wrong with the request's shape, or None."""
    if not isinstance(req.get("model"), str):
        return "model must be a string"
    msgs = req.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return "messages must be a non-empty array"
    if shape == "anthropic":
        if not isinstance(req.get("max_tokens"), int):
            return "max_tokens: field required"
        for m in msgs:
            if m.get("role") not in ("user", "assistant"):
                return "messages: roles must be user or assistant"
        for a, b in zip(msgs, msgs[1:]):
            if a["role"] == b["role"]:
                return "messages: roles must alternate"
        for t in req.get("tools") or []:
            if "input_schema" not in t:
                return "tools: input_schema required"
    else:
        for m in msgs:
            if m.get("role") == "tool" and not m.get("tool_call_id"):
                return "tool messages need tool_call_id"
            for tc in m.get("tool_calls") or []:
                if not isinstance(tc.get("function", {}).get("arguments"), str):
                    return "tool_calls[].function.arguments must be a string"
        for t in req.get("tools") or []:
            if t.get("type") != "function":
                return "tools[].type must be function"
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without TCP_NODELAY each
    # answer waits ~40 ms for the client's delayed ACK (benchmarks time it).
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def send_json(self, status, doc, headers=None):
        # A ctxN server reports the prompt tokens it counted.
        counted = getattr(self, "usage_prompt", None)
        if counted is not None and status == 200 and isinstance(doc.get("usage"), dict):
            doc["usage"]["prompt_tokens" if "choices" in doc else "input_tokens"] = counted
        if status == 200 and getattr(self, "want_stream", None) and "choices" in doc:
            self.send_stream(doc)
            return
        body = json.dumps(doc).encode()
        self.send_raw(status, body, headers)

    def send_raw(self, status, body, headers=None, length=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def send_stream(self, doc):
        """`doc` (a chat.completion) as server-sent events."""
        msg = doc["choices"][0]["message"]
        events = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
        text = msg.get("content") or ""
        # Content deltas as text, each json.dumps would write it: a whole
        # document per 4 characters cost this server 0.9 ms an answer,
        # which the throughput benchmarks timed as the engine's.
        events += [CONTENT_EVENT % json.dumps(text[i:i + 4]) for i in range(0, len(text), 4)]
        for k, tc in enumerate(msg.get("tool_calls") or []):
            args = tc["function"]["arguments"]
            events.append({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": k, "id": tc["id"], "type": "function",
                 "function": {"name": tc["function"]["name"], "arguments": ""}}]}}]})
            for i in range(0, len(args), 5):
                events.append({"choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": k, "function": {"arguments": args[i:i + 5]}}]}}]})
        events.append({"choices": [{"index": 0, "delta": {},
                                    "finish_reason": doc["choices"][0].get("finish_reason")}]})
        if (self.want_stream.get("stream_options") or {}).get("include_usage") and \
                not os.environ.get("FAKE_LLM_NO_USAGE"):
            events.append({"choices": [], "usage": doc.get("usage")})
        # As sse-starlette (llama-cpp-python) writes it: a ping comment while
        # the prompt is read, CR LF line ends.
        body = ": ping - 2026-01-01 00:00:00\r\n\r\n" + \
            "".join("data: %s\r\n\r\n" % (e if isinstance(e, str) else json.dumps(e))
                    for e in events) + "data: [DONE]\r\n\r\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())
        self.wfile.flush()

    def run_on(self, shape, pause=0.001):
        """3000 tokens whatever max_tokens says, `pause` seconds apart."""
        if not getattr(self, "want_stream", None):
            text = "tok " * 3000
            doc = openai_text(text) if shape == "openai" else anthropic_text(text)
            doc["usage"]["completion_tokens" if shape == "openai" else "output_tokens"] = 3000
            self.send_raw(200, json.dumps(doc).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        sent = 0
        try:
            for _ in range(3000):
                ev = {"choices": [{"index": 0, "delta": {"content": "tok "}}]}
                self.wfile.write(("data: %s\n\n" % json.dumps(ev)).encode())
                self.wfile.flush()
                sent += 1
                time.sleep(pause)
            self.wfile.write(b"data: [DONE]\n\n")
        except OSError:
            pass
        log_request({"runon_sent": sent})

    def do_GET(self):
        key = os.environ.get("FAKE_LLM_KEY")
        auth = self.headers.get("Authorization") or ""
        if key and auth != "Bearer " + key:
            self.send_json(401, error_body("openai", "authentication_error", "invalid key"))
            return
        opts = {}
        for seg in self.path.split("/"):
            for name in ("slots", "ctx", "vllm"):
                if seg.startswith(name) and seg[len(name):].isdigit():
                    opts[name] = int(seg[len(name):])
        if self.path.endswith("/v1/models"):
            entry = {"id": "/models/fake-q4.gguf", "object": "model", "owned_by": "llamacpp"}
            if "ctx" in opts:
                entry["meta"] = {"n_ctx_train": opts["ctx"] * 4}
            if "vllm" in opts:
                entry = {"id": "fake", "object": "model", "owned_by": "vllm",
                         "max_model_len": opts["vllm"]}
            self.send_json(200, {"object": "list", "data": [entry]})
            return
        if self.path.endswith("/props") and ("slots" in opts or "ctx" in opts):
            self.send_json(200, {"total_slots": opts.get("slots", 1),
                                 "default_generation_settings": {"n_ctx": opts.get("ctx", 4096)}})
            return
        self.send_json(404, {"error": {"message": "File Not Found", "code": 404}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        self.usage_prompt = None
        self.want_stream = None
        n_ctx, tokenizer = None, False
        for seg in self.path.split("/"):
            if seg.startswith("ctx") and seg[3:].isdigit():
                n_ctx, tokenizer = int(seg[3:]), True
            if seg.startswith("limit") and seg[5:].isdigit():
                n_ctx = int(seg[5:])
            if seg == "xtok" and self.path.endswith("/extras/tokenize"):
                tokenizer = True  # llama-cpp-python: a tokenizer, no /props
        if tokenizer and (self.path.endswith("/tokenize") or self.path.endswith("/extras/tokenize")):
            doc = json.loads(raw or b"{}")
            text = doc.get("content") if self.path.endswith("/tokenize") and \
                not self.path.endswith("/extras/tokenize") else doc.get("input")
            if not isinstance(text, str):
                self.send_json(400, {"error": {"message": "content must be a string"}})
                return
            self.send_json(200, {"tokens": list(range(fake_tokens(text)))})
            return
        if self.path.endswith("/chat/completions"):
            shape = "openai"
        elif self.path.endswith("/v1/messages"):
            shape = "anthropic"
        else:
            self.send_json(404, {"error": {"message": "no route " + self.path}})
            return
        key = os.environ.get("FAKE_LLM_KEY")
        if shape == "anthropic":
            given = self.headers.get("x-api-key")
            if not self.headers.get("anthropic-version"):
                self.send_json(400, error_body(shape, "invalid_request_error",
                                               "anthropic-version header required"))
                return
        else:
            auth = self.headers.get("Authorization") or ""
            given = auth[7:] if auth.startswith("Bearer ") else None
        try:
            req = json.loads(raw)
        except ValueError:
            self.send_json(400, error_body(shape, "invalid_request_error", "body is not JSON"))
            return
        model = req.get("model") or ""
        self.want_stream = req if shape == "openai" and req.get("stream") is True else None
        if model.startswith("lcpp-"):
            # llama.cpp: tools without tool_choice are not offered to the model.
            if "tool_choice" not in req:
                req.pop("tools", None)
            elif req["tool_choice"] not in ("auto", "required", "none") and shape == "openai":
                self.send_json(400, error_body(shape, "invalid_request_error",
                                               "tool_choice must be auto, required or none"))
                return
        if model.startswith("lcpy-") and self.want_stream and req.get("tools") and \
                req.get("tool_choice") == "auto":
            # llama-cpp-python's chatml-function-calling: "Automatic streaming
            # tool choice is not supported", after the 200 has gone out.
            log_request({"model": model, "empty_stream": True})
            self.send_raw(200, b": ping - 2026-01-01 00:00:00\r\n\r\n")
            return
        scenario = model[5:] if model.startswith(("lcpp-", "lcpy-")) else model
        if model.startswith("auth401") or (key and given != key):
            self.send_json(401, error_body(shape, "authentication_error", "invalid x-api-key"))
            return
        wrong = shape_error(shape, req)
        if wrong:
            self.send_json(400, error_body(shape, "invalid_request_error", wrong))
            return
        counted = prompt_tokens(shape, req) if n_ctx else None
        if n_ctx and counted > n_ctx:
            log_request({"model": model, "prompt_tokens": counted, "status": 400})
            self.send_json(400, {"error": {
                "code": 400, "type": "exceed_context_size_error",
                "message": "the request exceeds the available context size, try increasing it",
                "n_prompt_tokens": counted, "n_ctx": n_ctx}})
            return
        shape_of = {"model": model, "prompt_tokens": counted, "status": 200,
                    "tools": len(req.get("tools") or []), "stream": bool(req.get("stream")),
                    "tool_messages": sum(1 for m in req.get("messages") or [] if m.get("role") == "tool")}
        if "tool_choice" in req:
            shape_of["tool_choice"] = req["tool_choice"]
        if "response_format" in req:
            shape_of["response_format"] = req["response_format"]
        log_request(shape_of)
        n = bump(model)
        text, tool_result = last_user_text(shape, req)
        if counted is not None:
            self.usage_prompt = counted

        if scenario.startswith("retry429") and n == 1:
            self.send_json(429, error_body(shape, "rate_limit_error", "slow down"),
                           {"Retry-After": "1"})
            return
        if scenario.startswith("fail500") and n <= 2:
            self.send_json(500, error_body(shape, "api_error", "internal error"))
            return
        if scenario.startswith("stall"):
            time.sleep(5)
        if scenario.startswith("sleep"):
            digits = "".join(c for c in scenario[5:] if c.isdigit())
            time.sleep(int(digits or "1"))
        if scenario.startswith("ctxerr"):
            digits = "".join(c for c in scenario[6:] if c.isdigit())
            self.send_json(400, error_body(shape, "invalid_request_error",
                                           "Requested tokens (9000) exceed context window of %s"
                                           % (digits or "2048")))
            return
        if scenario.startswith("runon"):
            self.run_on(shape)
            return
        if scenario.startswith("slowrunon"):
            self.run_on(shape, pause=0.05)
            return
        if scenario.startswith("inflight"):
            answer = "peers: %d, here: %d" % inflight(self.path.rsplit("/", 2)[0])
            self.send_json(200, openai_text(answer) if shape == "openai" else anthropic_text(answer))
            return
        if scenario.startswith("edit"):
            if scenario.startswith("editslow"):
                time.sleep(0.3)  # calls of concurrent tasks meet in flight
            answer = ("Add note %d.\n<<<<<<< SEARCH\n#define MAX_UNROLL 8\n=======\n"
                      "#define MAX_UNROLL 8\n/* note %d */\n>>>>>>> REPLACE\n" % (n, n))
            self.send_json(200, openai_text(answer) if shape == "openai" else anthropic_text(answer))
            return
        if scenario.startswith("notimpl"):
            # Not an OpenAI-compatible server; its page carries escapes.
            self.send_raw(501, b"<html>Not Implemented\x1b]0;pwned\x07\x1b[2J</html>")
            return
        if scenario.startswith("gone404"):
            self.send_raw(404, b"Cannot POST /v1/chat/completions")
            return
        if scenario.startswith("noput405"):
            self.send_raw(405, b"Method Not Allowed")
            return
        if scenario.startswith("notcompletion"):
            self.send_raw(200, b'{"object": "list", "data": []}')
            return
        if scenario.startswith("garbageafter") and n > 1:
            self.send_raw(200, b"\x1b]52;c;cHduZWQ=\x07 garbage")
            return
        if scenario.startswith("jsonstream-"):
            self.want_stream = None  # a whole completion, Content-Type application/json
            scenario = scenario[len("jsonstream-"):]
        if scenario.startswith("malformed"):
            self.send_raw(200, b"{not json at all")
            return
        if scenario.startswith("truncated"):
            self.send_raw(200, b'{"choices": [{"message": {"content": "hel')
            return
        if scenario.startswith("cut"):
            self.send_raw(200, b'{"choices": [', length=4096)
            self.close_connection = True
            return
        if scenario.startswith("rendezvous"):
            answer = "peers: %d" % rendezvous()
            self.send_json(200, openai_text(answer) if shape == "openai" else anthropic_text(answer))
            return
        if scenario.startswith("agentoutage") and n > 2 and not os.environ.get("FAKE_LLM_UP"):
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if scenario.startswith("agentnocompact") and "condense" in json.dumps(req.get("messages")[:1]):
            self.send_json(400, error_body(shape, "invalid_request_error", "compaction refused"))
            return
        if scenario.startswith("idleslow"):
            time.sleep(1)
        forced, how = forced_tool(shape, req)
        if scenario.startswith("idlenotc") and how == "tool_choice":
            forced = None  # ignores a named tool_choice (older Ollama)
        if forced and (scenario.startswith("agent") or scenario.startswith("idle")):
            self.send_json(200, forced_answer(shape, req, forced, how, scenario.startswith("idlelucky")))
            return
        if scenario.startswith("idle"):
            if "tools" in req:
                self.send_json(200, idle_answer(shape, req))
            else:
                self.send_json(200, openai_text("I looked.") if shape == "openai" else anthropic_text("I looked."))
            return
        if scenario.startswith("agent"):
            self.send_json(200, agent_answer(shape, req, scenario.startswith("agentbadargs")))
            return
        if scenario.startswith("slowtools") and tool_result is None and "tools" in req:
            # llama-cpp-python on a CPU writing tool arguments: slow, and
            # deaf to max_tokens (what it sends, if the client still waits).
            time.sleep(float(os.environ.get("FAKE_LLM_SLOW_S", "20")))
            doc = openai_tool(json.dumps({"city": "Paris " * 1500}))
            doc["usage"]["completion_tokens"] = 3000
            try:
                self.send_json(200, doc)
            except OSError:
                pass
            log_request({"model": model, "slow_answered": True})
            return
        if scenario.startswith("tools") and tool_result is None and "tools" in req:
            if shape == "openai":
                self.send_json(200, openai_tool(json.dumps({"city": "Paris"})))
            else:
                self.send_json(200, anthropic_tool({"city": "Paris"}))
            return
        if scenario.startswith("badargs"):
            if shape == "openai":
                self.send_json(200, openai_tool("{oops"))
            else:
                doc = anthropic_tool({})
                doc["content"][1]["input"] = "{oops"
                self.send_json(200, doc)
            return
        if tool_result is not None:
            answer = "tool said: " + str(tool_result)
        elif scenario.startswith("code"):
            answer = text[text.find("ANSWER:") + 7:] if "ANSWER:" in text else text
        elif scenario.startswith("mutate"):
            answer = mutate_answer(text)
        else:
            answer = "echo: " + text
        self.send_json(200, openai_text(answer) if shape == "openai" else anthropic_text(answer))


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
