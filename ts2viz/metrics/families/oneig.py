"""OneIG-Bench alignment (Chang et al., 2025): DSG-style yes/no questions answered by Qwen2.5-VL, per grid cell.

A OneIG-Bench image is a grid of ``m x n`` generations of one prompt (``cells=``; the benchmark asks for 4, as
2x2). The grid is cut into its cells (an all-black cell, a failed generation, is dropped), each cell goes
through a JPEG round trip (OneIG saves the crops as ``.jpg`` at Pillow's default quality and reads them back)
and is resized by ``qwen_vl_utils``' rule. Every question of the prompt (a ``Q_D/*.json`` file: questions and
their parent questions) is asked of every cell as ``"{question}. Please answer 'Yes' or 'No' only."`` in the
model's chat template, greedy, at most 128 new tokens; an answer scores 1 only if it is exactly ``"Yes"``; a
question scores 0 when one of its direct parents' answers did not score 1 (parent ``0``: none); a cell's score
is the mean over question ids 1..N, the image's the mean over its cells (NaN when every cell is black).

This is OneIG-Bench/OneIG-Benchmark ``scripts/alignment/alignment_score.py`` (``alignment_score``) with
``scripts/utils/utils.py`` (``split_mxn_grid``) and ``scripts/utils/inference.py``
(``Qwen2_5VLBatchInferencer.infer_semantic``) at commit 41b4983, proved on a reference fixture its own code
made (``tests/metrics/reference/test_oneig_reference.py``). The repository has no licence: its question files
and prompt table are read from the user's copy (``questions=``, ``prompts=``), never bundled.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Sequence

import numpy as np

from ...errors import InputError
from ...qa.questions import prompt_key
from ..common.base import Metric
from ..common.spec import Spec
from ..family import Card, Family, Fidelity, Option

#: OneIG's question to the answerer (``infer_semantic``)
QUESTION_TEMPLATE = "{}. Please answer 'Yes' or 'No' only."
#: the one answer that scores 1 (``float(ans == "Yes")``)
YES = "Yes"
#: ``batch_inference``'s ``max_new_tokens``
MAX_NEW_TOKENS = 128
#: OneIG's JPEG round trip of each cell (``image.save(".../i.jpg")``: Pillow's default quality, 75)
JPEG_ROUND_TRIP = True
#: drop a cell whose every pixel is (0, 0, 0) (``split_mxn_grid``'s ``is_black_image``)
DROP_BLACK_CELLS = True
#: a question is zeroed when a *direct* parent's raw score is 0 (``alignment_score`` reads ``score``, not the
#: filtered scores, so the rule does not pass down a chain)
TRANSITIVE_PARENTS = False
#: OneIG-Bench.csv category -> the class item whose ``Q_D/<item>.json`` holds its questions
CLASS_ITEMS = {"Anime_Stylization": "anime", "Portrait": "human", "General_Object": "object",
               "Multilingualism": "multilingualism"}
#: the answerers OneIG's recipe is for (qwen_vl_utils' 28-pixel rule)
QWEN_KINDS = ("qwen2_5_vl", "qwen2_vl")


def yes_score(answer: str) -> float:
    """OneIG's ``float(ans == "Yes")``: 1 for the exact answer ``Yes`` only.

    Parameters
    ----------
    answer : str
        The decoded answer, as generated (not stripped).

    Returns
    -------
    float
        1.0 or 0.0.

    Examples
    --------
    >>> yes_score("Yes"), yes_score(" Yes"), yes_score("yes"), yes_score("Yes.")
    (1.0, 0.0, 0.0, 0.0)
    """
    return float(answer == YES)


def cell_score(raw: dict[int, float], dependencies: dict[int, list[int]]) -> float:
    """One cell's score from its raw answer scores by question id, as ``alignment_score`` computes it.

    A question is zeroed when one of its direct parents (``0``: none) has raw score 0; a parent id that is not a
    question is skipped (OneIG prints "The score is not a number." and goes on). The mean runs over ids 1..N.

    Parameters
    ----------
    raw : dict of int to float
        ``yes_score`` of the answer to each question, by id (1..N).
    dependencies : dict of int to list of int
        Each question's parent ids.

    Returns
    -------
    float
        The cell's score.

    Examples
    --------
    >>> cell_score({1: 0.0, 2: 1.0, 3: 1.0}, {1: [0], 2: [1], 3: [2]})   # 2 zeroed by 1; 3's parent 2 said Yes
    0.3333333333333333
    """
    kept = dict(raw)
    for qid, parents in dependencies.items():
        for p in parents:
            if p == 0 or p not in raw:
                continue
            if (kept if TRANSITIVE_PARENTS else raw)[p] == 0:
                kept[qid] = 0.0
                break
    return sum(kept[q] for q in range(1, len(kept) + 1)) / len(kept)


def grid_cells(image, cells: tuple[int, int]) -> list:
    """The cells of a grid image as OneIG's ``split_mxn_grid`` cuts them, black ones dropped, JPEG round-tripped.

    ``cells = (m, n)``: m columns and n rows, each ``width // m`` x ``height // n`` (the remainder at the right
    and bottom is not read), row by row.

    Parameters
    ----------
    image : PIL.Image.Image
        The RGB grid.
    cells : tuple of int
        ``(m, n)``.

    Returns
    -------
    list of PIL.Image.Image
        The kept cells (RGB), after the JPEG round trip.

    Examples
    --------
    >>> from PIL import Image
    >>> im = Image.new("RGB", (9, 4), (200, 10, 10)); im.paste((0, 0, 0), (4, 0, 9, 4))
    >>> [c.size for c in grid_cells(im, (2, 1))]
    [(4, 4)]
    """
    from PIL import Image

    m, n = cells
    w, h = image.size
    cw, ch = w // m, h // n
    out = []
    for i in range(n):
        for j in range(m):
            cell = image.crop((j * cw, i * ch, (j + 1) * cw, (i + 1) * ch))
            if DROP_BLACK_CELLS and not np.asarray(cell).any():
                continue
            if JPEG_ROUND_TRIP:
                buf = io.BytesIO()
                cell.save(buf, format="JPEG")
                buf.seek(0)
                cell = Image.open(buf)
                cell.load()
            out.append(cell.convert("RGB"))
    return out


def parse_cells(value: str) -> tuple[int, int]:
    """``MxN`` (``2x2``, ``1x4``, or OneIG's ``image_grid`` ``2,2``) as ``(m columns, n rows)``.

    Parameters
    ----------
    value : str
        The ``cells=`` option.

    Returns
    -------
    tuple of int
        ``(m, n)``.

    Raises
    ------
    InputError
        If it is not two positive integers.

    Examples
    --------
    >>> parse_cells("2x2"), parse_cells("4,1")
    ((2, 2), (4, 1))
    """
    parts = str(value).lower().replace(",", "x").split("x")
    try:
        m, n = (int(p) for p in parts)
    except ValueError:
        m = n = 0
    if m < 1 or n < 1:
        raise InputError(f"oneig: cells must be MxN (columns x rows, e.g. 2x2), not {value!r}")
    return m, n


def read_question_file(path: str | Path) -> dict[str, tuple[dict[int, str], dict[int, list[int]]]]:
    """A OneIG ``Q_D/<class>.json``: per prompt id its questions and their parents.

    Each value has ``question`` and ``dependency``, JSON objects (or JSON strings of them, as released) from
    question ids (1..N) to a question, resp. a list of parent ids (``0``: no parent).

    Parameters
    ----------
    path : str or pathlib.Path
        The ``.json`` file.

    Returns
    -------
    dict of str to (dict, dict)
        By prompt id: the questions by id and the parent ids by id.

    Raises
    ------
    InputError
        If the file cannot be read, or an entry (named by its prompt id) is not in that layout.
    """
    p = Path(path).expanduser()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise InputError(f"{p}: cannot read the OneIG question file ({e})") from None
    if not isinstance(data, dict) or not data:
        raise InputError(f"{p}: expected a JSON object from prompt ids to questions, as OneIG's Q_D/*.json")
    out = {}
    for pid, item in data.items():
        try:
            q, d = item["question"], item["dependency"]
            q = json.loads(q) if isinstance(q, str) else q
            d = json.loads(d) if isinstance(d, str) else d
            questions = {int(k): str(v) for k, v in q.items()}
            deps = {int(k): [int(x) for x in v] for k, v in d.items()}
        except (TypeError, KeyError, ValueError, AttributeError) as e:
            raise InputError(f"{p}: prompt {pid}: expected 'question' and 'dependency' objects keyed by question id "
                             f"(OneIG's Q_D layout) ({e})") from None
        if sorted(questions) != list(range(1, len(questions) + 1)):
            raise InputError(f"{p}: prompt {pid}: question ids must be 1..{len(questions)}, not {sorted(questions)}")
        out[str(pid)] = (questions, deps)
    return out


def read_prompt_table(path: str | Path) -> dict[str, tuple[str, str]]:
    """``OneIG-Bench.csv`` / ``OneIG-Bench-ZH.csv``: the (category, id) of each prompt, by its prompt key.

    Parameters
    ----------
    path : str or pathlib.Path
        The CSV file.

    Returns
    -------
    dict of str to (str, str)
        ``(category, id)`` by :func:`~ts2viz.qa.questions.prompt_key` of the prompt text.

    Raises
    ------
    InputError
        If the file cannot be read or lacks ``category``, ``id`` and ``prompt_en`` (or ``prompt_cn``).
    """
    p = Path(path).expanduser()
    try:
        with open(p, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise InputError(f"{p}: cannot read the OneIG prompt table ({e})") from None
    cols = set(rows[0]) if rows else set()
    text = "prompt_en" if "prompt_en" in cols else "prompt_cn"
    if not {"category", "id", text} <= cols:
        raise InputError(f"{p}: expected the columns category, id and prompt_en (or prompt_cn), as OneIG-Bench.csv")
    out = {}
    for row in rows:
        if row[text]:
            out[prompt_key(row[text])] = (row["category"], row["id"])
    return out


def _digest(path: Path) -> str:
    return f"{path.name}:{hashlib.sha1(path.read_bytes()).hexdigest()[:16]}"


class OneIGAlignment(Metric):
    """OneIG-Bench's alignment score of each grid image (see the module docstring).

    :attr:`last_details` lists per image the cells kept and, per question, its parents and the answers per cell.
    """

    name = "oneig"
    has_details = True

    def __init__(self, spec: Spec, vqa, sets: dict, table: dict, cells: tuple[int, int], source: dict,
                 batch_size: int | None = None):
        config = {"family": "oneig", **vqa.config, **source, "question_template": QUESTION_TEMPLATE,
                  "yes": "exact 'Yes'", "parents": "direct", "cells": f"{cells[0]}x{cells[1]}",
                  "cell_preprocessing": "black cells dropped, JPEG round trip (Pillow default quality), qwen_vl_utils "
                                        "resize", "max_new_tokens": MAX_NEW_TOKENS, "decoding": "greedy"}
        super().__init__(spec, config, vqa.device, batch_size or 1)
        self.vqa, self.sets, self.table, self.cells = vqa, sets, table, cells

    def questions(self, prompt: str):
        """The (questions, dependencies) of ``prompt``, found through the prompt table's category and id.

        Parameters
        ----------
        prompt : str
            The prompt.

        Returns
        -------
        tuple of (dict, dict)
            Its questions by id and their parent ids by id.

        Raises
        ------
        InputError
            If the table has no row for it or the question files no entry for its id.
        """
        hit = self.table.get(prompt_key(prompt))
        if hit is None:
            raise InputError(f"oneig: the prompt table has no row for the prompt {prompt!r}")
        category, pid = hit
        sets = self.sets.get(CLASS_ITEMS.get(category, category)) or self.sets.get("*")
        if sets is None or pid not in sets:
            raise InputError(f"oneig: no questions for prompt {pid} of {category} (prompt {prompt!r})")
        return sets[pid]

    def check_prompt(self, prompt: str) -> None:
        """Fail before any image is scored if the prompt has no questions.

        Parameters
        ----------
        prompt
            As :meth:`Metric.check_prompt <ts2viz.metrics.common.base.Metric.check_prompt>` takes it.
        """
        self.questions(prompt)

    def prepare(self, image, file_name=None):
        """The grid's kept cells, JPEG round-tripped and resized by ``qwen_vl_utils``' rule.

        Parameters
        ----------
        image : PIL.Image.Image
            The grid image.
        file_name : str or None, optional
            Not used.

        Returns
        -------
        list of PIL.Image.Image
            The cells the model is shown (empty when all are black).
        """
        from ..backbones.vqa.t2v import qwen_resize

        return [qwen_resize(c) for c in grid_cells(image.convert("RGB"), self.cells)]

    def answers(self, cells: list, question: str) -> list[str]:
        """``infer_semantic``: the question asked of every cell in one batch, greedy, decoded as OneIG does.

        Parameters
        ----------
        cells : list of PIL.Image.Image
            One grid's prepared cells (all of one size, so no row is padded).
        question : str
            The question, without OneIG's instruction.

        Returns
        -------
        list of str
            One answer per cell, special tokens skipped, not stripped.
        """
        import torch

        from ..backbones.vqa.model import image_chat_prompt
        from ..common.device import on_device

        vqa = self.vqa
        text = image_chat_prompt(vqa.processor, QUESTION_TEMPLATE.format(question))
        enc = vqa.processor(text=[text] * len(cells), images=list(cells), padding=True, return_tensors="pt",
                            do_resize=False)
        enc = on_device(enc, vqa.device, vqa.model.dtype)
        with torch.inference_mode():
            out = vqa.model.generate(**enc, max_new_tokens=MAX_NEW_TOKENS, do_sample=False,
                                     pad_token_id=vqa.tokenizer.pad_token_id)
        new = out[:, enc["input_ids"].shape[1]:]
        return vqa.processor.batch_decode(new, skip_special_tokens=True, clean_up_tokenization_spaces=False)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """OneIG's alignment score of each prepared grid (NaN when every cell was black).

        Parameters
        ----------
        items : sequence of list
            The grids' cells, as :meth:`prepare` returned them.
        prompts : sequence of str
            One prompt per grid.

        Returns
        -------
        numpy.ndarray
            float64 scores.
        """
        out, self.last_details = [], []
        for cells, prompt in zip(items, prompts):
            questions, deps = self.questions(prompt)
            if not cells:
                out.append(float("nan"))
                self.last_details.append({"cells": 0, "questions": []})
                continue
            answers = {qid: self.answers(cells, q) for qid, q in questions.items()}
            scores = [cell_score({qid: yes_score(a[k]) for qid, a in answers.items()}, deps)
                      for k in range(len(cells))]
            out.append(sum(scores) / len(scores))
            self.last_details.append({"cells": len(cells), "cell_scores": scores, "questions": [
                {"id": qid, "question": questions[qid], "parents": deps.get(qid, []), "answers": answers[qid]}
                for qid in questions]})
        return np.asarray(out, dtype=np.float64)


def build(spec: Spec, device: str | None = None, *, questions: str | None = None, prompts: str | None = None,
          category: str | None = None, cells: str = "2x2", dtype: str | None = None,
          batch_size: int | None = None) -> Metric:
    """The ``oneig:MODEL?questions=Q_D&prompts=OneIG-Bench.csv[&category=...&cells=2x2]`` metric.

    Parameters
    ----------
    spec : Spec
        The parsed spec; its model is a Qwen2.5-VL (OneIG: ``Qwen/Qwen2.5-VL-7B-Instruct``) or Qwen2-VL.
    device : str or None, optional
        The torch device; None picks one.
    questions : str
        A OneIG ``Q_D/<class>.json`` file, or the ``Q_D`` folder (its ``anime``, ``human``, ``object`` and
        ``multilingualism`` files, ``_zh`` ones for a table with ``prompt_cn``).
    prompts : str
        ``OneIG-Bench.csv`` (or ``OneIG-Bench-ZH.csv``): maps each prompt to its category and id.
    category : str, optional
        The class item (``anime``, ``human``, ``object``, ``multilingualism``) a single question file holds
        (default: from its name; any category when the name is none of these).
    cells : str
        ``MxN``: the grid's columns and rows (OneIG's ``image_grid``; default ``2x2``).
    dtype : str, optional
        Compute dtype (default: bfloat16 on a GPU, as OneIG loads Qwen2.5-VL; float32 on CPU).
    batch_size : int, optional
        Grids per scoring call (the cells of one grid are one model batch per question, as OneIG's). Speed only.

    Returns
    -------
    Metric
        A :class:`OneIGAlignment`.

    Raises
    ------
    InputError
        A missing or unreadable question file or prompt table, a bad ``cells``, a model that is not Qwen-VL.
    """
    from ..backbones.vqa.generative import GenerativeVQA
    from ..backbones.vqa.loader import load_vqa_model

    if not questions or not prompts:
        raise InputError(f"metric {spec.raw!r}: oneig needs questions= (OneIG's Q_D file or folder) and prompts= "
                         "(OneIG-Bench.csv); OneIG-Bench's files are not bundled (the repository has no licence)")
    grid = parse_cells(cells)
    table_path = Path(str(prompts)).expanduser()
    table = read_prompt_table(table_path)
    zh = "prompt_cn" in (table_path.read_text(encoding="utf-8").splitlines() or [""])[0]
    qpath = Path(str(questions)).expanduser()
    if qpath.is_dir():
        files = {item: qpath / f"{item}{'_zh' if zh else ''}.json" for item in CLASS_ITEMS.values()}
        files = {k: f for k, f in files.items() if f.is_file()}
        if not files:
            raise InputError(f"{qpath}: no OneIG question files (anime.json, human.json, object.json ...) in the folder")
    else:
        stem = qpath.name.removesuffix(".json").removesuffix("_zh")
        item = category or (stem if stem in CLASS_ITEMS.values() else "*")
        files = {item: qpath}
    sets = {k: read_question_file(f) for k, f in files.items()}
    source = {"questions": [_digest(f) for f in files.values()], "prompts": _digest(table_path)}
    vqa = load_vqa_model(spec, device, dtype=dtype)
    kind = getattr(getattr(vqa, "model", None), "config", None)
    if not isinstance(vqa, GenerativeVQA) or getattr(kind, "model_type", "") not in QWEN_KINDS:
        raise InputError(f"metric {spec.raw!r}: OneIG's answerer is Qwen2.5-VL (Qwen/Qwen2.5-VL-7B-Instruct); "
                         f"{spec.model} is not a Qwen2-VL or Qwen2.5-VL")
    return OneIGAlignment(spec, vqa, sets, table, grid, source, batch_size)


_R = "tests/metrics/reference/test_oneig_reference.py::"

CARD = Card(
    summary=("OneIG-Bench alignment: the grid image is cut into its cells (all-black cells dropped); every "
             "question of the prompt's OneIG question file is asked of every cell as `{question}. Please answer "
             "'Yes' or 'No' only.` to Qwen2.5-VL, greedy; an answer counts 1 only if it is exactly `Yes`, a "
             "question 0 when a direct parent's answer did not count; the mean over questions, then over cells. "
             "Proved against OneIG-Bench's own code."),
    paper=("J. Chang, Y. Fang, P. Xing, S. Wu, W. Cheng, R. Wang, X. Zeng, G. Yu, H.-B. Chen. OneIG-Bench: "
           "Omni-dimensional Nuanced Evaluation for Image Generation. arXiv:2506.07977, 2025. "
           "https://arxiv.org/abs/2506.07977"),
    citation="""@article{chang2025oneig,
  title   = {{OneIG-Bench}: Omni-dimensional Nuanced Evaluation for Image Generation},
  author  = {Chang, Jingjing and Fang, Yixiao and Xing, Peng and Wu, Shuhan and Cheng, Wei and Wang, Rui and
             Zeng, Xianfang and Yu, Gang and Chen, Hai-Bao},
  journal = {arXiv preprint arXiv:2506.07977},
  year    = {2025}
}""",
    original="OneIG-Bench/OneIG-Benchmark (commit 41b4983): `scripts/alignment/alignment_score.py` "
             "(`alignment_score`), `scripts/utils/utils.py` (`split_mxn_grid`), `scripts/utils/inference.py` "
             "(`Qwen2_5VLBatchInferencer`); run on a reference fixture by tools/reference/oneig/.",
    fixture=("`tests/fixtures/reference/oneig/`: OneIG-Bench/OneIG-Benchmark 41b4983 (`scripts/alignment/"
             "alignment_score.py` run on a tiny Qwen2.5-VL under transformers 4.50.0, by tools/reference/oneig/). "
             "Image modes: not compared (the fixture's grids are RGB PNGs)."),
    output_range="[0, 1] (NaN for a grid whose every cell is black)",
    higher_is_better=True,
    precision="bfloat16",
    options=(
        Option("questions", None, "OneIG's `scripts/alignment/Q_D/<class>.json` (per prompt id its questions and "
               "parent ids), or the `Q_D` folder (`anime`, `human`, `object`, `multilingualism`; `_zh` files for the "
               "ZH table). Required: OneIG-Bench's files are not bundled."),
        Option("prompts", None, "`OneIG-Bench.csv` or `OneIG-Bench-ZH.csv` (`category`, `id`, `prompt_en` / "
               "`prompt_cn`): each prompt's category and id, which pick its questions. Required."),
        Option("category", None, "The class item a single question file holds (`anime`, `human`, `object`, "
               "`multilingualism`); default from its file name.", tuple(CLASS_ITEMS.values())),
        Option("cells", "2x2", "The grid: `MxN`, M columns by N rows (OneIG's `image_grid` `M,N`; 1x1 for a "
               "single image)."),
        Option("dtype", None, "Compute dtype on GPU (default bfloat16, as OneIG loads Qwen2.5-VL); float32 on CPU.",
               ("float32", "float16", "bfloat16")),
        Option("batch_size", None, "Grids per scoring call. Speed only."),
    ),
    fidelity=(
        Fidelity("grid cells", "`width // M` x `height // N` crops, row by row; a cell whose every pixel is "
                 "(0, 0, 0) dropped; each cell saved as JPEG at Pillow's default quality and read back; "
                 "`qwen_vl_utils`' resize (sides multiples of 28)", "as the original", "cells",
                 f"{_R}test_oneig_equals_oneigs_code"),
        Fidelity("question and decoding", "`{question}. Please answer 'Yes' or 'No' only.` in the chat template "
                 "with the image first; greedy, 128 new tokens (OneIG samples with the checkpoint's `top_k=1`: the "
                 "same argmax), the checkpoint's repetition penalty; decoded without special tokens, not stripped",
                 "as the original", "", f"{_R}test_oneig_equals_oneigs_code"),
        Fidelity("answer → score", "1 only for the exact answer `Yes` (` Yes`, `yes`, `Yes.` count 0)",
                 "as the original", "", f"{_R}test_oneig_equals_oneigs_code"),
        Fidelity("parents and means", "a question zeroed when a direct parent's raw answer did not count (not "
                 "passed down a chain); mean over question ids 1..N, then over the kept cells", "as the original", "",
                 f"{_R}test_oneig_equals_oneigs_code, {_R}test_the_fixture_exercises_each_rule"),
        Fidelity("prompt → questions", "by the prompt table's category and id, the prompt text matched on its "
                 "normalised form; OneIG finds the image file by the id instead (`images/<class>/<model>/<id>*`)",
                 "documented difference", "prompts", f"{_R}test_oneig_equals_oneigs_code"),
        Fidelity("benchmark total", "OneIG's `main` averages a model's per-prompt scores over every prompt of the class items run (a "
                 "prompt without an image skipped); "
                 "ts2viz gives the per-image scores (the leaderboard averages them); `cells` takes OneIG's `image_grid` "
                 "`M,N` as written", "as the original", "cells", f"{_R}test_benchmark_total_equals_oneigs_main"),
        Fidelity("precision", "bfloat16 on GPU as OneIG, with transformers' default attention (OneIG asks "
                 "flash-attention 2); not compared on a GPU: the fixture compares float32 on CPU (OneIG's run "
                 "with eager attention, ts2viz's with sdpa)", "documented difference", "dtype", ""),
    ),
    limitations=(
        "The fixture is a tiny random-weight Qwen2.5-VL in the released layout, sharpened so that its answers "
        "are `Yes`, `No` or ` Yes`; no released checkpoint was loaded here (no hub access).",
        "OneIG-Bench's repository has no licence: its question files and prompt tables are not bundled; give your "
        "copy with `questions=` and `prompts=`.",
    ),
    description="""```python
from ts2viz import metrics
m = metrics.load("oneig:Qwen/Qwen2.5-VL-7B-Instruct?questions=OneIG-Benchmark/scripts/alignment/Q_D"
                 "&prompts=OneIG-Benchmark/OneIG-Bench.csv")          # 2x2 grids
m.last_details[0]   # cells kept, per question: parents and the answers per cell
```
""",
)


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family("oneig",
                "OneIG-Bench alignment: Qwen2.5-VL's exact 'Yes' to DSG-style questions with parents, per grid cell",
                build, CARD, example="oneig:Qwen/Qwen2.5-VL-7B-Instruct?questions=Q_D&prompts=OneIG-Bench.csv",
                group="questions", hub_model=True, display="OneIG")
