"""Every documented command, run as a new user types it (issue 40).

The pages that say they are runnable (``<!-- runnable ... -->`` on their first line: getting started and
the tutorials) and the README's code blocks are run line by line, in order, as a user of an installed
ts2viz runs them:

* ``ts2viz ...`` lines: the ``ts2viz`` console script installed next to the Python that runs this test
  (``sys.executable``'s folder), in an empty temporary folder, with no ``PYTHONPATH`` and offline
  (``HF_HUB_OFFLINE=1``); the script must import the ts2viz of this checkout, else the tests skip and say
  how to install it (``pip install -e .``).
* Python blocks: one interpreter per page (that venv's ``python``, the same folder, no ``PYTHONPATH``),
  fed the page's blocks in order, as a user pastes them into one session.
* ``pip install -r FILE [-e .]`` (run in a clone of the repository): the file must be the repository's own,
  and ``pip install --dry-run --no-index --no-deps -r FILE`` in that venv must find every pinned package
  already there (offline: a requirement that is not installed at its pinned version fails), and ``-e .``
  must be this checkout (checked above).
* ``ts2viz app ...`` / ``python app.py ...``: started on a free port, probed over HTTP until the page is
  served (and, with ``--scores FILE``, until the app's config holds the file's metric), then stopped.

A block that needs what cannot exist offline (a hub model, a GPU, a cluster, an API key, the reader's own
files) is marked on the line before it, ``<!-- not run: REASON -->``, and skipped. Every code block of a
guide page (``docs/guide/*.md``) is run (its page is runnable) or marked with a reason.

Substitutes, for what cannot exist offline, each said where it is made:

* ``hf download saxon/T2IScoreScore --repo-type dataset --local-dir DIR`` (the TS2 release): a folder with
  the release's layout (the bundled TS2 ``metadata.csv``, the release's, and one small generated JPEG at
  every ``file_name``);
* ``openai/clip-vit-base-patch32`` in a ``clipscore:`` spec: a tiny random-weight CLIP laid out in a
  private hub cache under that id (``HF_HUB_CACHE``), as a download lays it out;
* the user's own scores files that the README's lines name (``my_scores.csv``, ``my_tifa160_scores.csv``):
  made as getting started makes them (an ensemble of bundled columns);
* ``python -m pytest`` (the whole suite, 20+ minutes): ``python -m pytest --collect-only -q tests/docs``.

Numbers: a page's prose quoting ``(71.4 [67.3, 75.2])`` must be printed by its commands, and every decimal
number in the paragraph after a code block must be among what the page's commands printed up to there
(``−`` read as ``-``).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md")
               if p.read_text(encoding="utf-8").startswith("<!-- runnable"))
SCRIPT = Path(sys.executable).parent / "ts2viz"
#: how long an app may take to serve on a loaded 2-core machine
APP_START_S = 300

#: the README's own lines that name a user's file: made as getting started makes it (see the docstring)
USER_FILES = {
    "my_scores.csv": """
from ts2viz import bundled_scores
p = bundled_scores().to_frame()
z = lambda c: (p[c] - p[c].mean()) / p[c].std()
p[["file_name"]].assign(Ensemble=z("CLIPScore") + z("TIFA-InstructBLIP")).to_csv("my_scores.csv", index=False)
""",
    "my_tifa160_scores.csv": """
from ts2viz.gold import load_gold
g = load_gold("tifa160"); s = g.scores
z = lambda c: (s[c] - s[c].mean()) / s[c].std()
g.images[["image_id"]].assign(Ensemble=z("clipscore_vitb32") + z("tifa_blip2-flant5xl")).to_csv(
    "my_tifa160_scores.csv", index=False)
""",
}


#: the line before a code block that is not run, with the reason (see the module docstring)
NOT_RUN = "<!-- not run: "
#: every fenced code block: the marker line before it (if any), its language, its code
FENCED = re.compile(r"(?:^([^\n]*)\n)?^```(\w*)\n(.*?)^```", re.M | re.S)
#: the languages of blocks that hold commands (anything else is output or a file's text)
COMMAND_LANGS = ("bash", "python", "sh", "shell", "console", "pycon")
GUIDES = sorted((ROOT / "docs" / "guide").glob("*.md"))


def _not_run_reason(line: str | None) -> str | None:
    """The reason of a ``<!-- not run: REASON -->`` line, ``""`` for one without a reason, else None."""
    line = (line or "").strip()
    if not line.startswith(NOT_RUN):
        return None
    return line[len(NOT_RUN):].removesuffix("-->").strip()


def _blocks(text: str) -> list[tuple[str, str, str]]:
    """(kind, code, the paragraph after it) for every bash/python block not marked ``not run``."""
    return [(m.group(2), m.group(3), m.group(4))
            for m in re.finditer(r"(?:^([^\n]*)\n)?^```(bash|python)\n(.*?)```\n+((?:(?!```|<!-- not run)[^\n]+\n?)*)", text,
                                 re.S | re.M)
            if _not_run_reason(m.group(1)) is None]


def _commands(code: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", code)
    out = []
    for ln in joined.strip().splitlines():
        ln = re.split(r"\s+#\s", ln)[0].strip()
        if ln and not ln.startswith("#"):
            out.extend(part.strip() for part in ln.split("&&"))
    return out


def _interpreter() -> str:
    """The Python the console script runs with (its shebang)."""
    first = SCRIPT.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    return first[2:].strip() if first.startswith("#!") else sys.executable


def _clean_env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TS2VIZ_CACHE=str(tmp / ".cache"),
               GRADIO_ANALYTICS_ENABLED="False", PYTHONUNBUFFERED="1", HF_HUB_CACHE=str(tmp / ".hub"))
    env.pop("GRADIO_SERVER_PORT", None)
    env.pop("TS2VIZ_DATA", None)
    return env


@pytest.fixture(scope="module")
def installed():
    """The console script and its Python, checked to be this checkout's ts2viz (else skip, saying why)."""
    if not SCRIPT.is_file():
        pytest.skip(f"no ts2viz console script beside {sys.executable}: pip install -e {ROOT}")
    py = _interpreter()
    r = subprocess.run([py, "-c", "import ts2viz; print(ts2viz.__file__)"], capture_output=True, text=True,
                       env=_clean_env(Path("/nonexistent")), cwd="/")
    where = Path(r.stdout.strip()).resolve().parent.parent if r.returncode == 0 else None
    if where != ROOT:
        pytest.skip(f"the ts2viz console script ({SCRIPT}) runs the ts2viz of {where}, not this checkout "
                    f"({ROOT}): install this one with pip install -e {ROOT}")
    return SCRIPT, py


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Python:
    """One interpreter fed the page's Python blocks in order (a user's session)."""

    DONE = "\x00ts2viz-block-done"
    DRIVER = ("import json, sys, traceback\n"
              "ns = {'__name__': '__main__'}\n"
              "for line in sys.stdin:\n"
              "    code = json.loads(line)\n"
              "    try:\n"
              "        exec(compile(code, '<page>', 'exec'), ns); ok = 'ok'\n"
              "    except BaseException:\n"
              "        traceback.print_exc(); ok = 'failed'\n"
              f"    print({DONE!r}, ok, flush=True); sys.stderr.flush()\n")

    def __init__(self, py: str, cwd: Path, env: dict):
        self.err = open(cwd / ".python-stderr.txt", "w+")
        self.proc = subprocess.Popen([py, "-u", "-c", self.DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, text=True, cwd=cwd, env=env)

    def run(self, code: str, where: str) -> str:
        self.proc.stdin.write(json.dumps(code) + "\n")
        self.proc.stdin.flush()
        out = []
        for line in self.proc.stdout:
            if line.startswith(self.DONE):
                if line.split()[-1] != "ok":
                    self.err.seek(0)
                    pytest.fail(f"{where}: a Python block failed:\n{self.err.read()[-3000:]}")
                return "".join(out)
            out.append(line)
        self.err.seek(0)
        pytest.fail(f"{where}: the Python session ended:\n{self.err.read()[-3000:]}")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.err.close()


def _ts2_release(folder: Path) -> None:
    """A folder with the TS2 release's layout (substitute for its hub download): metadata.csv, images/."""
    import csv

    from PIL import Image

    from ts2viz.paths import bundled_data_dir

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(bundled_data_dir() / "ts2" / "metadata.csv", folder / "metadata.csv")
    with open(folder / "metadata.csv", newline="", encoding="utf-8") as f:
        for i, row in enumerate(csv.DictReader(f)):
            path = folder / row["file_name"]
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (16, 16), ((37 * i) % 256, (91 * i) % 256, (13 * i) % 256)).save(path, quality=90)


def _hub_clip(cache: Path, repo: str) -> None:
    """A tiny random-weight CLIP in a hub cache under ``repo`` (substitute for the hub's checkpoint)."""
    import hashlib

    sys.path.insert(0, str(ROOT / "tests" / "support"))
    from tiny_models import tiny

    commit = hashlib.sha1(repo.encode()).hexdigest()
    base = cache / ("models--" + repo.replace("/", "--"))
    snap = base / "snapshots" / commit
    if not snap.exists():
        shutil.copytree(tiny("clip"), snap)
        (base / "refs").mkdir(parents=True, exist_ok=True)
        (base / "refs" / "main").write_text(commit)


def _probe_app(cmd: list[str], cwd: Path, env: dict, line: str, metric: str | None) -> None:
    """Start the app, wait until it serves (and holds ``metric``), stop it."""
    port = _free_port()
    log = open(cwd / f".app-{port}.log", "w+")
    proc = subprocess.Popen([*cmd, "--port", str(port)], cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + APP_START_S
        served = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=10) as r:
                    served = r.read().decode("utf-8", "replace")
                break
            except OSError:
                time.sleep(0.5)
        log.seek(0)
        assert served is not None, f"{line!r} did not serve within {APP_START_S} s:\n{log.read()[-3000:]}"
        if metric:
            assert metric in served, f"{line!r}: the app serves without the metric {metric!r} of its --scores"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as r:
            assert r.status == 200 and "gradio" in r.read().decode("utf-8", "replace").lower()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _metric_of(path: Path) -> str | None:
    """The first metric column of a scores file (the app must show it)."""
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    return next((c for c in header if c not in ("file_name", "image_id")), None)


def _pip(args: list[str], py: str, where: str) -> None:
    files = [args[i + 1] for i, a in enumerate(args) if a == "-r"]
    assert files, f"{where}: a pip line without -r FILE: {args}"
    if "-e" in args:
        assert args[args.index("-e") + 1] == ".", f"{where}: -e names {args[args.index('-e') + 1]}, not the clone"
    for f in files:
        assert (ROOT / f).is_file(), f"{where}: {f} is not a file of the repository"
        r = subprocess.run([py, "-m", "pip", "install", "--dry-run", "--no-index", "--no-deps", "-r", f],
                           capture_output=True, text=True, cwd=ROOT, env=_clean_env(ROOT), timeout=300)
        assert r.returncode == 0, f"{where}: {f} pins a package that is not installed here:\n{r.stderr[-1500:]}"
        assert "Would install" not in r.stdout, f"{where}: {f}: {r.stdout[-800:]}"


def run_page(text: str, name: str, tmp: Path, installed, *, user_files: bool = False) -> None:
    """Run every block of ``text`` as typed (see the module docstring); check the numbers it states."""
    script, py = installed
    env = _clean_env(tmp)
    printed: list[str] = []
    session = Python(py, tmp, env)
    try:
        for kind, code, after in _blocks(text):
            where = f"{name}: {code.strip().splitlines()[0][:80]!r}"
            if kind == "python":
                printed.append(session.run(code, where))
            else:
                for line in _commands(code):
                    printed.append(_run_line(line, name, tmp, env, script, py, user_files, session))
            _check_numbers(after, "\n".join(printed), f"{name}, after {where}")
    finally:
        session.close()
    out = "\n".join(printed)
    for quoted in re.findall(r"\((\d+\.\d \[\d+\.\d, \d+\.\d\])\)", text):
        assert quoted in out, f"{name} quotes {quoted}, which its commands no longer print"


def _check_numbers(paragraph: str, out: str, where: str) -> None:
    text = re.sub(r"`[^`]*`", "", paragraph).replace("−", "-")   # (code spans name things, not results)
    seen = out.replace("−", "-")
    for num in re.findall(r"(?<![\w.])(?<!Python )-?\d+\.\d+(?![\w.])", text):   # (not a version)
        assert num in seen, f"{where}: the page states {num}, which its commands did not print"


def _run_line(line: str, name: str, tmp: Path, env: dict, script: Path, py: str, user_files: bool,
              session: Python) -> str:
    args = shlex.split(line)
    where = f"{name}: {line}"
    if args[:2] == ["pip", "install"]:
        _pip(args[2:], py, where)
        return ""
    if args[:2] == ["hf", "download"]:
        assert args[2] == "saxon/T2IScoreScore" and "--local-dir" in args, where
        _ts2_release(tmp / args[args.index("--local-dir") + 1])
        return ""
    if args[:3] == ["python", "-m", "pytest"]:
        r = subprocess.run([py, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests/docs"],
                           capture_output=True, text=True, cwd=ROOT, env=_clean_env(tmp), timeout=600)
        assert r.returncode == 0 and " tests collected" in r.stdout, f"{where}\n{r.stdout[-1500:]}"
        return ""
    assert args[0] in ("ts2viz", "python"), f"{where}: a command this test does not know how to run"
    if user_files:
        for a in args:
            if a in USER_FILES and not (tmp / a).exists():
                session.run(USER_FILES[a], f"{where} (the user's own {a})")
    for a in args:
        if a.startswith("clipscore:openai/"):
            _hub_clip(Path(env["HF_HUB_CACHE"]), a.split(":", 1)[1].split("?")[0])
    if args[0] == "python":
        assert args[1] == "app.py", f"{where}: a python command other than app.py"
        cmd = [py, str(ROOT / "app.py"), *args[2:]]
    else:
        cmd = [str(script), *args[1:]]
    if args[:2] == ["ts2viz", "app"] or args[0] == "python":
        scores = [tmp / args[i + 1] for i, a in enumerate(args) if a == "--scores" and args[i + 1] != "ts2"]
        _probe_app(cmd, tmp, env, line, _metric_of(scores[0]) if scores else None)
        return ""
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp, timeout=1200)
    assert r.returncode == 0, f"{where}\n{r.stderr[-2000:]}"
    return r.stdout


def test_there_are_runnable_pages():
    names = {p.relative_to(ROOT / "docs").as_posix() for p in PAGES}
    assert "getting-started.md" in names and any(n.startswith("tutorials/") for n in names)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT / "docs").as_posix())
def test_page_runs_as_written(page, tmp_path, installed):
    run_page(page.read_text(encoding="utf-8"), page.name, tmp_path, installed)


@pytest.mark.slow
def test_readme_runs_as_written(tmp_path, installed):
    run_page((ROOT / "README.md").read_text(encoding="utf-8"), "README.md", tmp_path, installed, user_files=True)


@pytest.mark.parametrize("page", sorted(set(GUIDES) | set(PAGES)), ids=lambda p: p.relative_to(ROOT / "docs").as_posix())
def test_every_guide_block_is_run_or_marked(page):
    text = page.read_text(encoding="utf-8")
    runnable = text.startswith("<!-- runnable")
    blocks = [(m.group(1), m.group(2), m.group(3)) for m in FENCED.finditer(text)]
    for before, lang, code in blocks:
        if lang not in COMMAND_LANGS:
            continue
        first = code.strip().splitlines()[0][:80] if code.strip() else ""
        reason = _not_run_reason(before)
        assert reason != "", f"{page.name}: block {first!r} is marked not run without a reason"
        if reason is None:
            assert runnable, (f"{page.name}: block {first!r} is not run (the page is not runnable) and not marked "
                              f"{NOT_RUN}REASON -->")
            assert lang in ("bash", "python"), f"{page.name}: a {lang} block {first!r} is neither run nor marked"
    if runnable:
        assert _blocks(text), f"{page.name} says it is runnable but every block of it is marked not run"


def test_a_marked_block_is_skipped_and_an_unmarked_one_is_run():
    text = ("```bash\nts2viz leaderboard\n```\n\n<!-- not run: needs a GPU -->\n```bash\nts2viz score --gpu\n```\n"
            "<!-- not run: -->\n```python\nx = 1\n```\n")
    assert [code for _, code, _ in _blocks(text)] == ["ts2viz leaderboard\n"]
    assert [_not_run_reason(m.group(1)) for m in FENCED.finditer(text)] == [None, "needs a GPU", ""]


def test_the_readers_substitutes_are_only_for_what_the_readme_names():
    # a user file the README stops naming should leave the list, so that no line runs on a made-up input
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in USER_FILES:
        assert name in readme, f"USER_FILES names {name}, which the README no longer uses"


def test_numbers_check_catches_a_stale_number():
    with pytest.raises(AssertionError, match="states 0.42"):
        _check_numbers("Its Ord is 0.42 on SEG 3.", "ord 0.41\n", "page")
    _check_numbers("Its Ord is −0.42 (`python 3.11`).", "ord -0.42\n", "page")
