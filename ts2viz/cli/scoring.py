"""``ts2viz score``, ``ts2viz questions`` and ``ts2viz metrics``: run library metrics over a dataset, write
question sets for review, list the metric families."""
from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Iterator

from ..errors import InputError


def add_subcommands(subparsers) -> None:
    """Add ``score`` and ``metrics`` to an ``argparse`` subparsers object (each sets ``func``)."""
    p = subparsers.add_parser(
        "score", help="run metrics over a SEG dataset and write a scores file",
        description="Run one or more metrics over every image of a SEG dataset and write the scores "
                    "file that `ts2viz leaderboard --scores` reads. Finished scores are cached, so an "
                    "interrupted or repeated run only computes what is missing.")
    p.add_argument("--metric", "-m", action="append", required=True, metavar="SPEC",
                   help="metric SPEC, e.g. clipscore:openai/clip-vit-base-patch32 (repeatable; "
                        "`ts2viz metrics` lists the families)")
    p.add_argument("--dataset", default="ts2", metavar="ts2|DIR|HF_ID",
                   help="'ts2', a dataset folder with metadata.csv and images, or a hub dataset id")
    p.add_argument("--seg", default=None, metavar="IDS", help="SEG ids to score, e.g. 0-10,15 (default: all)")
    p.add_argument("--out", "-o", required=True, help="output scores file (.csv or .parquet); - for CSV on stdout")
    p.add_argument("--device", default=None, help="cuda, cpu or mps (default: best available)")
    p.add_argument("--batch-size", type=int, default=None, metavar="N",
                   help="images per model call (default: per metric and device)")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="score cache folder (default: $TS2VIZ_CACHE or ~/.cache/ts2viz)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the score cache")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bars (neither ts2viz's nor the model loaders')")
    p.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                   help="score on Ray actors: alone, a new local Ray instance (or $RAY_ADDRESS); with "
                        "ADDRESS, join that cluster (auto, ray://HOST:10001). Needs ts2viz[ray]")
    p.add_argument("--ray-actors", type=int, default=None, metavar="N",
                   help="with --ray: metric actors to start (default: one per GPU, else one per CPU)")
    p.set_defaults(func=run_score)

    g = subparsers.add_parser(
        "questions", help="generate TIFA/DSG questions with an LLM and write them as a question CSV",
        description="Generate TIFA questions (one few-shot prompt) or DSG questions (tuples -> questions -> "
                    "dependencies) for each prompt with a chat LLM, and write them in the TS2 question-file "
                    "format. Inspect or edit the file, then score with tifa:MODEL?questions=FILE (or dsg:). "
                    "Generated questions are cached on disk per prompt, so a re-run asks the LLM only for new "
                    "prompts.")
    g.add_argument("--metric-kind", required=True, choices=["tifa", "dsg"], help="which question style")
    src = g.add_mutually_exclusive_group(required=True)
    src.add_argument("--prompts", metavar="FILE", help="text file, one prompt per line (# comments, blanks ignored)")
    src.add_argument("--dataset", metavar="ts2|DIR|HF_ID", help="every SEG prompt of a dataset (ids = SEG ids)")
    g.add_argument("--seg", default=None, metavar="IDS", help="with --dataset: only these SEG ids")
    g.add_argument("--generator", required=True, metavar="URL|hf:MODEL",
                   help="an OpenAI-compatible API base URL, or hf:MODEL for a local transformers LLM")
    g.add_argument("--generator-model", default=None, metavar="NAME", help="chat model name for an API (default gpt-4o)")
    g.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the API key (default OPENAI_API_KEY)")
    g.add_argument("--device", default=None, help="device of a local LLM (cuda, cpu, mps)")
    g.add_argument("--out", "-o", required=True, help="question CSV to write")
    g.add_argument("--cache", default=None, metavar="DIR",
                   help="question cache folder (default: $TS2VIZ_CACHE/questions or ~/.cache/ts2viz/questions)")
    g.add_argument("--no-cache", action="store_true", help="neither read nor write the question cache")
    g.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    g.set_defaults(func=run_questions)

    q = subparsers.add_parser("metrics", help="list the metric families",
                              description="List the metric families and an example SPEC for each.")
    q.set_defaults(func=run_metrics)


class Bars:
    """One tqdm bar per metric, showing images/s."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.bars: dict = {}

    def __call__(self, spec: str, done: int, total: int) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        bar = self.bars.get(spec)
        if bar is None:
            bar = self.bars[spec] = tqdm(total=total, desc=spec if len(spec) < 40 else "..." + spec[-37:],
                                         unit="img", dynamic_ncols=True, file=sys.stderr,
                                         initial=done)  # cache hits start the bar, not its rate
            if done >= total:
                bar.close()
            return
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    def close(self) -> None:
        for b in self.bars.values():
            b.close()


@contextlib.contextmanager
def quiet_progress(quiet: bool) -> Iterator[None]:
    """With ``quiet``, no progress bars from the hub client or transformers (its "Loading weights" bar)
    inside; the previous settings come back afterwards."""
    if not quiet:
        yield
        return
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    hub_was_off = are_progress_bars_disabled()
    tf = sys.modules.get("transformers.utils.logging")
    # transformers reads the hub's setting once, when it is imported (possibly inside this block)
    tf_was_on = tf.is_progress_bar_enabled() if tf is not None else not hub_was_off
    disable_progress_bars()
    if tf is not None:
        tf.disable_progress_bar()
    try:
        yield
    finally:
        if not hub_was_off:
            enable_progress_bars()
        tf = sys.modules.get("transformers.utils.logging")
        if tf is not None and tf_was_on:
            tf.enable_progress_bar()


def run_score(args: argparse.Namespace) -> int:
    """Handler of ``ts2viz score``."""
    from ..atomic import check_writable
    from ..dataset import load_dataset, parse_seg_ids
    from ..engine import score_dataset
    from ..scores import write_scores

    if args.batch_size is not None and args.batch_size < 1:
        raise InputError("--batch-size must be at least 1")
    if args.ray_actors is not None and (args.ray is None or args.ray_actors < 1):
        raise InputError("--ray-actors needs --ray and must be at least 1")
    out = str(args.out)
    if out != "-":
        if not out.lower().endswith((".csv", ".parquet", ".pq")):
            raise InputError("--out must end in .csv or .parquet (or be - for CSV on stdout)", file=out)
        check_writable(out)     # before any model is loaded or image scored
    ds = load_dataset(args.dataset)
    seg_ids = parse_seg_ids(args.seg, ds)
    bars = Bars(args.quiet)
    try:
        with quiet_progress(args.quiet):
            scores = score_dataset(ds, args.metric, seg_ids=seg_ids, device=args.device,
                                   batch_size=args.batch_size, cache_dir=args.cache, progress=bars,
                                   use_cache=not args.no_cache, ray=args.ray, ray_actors=args.ray_actors)
    finally:
        bars.close()
    import numpy as np

    n_ok = int(np.isfinite(scores.values).all(axis=1).sum())
    if out == "-":
        write_scores(scores, sys.stdout)
        sys.stdout.flush()
    else:
        write_scores(scores, out)
    print(f"wrote {'stdout' if out == '-' else out}: {len(scores.file_names)} images x {len(scores.metrics)} "
          f"metric(s), {n_ok} images fully scored", file=sys.stderr if out == "-" else sys.stdout)
    return 0


def read_prompt_lines(path: str) -> list[str]:
    """Prompts from a text file, one per line; blank lines and lines starting with # are skipped."""
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise InputError("no such prompts file", file=p)
    try:
        lines = p.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read as UTF-8 text ({type(e).__name__})", file=p) from None
    prompts = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if not prompts:
        raise InputError("no prompts: expected one prompt per line", file=p)
    return list(dict.fromkeys(prompts))


def run_questions(args: argparse.Namespace) -> int:
    """Handler of ``ts2viz questions``."""
    from ..dataset import parse_seg_ids
    from ..metrics.backbones.llm import load_llm
    from ..metrics.common.question_gen import QuestionGenerator
    from ..qa.questions import write_question_csv

    out = str(args.out)
    if not out.lower().endswith(".csv"):
        raise InputError("--out must end in .csv", file=out)
    if args.prompts:
        if args.seg:
            raise InputError("--seg applies to --dataset only")
        items = list(enumerate(read_prompt_lines(args.prompts)))
    else:
        from ..dataset import load_dataset

        ds = load_dataset(args.dataset)
        ids = parse_seg_ids(args.seg)
        if ids is not None:
            ds = ds.subset(ids)
        items = [(seg.id, seg.prompt) for seg in ds]
    llm = load_llm(args.generator, model=args.generator_model, api_key_env=args.api_key_env, device=args.device)
    gen = QuestionGenerator(llm, cache_dir=args.cache, use_cache=not args.no_cache)
    sets = []
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=len(items), desc=f"{args.metric_kind} questions", unit="prompt", file=sys.stderr,
                   dynamic_ncols=True)
    try:
        for sid, prompt in items:
            sets.append((sid, prompt, gen.generate(prompt, args.metric_kind)))
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    write_question_csv(out, sets, args.metric_kind)
    n = sum(len(qs) for _, _, qs in sets)
    print(f"wrote {out}: {n} {args.metric_kind} questions for {len(sets)} prompts; score with "
          f"{args.metric_kind}:MODEL?questions={out}")
    return 0


def run_metrics(args: argparse.Namespace) -> int:
    """Handler of ``ts2viz metrics``: each family with its description, an example SPEC and the field's
    model names it knows (its card's ``model_names``: short name -> hub id)."""
    from ..metrics import families

    fams = families()
    width = max(len(f.name) for f in fams)
    pad = " " * width
    for f in fams:
        print(f"{f.name:<{width}}  {f.description}")
        if f.example:
            print(f"{pad}  e.g. {f.example}")
        card = f.card
        for short, hub_id in (card.model_names.items() if card is not None else ()):
            print(f"{pad}  model {short} = {f.name}:{hub_id}")
    return 0
