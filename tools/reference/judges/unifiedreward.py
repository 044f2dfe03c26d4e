"""UnifiedReward 2.0's own request code against a local endpoint with recorded replies -> the fixture.

Usage (side venv, see README.md)::

    /work/side/judges/bin/python tools/reference/judges/unifiedreward.py /work/side/src/CodeGoat24+UnifiedReward

For each case of :data:`CASES` the authors' script
``inference_qwen/UnifiedReward-2.0-inference/point_score_ACS_image_generation.py`` is run from their checkout
(its source read and executed with three literals substituted: ``prompt = ''``, ``image_path = ''`` and the
server URL ``"http://localhost:8080"``); it builds its instruction and calls ``vllm_qwen.vllm_request.evaluate_batch``
(``VLMessageClient``), which posts to the local endpoint here. The endpoint answers with the case's reply and
records the request body. Written: each case's prompt, image, the body the authors' client sent, the reply as
their client returned it (``model_output``) and the three scores the reply states (written here with the
reply: the authors' code has no parser; they are what a reader of the reply sees, not a computation).
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as C  # noqa: E402

SCRIPT = "inference_qwen/UnifiedReward-2.0-inference/point_score_ACS_image_generation.py"
COMMIT = "ff6f520247a2d36e2aff7b2ba53a935afd437f66"

#: (prompt, image, reply, (alignment, coherence, style) as the reply states them; None: no such line)
CASES = [
    ("a red ball on a white table", "wide.png",
     "Alignment Score (1-5): 2.694700002670288\nCoherence Score (1-5): 2.371500015258789\n"
     "Style Score (1-5): 2.802500009536743", (2.694700002670288, 2.371500015258789, 2.802500009536743)),
    ("a blue door with a black diagonal line", "tall.png",
     "Alignment Score (1-5): 4\nCoherence Score (1-5): 3\nStyle Score (1-5): 5", (4.0, 3.0, 5.0)),
    ("a yellow triangle", "square.png",
     "Here is my evaluation.\n\nAlignment Score (1-5): 5\nCoherence Score (1-5): 4.5\nStyle Score (1-5): 1",
     (5.0, 4.5, 1.0)),
    ("two green cats [sleeping]", "wide.png",
     "alignment score (1-5): 1.25\nCoherence Score (1-5): 2\nStyle Score (1-5): 3", (1.25, 2.0, 3.0)),
    ("a tall tower at night", "tall.png",
     "I cannot evaluate this image.", (None, None, None)),
    ("a yellow triangle", "wide.png",
     "Coherence Score (1-5): 3\nStyle Score (1-5): 2", (None, 3.0, 2.0)),
]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    checkout = Path(argv[0]).resolve()
    images = C.make_images(C.FIXTURES / "images")
    source = (checkout / SCRIPT).read_text(encoding="utf-8")
    reply_of = {}

    def reply(body):
        text = body["messages"][0]["content"][-1]["text"]
        caption = re.search(r"Text Caption: \[(.*)\]\Z", text, re.S).group(1)
        image = body["messages"][0]["content"][0]["image_url"]["url"]
        return reply_of[(caption, image)]

    sys.path.insert(0, str(checkout))
    rows = []
    cwd = os.getcwd()
    with C.Recorder(reply) as rec, tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # evaluate_batch writes ./results.json
        try:
            for prompt, image, text, want in CASES:
                path = str(images[image])
                code = source.replace("prompt = ''", f"prompt = {prompt!r}", 1) \
                             .replace("image_path = ''", f"image_path = {path!r}", 1) \
                             .replace('"http://localhost:8080"', repr(rec.base), 1)
                assert code.count(repr(rec.base)) == 1 and f"prompt = {prompt!r}" in code
                # the image URL the authors' client will send, to key the reply (their own encoder)
                from vllm_qwen.vllm_request import VLMessageClient
                url = "data:image/jpeg;base64," + VLMessageClient(rec.base)._encode_image(path)
                reply_of[(prompt, url)] = text
                n = len(rec.bodies)
                ns: dict = {"__name__": "unifiedreward_point_score"}
                exec(compile(code, str(checkout / SCRIPT), "exec"), ns)
                assert len(rec.bodies) == n + 1, "one request per case"
                out = ns["output"][0]
                rows.append({"prompt": prompt, "image": image, "body": rec.bodies[-1],
                             "authorization": rec.headers[-1]["authorization"], "model_output": out["model_output"],
                             "success": out["success"], "scores": dict(zip(("alignment", "coherence", "style"), want))})
        finally:
            os.chdir(cwd)
    C.write("unifiedreward", {
        "cases": rows,
        "provenance": C.provenance(
            "CodeGoat24/UnifiedReward", COMMIT,
            "/work/side/judges/bin/python tools/reference/judges/unifiedreward.py <checkout>",
            [f"{SCRIPT} executed from the checkout with `prompt = ''`, `image_path = ''` and "
             "\"http://localhost:8080\" replaced by the case's prompt, image path and the local endpoint's URL",
             "the local endpoint (tools/reference/judges/common.py: Recorder) replies CASES' text as "
             "choices[0].message.content; `scores` are the numbers each reply states, written with it "
             "(the authors' code prints the reply and has no parser)"])})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
