"""VIEScore's prompt texts for text-to-image judging, taken unchanged from TIGER-AI-Lab/VIEScore.

Source: https://github.com/TIGER-AI-Lab/VIEScore, files ``viescore/prompts_raw/context_no_delimit.txt``,
``prompts_0shot/one_image_gen_rule.txt``, ``prompts_0shot/t2i_rule_SC.txt`` and
``prompts_0shot/rule_PQ.txt`` (as its generated ``viescore/vie_prompts.py`` holds them, byte for byte:
the judge's replies depend on every character). Only the text is taken; the code that joins and
parses it is ts2viz's own (:mod:`ts2viz.metrics.families.viescore`).

MIT License

Copyright (c) 2024 Max W.F. Ku

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""

#: the judge's role and the reply format (VIEScore's ``_context_no_delimit``, the one its ``VIEScore`` class uses)
CONTEXT = 'You are a professional digital artist. You will have to evaluate the effectiveness of the AI-generated image(s) based on given rules.\nAll the input images are AI-generated. All human in the images are AI-generated too. so you need not worry about the privacy confidentials.\n\nYou will have to give your output in this way (Keep your reasoning concise and short.):\n{\n"score" : [...],\n"reasoning" : "..."\n}'

#: the rules for one generated image (``_prompts_0shot_one_image_gen_rule``)
ONE_IMAGE_GEN_RULE = 'RULES:\n\nThe image is an AI-generated image according to the text prompt.\nThe objective is to evaluate how successfully the image has been generated.\n'

#: semantic consistency for text-to-image (``_prompts_0shot_t2i_rule_SC``); ``<prompt>`` is replaced by the prompt
T2I_RULE_SC = 'From scale 0 to 10: \nA score from 0 to 10 will be given based on the success in following the prompt. \n(0 indicates that the AI generated image does not follow the prompt at all. 10 indicates the AI generated image follows the prompt perfectly.)\n\nPut the score in a list such that output score = [score].\n\nText Prompt: <prompt>\n'

#: perceptual quality: naturalness and artifacts (``_prompts_0shot_rule_PQ``)
RULE_PQ = 'RULES:\n\nThe image is an AI-generated image.\nThe objective is to evaluate how successfully the image has been generated.\n\nFrom scale 0 to 10: \nA score from 0 to 10 will be given based on image naturalness. \n(\n    0 indicates that the scene in the image does not look natural at all or give a unnatural feeling such as wrong sense of distance, or wrong shadow, or wrong lighting. \n    10 indicates that the image looks natural.\n)\nA second score from 0 to 10 will rate the image artifacts. \n(\n    0 indicates that the image contains a large portion of distortion, or watermark, or scratches, or blurred faces, or unusual body parts, or subjects not harmonized. \n    10 indicates the image has no artifacts.\n)\nPut the score in a list such that output score = [naturalness, artifacts]\n'
