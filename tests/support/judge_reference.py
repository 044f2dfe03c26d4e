"""The judges' originals (VIEScore, LLMScore) re-written from their code, and canned judge replies.

Shared by ``tests/metrics/test_metrics_judges.py`` and ``tests/browser/test_browser_judges.py``. Written from
reading TIGER-AI-Lab/VIEScore (``viescore/__init__.py``, ``viescore/utils.py``) and YujieLu10/LLMScore, not
by calling ts2viz.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import re

# -- the originals, re-written here from their code ---------------------------------------------------------

# VIEScore's prompt files, as its VIEScore class joins them for t2i SC ("\n".join([context, rule, SC rule])).
ORIGINAL_CONTEXT_NO_DELIMIT = (
    "You are a professional digital artist. You will have to evaluate the effectiveness of the AI-generated "
    "image(s) based on given rules.\nAll the input images are AI-generated. All human in the images are "
    "AI-generated too. so you need not worry about the privacy confidentials.\n\nYou will have to give your "
    "output in this way (Keep your reasoning concise and short.):\n{\n\"score\" : [...],\n\"reasoning\" : \"...\"\n}")
ORIGINAL_ONE_IMAGE_RULE = ("RULES:\n\nThe image is an AI-generated image according to the text prompt.\n"
                           "The objective is to evaluate how successfully the image has been generated.\n")
ORIGINAL_T2I_SC = ("From scale 0 to 10: \nA score from 0 to 10 will be given based on the success in following the "
                   "prompt. \n(0 indicates that the AI generated image does not follow the prompt at all. 10 "
                   "indicates the AI generated image follows the prompt perfectly.)\n\nPut the score in a list such "
                   "that output score = [score].\n\nText Prompt: <prompt>\n")


def original_sc_prompt(prompt: str) -> str:
    return "\n".join([ORIGINAL_CONTEXT_NO_DELIMIT, ORIGINAL_ONE_IMAGE_RULE, ORIGINAL_T2I_SC]).replace("<prompt>", prompt)


def original_fix_json(s):
    s = re.sub(r'(\w+):', r'"\1":', s)

    def fmt(m):
        k, v, c = m.groups()
        v = v.strip()
        if re.match(r'^-?\d+(\.\d+)?$', v):
            v = f'[{v}]'
        elif re.match(r'^(true|false|null)$', v, re.IGNORECASE):
            pass
        else:
            v = f'"{v}"'
        return f'{k}: {v}{c}'

    return re.sub(r'(".*?"):(.*?)(,|})', fmt, s)


def original_output_to_dict(s):
    """VIEScore's mllm_output_to_dict with give_up_parsing=False (False when it cannot parse)."""
    d = '||V^=^V||'
    if s.count(d) == 2:
        a, b = s.find(d) + len(d), s.rfind(d)
    else:
        a, b = s.find('{'), s.rfind('}') + 1
        if a == -1 or b == 0:
            a, b = s.find('['), s.rfind(']') + 1
            if re.match(r'^\[\d+, ?\d+\]$', s[a:b]):
                s = json.dumps({'score': json.loads(s[a:b]), 'reasoning': 'System: output is simply a list of scores'})
                a, b = 0, len(s)
            else:
                try:
                    ok = 0 <= int(s) <= 10
                except ValueError:
                    ok = False
                if not ok:
                    return False
                s = json.dumps({'score': [int(s)], 'reasoning': 'System: output is simply a number'})
                a, b = 0, len(s)
    if a != -1 and b != -1 and a != b:
        js = s[a:b].strip().replace("\n", "")
        try:
            data = json.loads(js)
            if not isinstance(data['score'], list):
                data['score'] = [data['score']]
        except Exception:
            try:
                return json.loads(original_fix_json(js))
            except Exception:
                return False
        return data
    return False


def original_sc_score(reply):
    """``min(results['SC']['score'])``, or NaN where the original could not compute one (it would guess)."""
    got = original_output_to_dict(reply)
    try:
        scores = [float(v) for v in got['score']]
        return min(scores)
    except Exception:
        return float("nan")


def original_llmscore(reply):
    """LLMScore's generate_score_with_rationale (use_rule=False): the first four non-empty lines."""
    response = "\n".join(item for item in reply.split('\n') if item)
    try:
        overall, ec, r1, r2 = response.split("\n")[:4]
    except ValueError:
        return None
    return overall, ec, r1, r2


def encode_pil_image(image):
    """VIEScore's encode_pil_image: JPEG at PIL's default quality, base64."""
    buf = io.BytesIO()
    image.save(buf, format='JPEG')
    return base64.b64encode(buf.getvalue()).decode('utf-8')


def _num(s):
    try:
        return float(s.strip()) if re.match(r"^-?\d+(\.\d+)?$", s.strip()) else float("nan")
    except (AttributeError, ValueError):
        return float("nan")


def same(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9


# -- canned judge replies -----------------------------------------------------------------------------------

VIE_REPLIES = [
    '||V^=^V||\n{\n"score" : [7],\n"reasoning" : "The cat is red and sits on a tree."\n}\n||V^=^V||',
    'Sure! {"score": [8, 3], "reasoning": "mostly follows"}',
    '{"score": 6, "reasoning": "a single number, not a list"}',
    '[6, 0]',
    '9',
    '{score: 4, reasoning: missing the teddy bear}',
    'I cannot rate this image.',
    '[7]',
    '{"reasoning": "no score key"}',
    '{"score": ["5"], "reasoning": "a string score"}',
]


def _image_of(body) -> str:
    for c in body["messages"][0]["content"]:
        if c.get("type") == "image_url":
            return c["image_url"]["url"]
    return ""


def vie_reply(data_url: str) -> str:
    return VIE_REPLIES[int(hashlib.sha1(data_url.encode()).hexdigest(), 16) % len(VIE_REPLIES)]


