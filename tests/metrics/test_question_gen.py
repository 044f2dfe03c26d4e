"""TIFA (few-shot) and DSG (tuples -> questions -> dependencies) question generation against a local
OpenAI-compatible HTTP server with canned replies per stage, a tiny local LLM, the disk cache, the
``ts2viz questions`` CLI and reading its CSV back through ``?questions=``."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from llm_server import serving_chat
from tiny_models import tiny
from ts2viz import metrics
from ts2viz.cli import main
from ts2viz.errors import InputError
from ts2viz.metrics.backbones.llm import LocalChat, OpenAIChat
from ts2viz.metrics.common.question_gen import QuestionGenerator, QuestionWriter
from ts2viz.metrics.families.dsg.questions import dsg_questions_from_stages, parse_numbered
from ts2viz.metrics.families.tifa.questions import parse_tifa_reply
from ts2viz.metrics.registry import question_writers
from ts2viz.qa.questions import Question, read_question_csv

TIFA_REPLY = """Sure, here they are.
Entities: cat
Activities:
Colors: red
Counting:
Other attributes:
About cat (animal):
Q: is there a cat?
Choices: yes, no
A: yes
Q: what animal is this?
Choices: cat, dog, bird, fish
A: Cat
About red (color):
Q: what color is the cat?
Choices: red, blue, green, white
A: red
Q: a question with a bad answer?
Choices: a, b
A: c
"""
REPLIES = {
    "tuple": "Here are the tuples:\n1 | entity - whole (cat)\n2 | attribute - color (cat, red)\n"
             "3 | entity - whole (tree)\n4. | relation - spatial (cat, tree, on)\n",
    "question": "1 | Is there a cat?\n2 | Is the cat red?\n3 | Is there a tree?\n4 | Is the cat on the tree?",
    "dependency": "1 | 0\n2 | 1\n3 | 0\n4 | 1, 3\n",
}


def stage_of(system: str) -> str:
    for marker, stage in (("Task: semantic tuples", "tuple"), ("Task: questions", "question"),
                          ("Task: dependencies", "dependency"), ("Given an image description", "tifa")):
        if system.startswith(marker):
            return stage
    return "unknown"


class _StageChatAPI:
    """What the chat endpoint of :func:`chat_api` answers each generation stage (``replies``), and the
    requests it received (``calls``: stage, user message, Authorization header, model)."""

    calls: list = []
    replies: dict = {}

    @classmethod
    def answer(cls, body: dict, headers) -> str:
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        stage = stage_of(system)
        cls.calls.append((stage, user, headers.get("Authorization"), body["model"]))
        return cls.replies.get(stage, "I cannot help with that.")


@pytest.fixture()
def chat_api():
    _StageChatAPI.calls = []
    _StageChatAPI.replies = {**REPLIES, "tifa": TIFA_REPLY}
    with serving_chat(_StageChatAPI.answer) as url:
        yield url


def test_dsg_three_stages_in_order_and_cached_on_disk(chat_api, tmp_path):
    gen = QuestionGenerator(OpenAIChat(chat_api, "m", api_key="sk-x"), question_writers(), cache_dir=tmp_path / "qc")
    qs = gen.generate("a red cat on a tree", "dsg")
    assert [c[0] for c in _StageChatAPI.calls] == ["tuple", "question", "dependency"]
    assert _StageChatAPI.calls[0][1].startswith("input: a red cat on a tree")
    # stages 2 and 3 are given the prompt and the stage-1 tuples, renumbered 1..n
    for stage, user, auth, model in _StageChatAPI.calls[1:]:
        assert "a red cat on a tree" in user and "4 | relation - spatial (cat, tree, on)" in user
        assert auth == "Bearer sk-x" and model == "m"
    assert [q.text for q in qs] == ["Is there a cat?", "Is the cat red?", "Is there a tree?", "Is the cat on the tree?"]
    assert [q.id for q in qs] == [0, 1, 2, 3] and [q.parents for q in qs] == [(), (0,), (), (0, 2)]
    assert all(q.choices == ("yes", "no") and q.answer == "yes" for q in qs)
    # the cache holds the questions and the raw replies; a new generator (same config) reuses it
    files = list((tmp_path / "qc" / "dsg").glob("*.json"))
    assert len(files) == 1
    rec = json.loads(files[0].read_text())
    assert rec["prompt"] == "a red cat on a tree" and set(rec["replies"]) == {"tuple", "question", "dependency"}
    again = QuestionGenerator(OpenAIChat(chat_api, "m", api_key="sk-x"), question_writers(), cache_dir=tmp_path / "qc")
    assert again.generate("a red cat on a tree", "dsg") == qs
    assert len(_StageChatAPI.calls) == 3
    # another model name is another generator config: no cache hit
    QuestionGenerator(OpenAIChat(chat_api, "other", api_key="sk-x"), question_writers(), cache_dir=tmp_path / "qc").generate(
        "a red cat on a tree", "dsg")
    assert len(_StageChatAPI.calls) == 6
    # without the cache every call goes to the LLM
    QuestionGenerator(OpenAIChat(chat_api, "m", api_key="sk-x"), question_writers(), cache_dir=tmp_path / "qc", use_cache=False).generate(
        "a red cat on a tree", "dsg")
    assert len(_StageChatAPI.calls) == 9


def test_tifa_few_shot_request_and_parsing(chat_api, tmp_path):
    gen = QuestionGenerator(OpenAIChat(chat_api, "m", api_key="k"), question_writers(), cache_dir=tmp_path / "qc")
    qs = gen.generate("a red cat", "tifa")
    assert len(_StageChatAPI.calls) == 1 and _StageChatAPI.calls[0][0] == "tifa"
    assert _StageChatAPI.calls[0][1] == "Description: a red cat\nEntities:"
    assert [(q.text, q.choices, q.answer) for q in qs] == [
        ("is there a cat?", ("yes", "no"), "yes"),
        ("what animal is this?", ("cat", "dog", "bird", "fish"), "cat"),  # answer matched to the choice's case
        ("what color is the cat?", ("red", "blue", "green", "white"), "red")]  # bad answer dropped
    assert gen.generate("a red cat", "tifa") == qs and len(_StageChatAPI.calls) == 1


def test_unusable_replies_are_clear_input_errors(chat_api, tmp_path):
    gen = QuestionGenerator(OpenAIChat(chat_api, "m", api_key="k"), question_writers(), cache_dir=tmp_path / "qc")
    _StageChatAPI.replies = {**REPLIES, "question": "1 | Is there a cat?\n2 | Is the cat red?"}
    with pytest.raises(InputError, match=r"prompt 'a red cat on a tree'.*no question for tuple\(s\) \[3, 4\]"):
        gen.generate("a red cat on a tree", "dsg")
    _StageChatAPI.replies = {**REPLIES, "dependency": "1 | 2\n2 | 1\n3 | 0\n4 | 0"}
    with pytest.raises(InputError, match="parent links form a cycle"):
        gen.generate("a red cat on a tree", "dsg")
    _StageChatAPI.replies = {**REPLIES, "tuple": "I cannot list tuples."}
    with pytest.raises(InputError, match="DSG tuple stage: the reply has no 'id | tuple' lines"):
        gen.generate("a red cat on a tree", "dsg")
    _StageChatAPI.replies = {"tifa": "Q: is there a cat?\nA: yes"}
    with pytest.raises(InputError, match="TIFA question generator reply has no question"):
        gen.generate("a red cat", "tifa")
    assert not list((tmp_path / "qc").rglob("*.json"))  # nothing cached from failures
    with pytest.raises(InputError, match="question kind must be tifa or dsg"):
        gen.generate("a red cat", "vqa")


def test_the_generator_config_is_the_one_before_the_writers_moved_to_their_families(tmp_path):
    """The writers moved from ``common/question_gen.py`` to their families (issue 41) and kept the config, so
    existing question caches and score caches stay valid: the digest and the cache file name below are what the
    generator gave before the move (commit f6ffd3c). Editing a prompt changes them, as it should."""
    class Chat:
        config = {"llm": "x"}

    gen = QuestionGenerator(Chat(), question_writers(), cache_dir=tmp_path)
    assert gen.config == {"generator": "tifa-fewshot/dsg-3stage", "prompts": "c4a05118102c", "llm": "x"}
    assert gen.cache_path("a cat", "dsg") == tmp_path / "dsg" / "a8bbd784d7e85a5b9b46072c.json"


def test_the_generator_runs_any_kind_its_writers_give(tmp_path):
    """The generator knows no family: a writer of a new kind is run, its stages' replies cached with it."""
    class Chat:
        config = {"llm": "echo"}

        def chat(self, system, user):
            return f"{system}|{user}"

    def write(prompt, ask):
        reply = ask("only", ("sys", prompt))
        return [Question(0, f"is it {reply}?", ("yes", "no"), "yes")]

    gen = QuestionGenerator(Chat(), {"demo": QuestionWriter("demo", "demo-1", ("sys",), write)}, cache_dir=tmp_path)
    assert gen.config["generator"] == "demo-1"
    assert [q.text for q in gen.generate("a cat", "demo")] == ["is it sys|a cat?"]
    rec = json.loads(gen.cache_path("a cat", "demo").read_text())
    assert rec["replies"] == {"only": "sys|a cat"} and rec["kind"] == "demo"
    with pytest.raises(InputError, match="question kind must be demo, not 'tifa'"):
        gen.generate("a cat", "tifa")


def test_parsers_are_lenient_about_layout():
    assert parse_numbered("noise\n 1 | a \n2) | b\n- 3 | c\n1 | dup\nx | y", "tuple") == {1: "a", 2: "b", 3: "c"}
    qs = dsg_questions_from_stages({1: "t1", 2: "t2", 3: "t3"}, {1: "q1?", 2: "q2?", 3: "q3?"},
                                   {2: "1, 2, 9", 3: "1 2"})  # self and unknown parents dropped; 1 has no line
    assert [q.parents for q in qs] == [(), (0,), (0, 1)]
    with pytest.raises(InputError, match="are not ids"):
        dsg_questions_from_stages({1: "t"}, {1: "q?"}, {1: "none"})
    qs = parse_tifa_reply("About x (object):\nQ: is it x?\nChoices: yes, no\nA: yes\nQ: is it x?\nChoices: yes, no\nA: yes")
    assert len(qs) == 1  # repeated question dropped


def test_local_llm_generator_runs_and_rejects_garbage(tmp_path):
    gen = QuestionGenerator(LocalChat(str(tiny("llm")), device="cpu", max_new_tokens=8), question_writers(), cache_dir=tmp_path / "qc")
    # A random tiny LLM cannot follow either format: each kind fails with a clear error, nothing cached.
    with pytest.raises(InputError, match="question generator reply for prompt 'a red cat'"):
        gen.generate("a red cat", "tifa")
    with pytest.raises(InputError, match="DSG tuple stage"):
        gen.generate("a red cat", "dsg")
    assert gen.config["llm"] == "local" and not list((tmp_path / "qc").rglob("*.json"))


def test_questions_cli_writes_csv_that_metrics_read(chat_api, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MY_KEY", "sk-cli")
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("# my prompts\na red cat on a tree\n\na red cat on a tree\n")
    out = tmp_path / "dsg_q.csv"
    rc = main(["questions", "--metric-kind", "dsg", "--prompts", str(prompts), "--generator", chat_api,
               "--generator-model", "m", "--api-key-env", "MY_KEY", "--cache", str(tmp_path / "qc"),
               "--out", str(out), "--quiet"])
    assert rc == 0 and "4 dsg questions for 1 prompts" in capsys.readouterr().out
    rows = list(csv.DictReader(open(out, newline="")))
    assert [r["parent_question_id"] for r in rows] == ["-1", "0", "-1", "0-2"]
    assert {r["choices"] for r in rows} == {"yes|no"} and _StageChatAPI.calls[0][2] == "Bearer sk-cli"
    # edit the file (a user fixing a question), then score with it
    rows[1]["question"] = "Is the cat bright red?"
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    sets = read_question_csv(out, "dsg")
    assert [q.parents for q in next(iter(sets.values()))] == [(), (0,), (), (0, 2)]
    from PIL import Image

    img = Image.fromarray(np.random.default_rng(0).integers(0, 255, (32, 32, 3), dtype=np.uint8))
    m = metrics.load(f"dsg:{tiny('blip')}?questions={out}&mapper=lexical&max_new_tokens=2", device="cpu")
    _, det = m.score_with_details([img], ["A red cat on a tree!"])  # prompt matched case/punctuation-insensitively
    assert [r["question"] for r in det[0]][:2] == ["Is there a cat?", "Is the cat bright red?"]
    # TIFA from a dataset's prompts, SEG ids kept; the cache answers the second run without the LLM
    out2 = tmp_path / "tifa_q.csv"
    args = ["questions", "--metric-kind", "tifa", "--dataset", "ts2", "--seg", "3,5", "--generator", chat_api,
            "--api-key-env", "MY_KEY", "--cache", str(tmp_path / "qc"), "--out", str(out2), "--quiet"]
    assert main(args) == 0
    n_calls = len(_StageChatAPI.calls)
    assert main(args) == 0 and len(_StageChatAPI.calls) == n_calls
    ids = {r["id"] for r in csv.DictReader(open(out2, newline=""))}
    assert ids == {"3", "5"}
    # bad input: exit 2, one line, no output file
    bad = tmp_path / "empty.txt"
    bad.write_text("# nothing\n\n")
    assert main(["questions", "--metric-kind", "tifa", "--prompts", str(bad), "--generator", chat_api,
                 "--out", str(tmp_path / "x.csv")]) == 2
    assert "no prompts" in capsys.readouterr().err and not (tmp_path / "x.csv").exists()
    _StageChatAPI.replies = {}
    assert main(["questions", "--metric-kind", "tifa", "--prompts", str(prompts), "--generator", chat_api,
                 "--no-cache", "--out", str(tmp_path / "y.csv"), "--quiet"]) == 2
    assert not (tmp_path / "y.csv").exists()


def test_metric_generator_option_uses_pipeline_and_cache(chat_api, tmp_path, monkeypatch):
    monkeypatch.setenv("TS2VIZ_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MY_KEY", "sk-test")
    from PIL import Image

    img = Image.fromarray(np.random.default_rng(1).integers(0, 255, (32, 32, 3), dtype=np.uint8))
    spec = (f"dsg:{tiny('blip')}?questions=none&generator={chat_api}&generator_model=m&api_key_env=MY_KEY"
            "&mapper=lexical&max_new_tokens=2")
    m = metrics.load(spec, device="cpu")
    s, det = m.score_with_details([img, img], ["a red cat on a tree", "a red cat on a tree"])
    assert [r["parents"] for r in det[0]] == [[], [0], [], [0, 2]] and np.isfinite(s).all()
    assert [c[0] for c in _StageChatAPI.calls] == ["tuple", "question", "dependency"]
    assert list((tmp_path / "cache" / "questions" / "dsg").glob("*.json"))
    assert "sk-test" not in json.dumps(m.config) and m.config["generator"]["url"] == chat_api
    # a fresh metric (new process, same config) finds the questions on disk
    m2 = metrics.load(spec, device="cpu")
    m2.check_prompts(["a red cat on a tree"])
    assert len(_StageChatAPI.calls) == 3
