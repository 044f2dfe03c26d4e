"""VIEScore's own code (``VIEScore.evaluate`` with its GPT-4o backbone) against a local endpoint -> the fixture.

Usage (side venv, see README.md)::

    /work/side/judges/bin/python tools/reference/judges/viescore.py /work/side/src/TIGER-AI-Lab+VIEScore

``viescore.VIEScore(backbone="gpt4o", task="t2i")`` is built from the checkout (its ``__init__`` puts the
relative ``viescore`` folder on ``sys.path``, so this runs with the checkout as the working directory); its
``GPT4o`` wrapper's ``url`` (hard-wired to api.openai.com) is pointed at the local endpoint here, the key read
from a temporary key file as ``get_api_key`` reads it. For each case ``evaluate(PIL image, prompt,
extract_all_score=True)`` asks the SC and the PQ request; the endpoint answers the case's recorded replies
(each shape ``mllm_output_to_dict`` reads: JSON with text around it, the delimiters, a bare list, a bare
number, JSON that needs ``fix_json``) and records the bodies. Written: the bodies, the Authorization header
and VIEScore's ``[SC, PQ, O]``.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as C  # noqa: E402

COMMIT = "2cbea4e8ce5721425a8772590ecdbe7d2edd1721"
KEY = "sk-local-viescore-test"

#: (prompt, image, SC reply, PQ reply); a PQ reply is keyed by the image (its text does not name the prompt)
CASES = [
    ("a red ball on a white table", "wide.png",
     'Here is my evaluation:\n{\n"score" : [7],\n"reasoning" : "A red round object, no table edge."\n}',
     '{\n"score" : [8, 6],\n"reasoning" : "Flat but clean."\n}'),
    ("a blue door with a black diagonal line", "tall.png",
     '||V^=^V||\n{\n"score" : [9],\n"reasoning" : "Blue rectangle and a diagonal line."\n}\n||V^=^V||',
     "[5, 4]"),
    ("a yellow triangle", "square.png", "10",
     '{score: 6, reasoning: simple shapes}'),
    ("two green cats", "wide.png",
     '{"score": [2], "reasoning": "No cats; the object is red."}',
     '{\n"score" : [8, 6],\n"reasoning" : "Flat but clean."\n}'),
]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    checkout = Path(argv[0]).resolve()
    images = C.make_images(C.FIXTURES / "images")
    from PIL import Image

    reply_of = {}
    rows = []
    cwd = os.getcwd()
    with C.Recorder(lambda body: reply_of[_key(body)]) as rec, tempfile.TemporaryDirectory() as tmp:
        keyfile = Path(tmp) / "secret.env"
        keyfile.write_text(KEY + "\n")
        os.chdir(checkout)          # VIEScore's __init__: sys.path.insert(0, 'viescore')
        sys.path.insert(0, str(checkout))
        try:
            from viescore import VIEScore
            from mllm_tools.openai import encode_pil_image, load_image

            scorer = VIEScore(backbone="gpt4o", task="t2i", key_path=str(keyfile))
            scorer.model.url = rec.base + "/v1/chat/completions"
            for prompt, image, sc, pq in CASES:
                url = "data:image/jpeg;base64," + encode_pil_image(load_image(Image.open(images[image])))
                reply_of[(scorer.SC_prompt.replace("<prompt>", prompt), url)] = sc
                reply_of[(scorer.PQ_prompt, url)] = pq
                n = len(rec.bodies)
                with Image.open(images[image]) as im:
                    sc_pq_o = scorer.evaluate(im, prompt, extract_all_score=True)
                assert len(rec.bodies) == n + 2, "SC and PQ asked once each (every reply parses)"
                rows.append({"prompt": prompt, "image": image, "sc_reply": sc, "pq_reply": pq,
                             "sc_body": rec.bodies[n], "pq_body": rec.bodies[n + 1],
                             "authorization": rec.headers[n]["authorization"],
                             "SC": sc_pq_o[0], "PQ": sc_pq_o[1], "O": sc_pq_o[2]})
        finally:
            os.chdir(cwd)
    C.write("viescore", {
        "model": scorer.model.model_name, "api_key": KEY, "cases": rows,
        "provenance": C.provenance(
            "TIGER-AI-Lab/VIEScore", COMMIT,
            "/work/side/judges/bin/python tools/reference/judges/viescore.py <checkout>",
            ["VIEScore(backbone='gpt4o', task='t2i', key_path=<a temporary file holding api_key>); its GPT4o "
             "wrapper's url (https://api.openai.com/v1/chat/completions) set to the local endpoint's",
             "the local endpoint (tools/reference/judges/common.py: Recorder) replies CASES' texts, by request "
             "text and image; every reply parses at the first try, so VIEScore's random guess never runs"])})
    return 0


def _key(body):
    content = body["messages"][0]["content"]
    return content[0]["text"], content[1]["image_url"]["url"]


if __name__ == "__main__":
    raise SystemExit(main())
