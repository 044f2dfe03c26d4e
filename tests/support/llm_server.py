"""A local OpenAI-compatible chat endpoint with canned replies for Gecko and T2I-FineEval tests.

The replies are fixed per prompt (``CANNED``), written in the formats the few-shot prompts ask for, so
that a test knows exactly which words, questions and decompositions the metric must end up with.
"""
from __future__ import annotations

import json
import re
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

# prompt -> (coverage reply, QA reply, FineEval decomposition reply)
CANNED = {
    "a red cat on the tree": (
        "a {1}[red, colour, 1.0] {2}[cat, entity, 1.0] {3}[on, spatial, 0.9] the {4}[tree, entity, 1.0]",
        "About {1}[red] (color):\nQ: Is the cat red?\nChoices: yes, no\nA: yes\n"
        "About {2}[cat] (entity):\nQ: Is there a cat?\nChoices: yes, no\nA: yes\n"
        "About {3}[on] (spatial):\nQ: Is the cat on the tree?\nA: yes\n"
        "About {4}[tree] (entity):\nQ: Are there trees?\nChoices: yes, no\nA: yes\n",
        "Entities: cat; tree\n"
        "1. [entity] Is there a red cat?\n"
        "2. [entity] Is there a tree?\n"
        "3. [relation] Is the cat on the tree?\n"),
    "two blue dogs with a teddy bear": (
        "{1}[two, counting, 1.0] {2}[blue, color, 1.0] {3}[dogs, entity, 1.0] with a "
        "{4}[teddy bear, entity, 1.0]",
        "About {1}[two] (counting):\nQ: Are there two dogs?\nChoices: yes, no\nA: yes\n"
        "About {2}[blue] (color):\nQ: Are the dogs blue?\nChoices: yes, no\nA: yes\n"
        "About {3}[dogs] (entity):\nQ: Are there dogs?\nChoices: yes, no\nA: yes\n"
        "About {4}[teddy bear] (entity):\nQ: Is there a teddy bear?\nChoices: yes, no\nA: yes\n",
        "Entities: dog; teddy bear\n"
        "1. [entity] Are there two blue dogs?\n"
        "2. [entity] Is there a teddy bear?\n"
        "3. [relation] Are the dogs with the teddy bear?\n"),
    "the green tree with lights": (
        "the {1}[green, color, 1.0] {2}[tree, entity, 1.0] with {3}[lights, entity, 1.0]",
        "About {1}[green] (color):\nQ: Is the tree green?\nChoices: yes, no\nA: yes\n"
        "About {2}[tree] (entity):\nQ: Is there a tree?\nChoices: yes, no\nA: yes\n"
        "About {3}[lights] (entity):\nQ: Are there lights?\nChoices: yes, no\nA: yes\n",
        "Entities: tree; lights\n"
        "1. [entity] Is there a green tree?\n"
        "2. [entity] Are there lights?\n"
        "3. [relation] Are the lights on the tree?\n"),
}


def _prompt_of(user: str) -> str:
    m = re.search(r"^Prompt:\s*(.+)$", user, re.MULTILINE)
    return m.group(1).strip() if m else ""


#: the first token's top log-probabilities a canned endpoint returns when a request asks for log-probabilities
CANNED_TOP_LOGPROBS = [("Yes", -0.25), ("No", -1.5)]


def _handler(answer: Callable[[dict, Any], str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = answer(body, self.headers)
            choice = {"message": {"role": "assistant", "content": text}}
            if body.get("logprobs"):  # the first token's top log-probabilities, asked for (VQAScore's API path)
                choice["logprobs"] = logprob_reply(body.get("model", ""), CANNED_TOP_LOGPROBS)["choices"][0]["logprobs"]
            reply = json.dumps({"choices": [choice]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *a):
            pass

    return Handler


@contextmanager
def serving_chat(answer: Callable[[dict, Any], str]) -> Iterator[str]:
    """The base URL (``.../v1``) of an OpenAI-compatible chat endpoint on a free loopback port whose
    reply to a request is ``answer(request body, request headers)``."""
    srv = HTTPServer(("127.0.0.1", 0), _handler(answer))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    finally:
        srv.shutdown()
        srv.server_close()


def canned_answer(body: dict, headers=None) -> str:
    """The canned reply to a Gecko or T2I-FineEval request, by the stage its system prompt names."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    canned = CANNED.get(_prompt_of(user))
    if canned is None:
        return "I cannot help with that."
    if "visually groundable" in system:
        return canned[0]
    if "About {N}[phrase] (type)" in system:
        return canned[1]
    return canned[2]


@contextmanager
def chat_server():
    """``(base URL, list of received request bodies)`` of a running canned-reply chat endpoint."""
    requests: list = []

    def answer(body, headers):
        requests.append(body)
        return canned_answer(body)

    with serving_chat(answer) as url:
        yield url, requests


#: VIEScore's reply shape and LLMScore's two replies (description, four-line evaluation), for the contract test
CONTRACT_VIESCORE_REPLY = '{"score": [7], "reasoning": "The image shows the prompt."}'
CONTRACT_LLMSCORE_DESCRIPTION = "A small image with a few coloured shapes."
CONTRACT_LLMSCORE_EVALUATION = "70\n1\nMostly as described.\nOne object is missing."
#: UnifiedReward 2.0's reply shape (three lines), for the contract test
CONTRACT_UNIFIEDREWARD_REPLY = "Alignment Score (1-5): 3.5\nCoherence Score (1-5): 4\nStyle Score (1-5): 2.25"


@contextmanager
def contract_chat():
    """``(base URL, list of (request body, Authorization header))`` of a chat endpoint that answers every
    family's requests in the shape it asks for: Gecko's and T2I-FineEval's (:func:`canned_answer`),
    VIEScore's (a JSON score), UnifiedReward's (three score lines) and LLMScore's (a description, then a four-line evaluation)."""
    requests: list = []

    def answer(body, headers):
        requests.append((body, headers.get("Authorization")))
        messages = body["messages"]
        content = messages[-1]["content"]
        if isinstance(content, list) and content[-1].get("type") == "text":  # UnifiedReward: the image, then text
            return CONTRACT_UNIFIEDREWARD_REPLY
        if isinstance(content, list):                     # VIEScore: text and image in one user message
            return CONTRACT_VIESCORE_REPLY
        if len(messages) == 1 and content.startswith("\nGlobal Description:"):
            return CONTRACT_LLMSCORE_DESCRIPTION
        if len(messages) == 1 and content.startswith("Text Prompt:"):
            return CONTRACT_LLMSCORE_EVALUATION
        return canned_answer(body)

    with serving_chat(answer) as url:
        yield url, requests


# -- an OpenAI-compatible endpoint that returns log-probabilities (VQAScore through an API) --------------------

def logprob_reply(model: str, top: list, *, prompt_tokens: int = 100, completion_tokens: int = 1) -> dict:
    """A chat-completions reply whose first token has the top log-probabilities ``top`` ([(token, logprob)]),
    the shape OpenAI returns for ``logprobs=true, top_logprobs=N``."""
    entries = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top]
    first = top[0] if top else ("", 0.0)
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": first[0]},
                         "logprobs": {"content": [{"token": first[0], "logprob": first[1], "bytes": None,
                                                   "top_logprobs": entries}]}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


@contextmanager
def logprob_server(reply: Callable[[dict, int], "tuple[int, dict | None]"]) -> Iterator[tuple[str, list]]:
    """``(base URL, received bodies)`` of an endpoint whose answer to the n-th request (0-based) with body
    ``b`` is ``reply(b, n) -> (HTTP status, JSON reply or None)``."""
    bodies: list = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                n = len(bodies)
                bodies.append(body)
            status, data = reply(body, n)
            raw = json.dumps(data).encode() if data is not None else b"{}"
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1", bodies
    finally:
        srv.shutdown()
        srv.server_close()
