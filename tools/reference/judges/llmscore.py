"""LLMScore's own LLM steps (``VisualDescriptor``, ``EvaluationInstructor``) against a local endpoint -> the fixture.

Usage (side venv with ``openai==0.28.1``, the ``openai.ChatCompletion`` API LLMScore calls; see README.md)::

    /work/side/judges/bin/python tools/reference/judges/llmscore.py /work/side/src/YujieLu10+LLMScore

For each case, the checkout's ``llm_descriptor/visual_descriptor.py`` ``VisualDescriptor("sk-...", "gpt-4")``
writes the visual description from the case's global and local descriptions and the image size, called as
``llm_score.py`` calls it (``generate_multi_granualrity_description(global, local, width, height)``), and
``llm_evaluator/evaluation_instruction.py`` ``EvaluationInstructor`` rates the prompt against it
(``generate_score_with_rationale(description, prompt)``). ``openai.api_base`` points at the local endpoint
here, which answers the case's recorded replies and records the request bodies.

LLMScore's repository has no licence, so its instruction texts are not written into the fixture: each request
is recorded as its framing (the text up to and including ``The image resolution is:{W}X{H}\\n``, resp.
``Image Description: {description}\\n``), the SHA-256 and length of the rest, and the body's other fields.
Written as well: the description ``VisualDescriptor`` returned and the four values ``EvaluationInstructor``
returned (or the exception it raised).
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as C  # noqa: E402

COMMIT = "8b898e398126d42835bc5409d5c0bf13b402c611"

#: (prompt, image, global description, [(label, box)], description reply, evaluation reply); the same image has
#: the same descriptions and description reply (its description request does not name the prompt)
CASES = [
    ("a red ball on a white table", "wide.png", "a red ball on a table", [("sports ball", (4, 4, 40, 26))],
     "  A red ball sits in the middle of a pale surface.\nIt is round and glossy.  ",
     "85\n2\nThe ball is red and round.\nThe table is not clearly white."),
    ("a blue door with a black diagonal line", "tall.png", "a blue square", [],
     "A blue rectangle fills the lower part.\n\nA thin black line crosses it diagonally.",
     "\n70\n\n1\nA blue shape and a line are visible.\n\nThe door is not recognisable.\nExtra line."),
    ("a yellow triangle", "square.png", "a yellow triangle on white",
     [("kite", (3, 3, 37, 37)), ("umbrella", (10.6, 2.2, 30.9, 20.5))],
     "A yellow triangle stands on a white background.",
     " 95 \n0\nA yellow triangle as asked.\nNo composition error."),
    ("two green cats", "wide.png", "a red ball on a table", [("sports ball", (4, 4, 40, 26))],
     "  A red ball sits in the middle of a pale surface.\nIt is round and glossy.  ", "Two cats are missing.\n4"),
]


def _frame(text: str, marker: str) -> dict:
    end = text.index(marker) + len(marker)
    rest = text[end:]
    return {"frame": text[:end], "rest_sha256": hashlib.sha256(rest.encode()).hexdigest(), "rest_chars": len(rest)}


def _body(body: dict, marker: str) -> dict:
    (msg,) = body["messages"]
    return {"fields": sorted(body), "model": body["model"], "role": msg["role"], **_frame(msg["content"], marker)}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    checkout = Path(argv[0]).resolve()
    images = C.make_images(C.FIXTURES / "images")
    sys.path.insert(0, str(checkout))
    import openai
    from PIL import Image

    from llm_descriptor.visual_descriptor import VisualDescriptor
    from llm_evaluator.evaluation_instruction import EvaluationInstructor

    replies: list[str] = []
    rows = []
    with C.Recorder(lambda body: replies.pop(0)) as rec:
        openai.api_base = rec.base + "/v1"
        descriptor = VisualDescriptor("sk-local-llmscore-test", "gpt-4")
        evaluator = EvaluationInstructor("sk-local-llmscore-test", "gpt-4")
        for prompt, image, global_desc, regions, desc_reply, eval_reply in CASES:
            local_desc = "".join(f"{label}: {[int(v) for v in box]}; " for label, box in regions)
            width, height = Image.open(images[image]).size
            replies[:] = [desc_reply, eval_reply]
            n = len(rec.bodies)
            description = descriptor.generate_multi_granualrity_description(global_desc, local_desc, width, height)
            try:
                result = {"values": list(evaluator.generate_score_with_rationale(description, prompt))}
            except ValueError as e:           # fewer than four non-empty lines: the unpacking fails
                result = {"error": f"{type(e).__name__}: {e}"}
            assert len(rec.bodies) == n + 2
            rows.append({"prompt": prompt, "image": image, "global": global_desc,
                         "regions": [[label, list(box)] for label, box in regions], "local": local_desc,
                         "size": [width, height], "description_reply": desc_reply, "evaluation_reply": eval_reply,
                         "description_body": _body(rec.bodies[n], f"The image resolution is:{width}X{height}\n"),
                         "evaluation_body": _body(rec.bodies[n + 1], f"Image Description: {description}\n"),
                         "description": description, **result})
    C.write("llmscore", {
        "model": "gpt-4", "cases": rows,
        "provenance": C.provenance(
            "YujieLu10/LLMScore", COMMIT,
            "/work/side/judges/bin/python tools/reference/judges/llmscore.py <checkout>",
            ["openai.api_base set to the local endpoint (tools/reference/judges/common.py: Recorder), which "
             "replies CASES' description and evaluation texts in turn",
             "the local descriptions are written in LocalDescriptor.dense_pred_to_caption's format from CASES' "
             "regions (GRiT is not run); the global descriptions are CASES' (BLIP-2 is not run)",
             "the instruction texts are recorded by SHA-256 and length only (the repository has no licence)"])})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
