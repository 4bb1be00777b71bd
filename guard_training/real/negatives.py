"""Real text an agent reads, extracted from what is installed here (issue 31).

Each extractor yields (text, origin) pairs, by paragraph (blank-line separated blocks,
40 to 4,000 characters), at most PER_DOC per document, so that one long manual does not
outweigh a hundred short READMEs. Documents are visited in a sorted order and sampled
with a fixed seed, so a rebuild on the same machine gives the same items.
"""

from __future__ import annotations

import ast
import gettext
import gzip
import random
import re
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

PER_DOC = 12
MIN_CHARS, MAX_CHARS = 40, 4000
Pair = tuple[str, str]


def paragraphs(text: str, origin: str, limit: int = PER_DOC, seed: int = 31) -> list[Pair]:
    """Up to `limit` paragraphs of a document (a seeded sample when there are more)."""
    blocks = [b.strip("\n") for b in re.split(r"\n\s*\n", text)]
    blocks = [b for b in blocks if MIN_CHARS <= len(b.strip()) <= MAX_CHARS]
    if len(blocks) > limit:
        blocks = random.Random(f"{seed}:{origin}").sample(blocks, limit)
    return [(b, origin) for b in blocks]


def pypi_readmes(site: Path) -> Iterator[Pair]:
    """The long description of every installed distribution's METADATA."""
    for meta in sorted(site.glob("*.dist-info/METADATA")):
        raw = meta.read_text(encoding="utf-8", errors="replace")
        head, _, body = raw.partition("\n\n")
        name = re.search(r"^Name: (.+)$", head, re.M)
        if body.strip() and name:
            yield from paragraphs(body, f"pypi:{name.group(1).strip()}", limit=20)


def _docstring_blocks(source: str) -> list[str]:
    out = []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node)
            if doc:
                out.append(doc)
    comment: list[str] = []
    for line in source.splitlines() + [""]:
        s = line.strip()
        if s.startswith("#") and not s.startswith("#!"):
            comment.append(s.lstrip("# "))
        else:
            if len(comment) >= 2:
                out.append("\n".join(comment))
            comment = []
    return out


def py_docstrings(roots: Iterable[Path], files_per_root: int = 900) -> Iterator[Pair]:
    """Docstrings and comment blocks (two lines or more) of Python files."""
    for root in roots:
        files = sorted(p for p in root.rglob("*.py") if "test" not in p.parts[-2])
        rng = random.Random(f"31:{root}")
        for path in sorted(rng.sample(files, min(files_per_root, len(files)))):
            try:
                src = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            rel = path.relative_to(root).parts
            origin = f"py:{root.name}/{rel[0]}"
            blocks = [b for b in _docstring_blocks(src) if MIN_CHARS <= len(b) <= MAX_CHARS]
            rng2 = random.Random(f"31:{path}")
            for b in rng2.sample(blocks, min(4, len(blocks))):
                yield b, origin


def gettext_messages(root: Path = Path("/usr/share/locale"), per_catalogue: int = 25
                     ) -> Iterator[Pair]:
    """Translated messages of every .mo catalogue (origin: language/domain)."""
    for mo in sorted(root.glob("*/LC_MESSAGES/*.mo")):
        lang, domain = mo.parts[-3], mo.stem
        try:
            with open(mo, "rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
        except (OSError, UnicodeDecodeError, ValueError, IndexError):  # broken: skipped
            continue
        msgs = sorted({v for k, v in catalog.items() if k and isinstance(v, str)
                       and len(v.strip()) >= MIN_CHARS and len(v) <= MAX_CHARS})
        rng = random.Random(f"31:{mo}")
        for m in rng.sample(msgs, min(per_catalogue, len(msgs))):
            yield m, f"mo:{lang}/{domain}"


_ROFF_FONT = re.compile(r"\\f[BIRPC]|\\f\(..|\\f\[[^]]*\]|\\s[-+]?\d+|\\&|\\\||\\e")
_ROFF_ESC = {r"\-": "-", r"\(em": "—", r"\(en": "–", r"\(aq": "'", r"\(dq": '"',
             r"\(lq": "“", r"\(rq": "”", r"\ ": " ", r"\(bu": "•", r"\(co": "©"}


def roff_text(src: str) -> str:
    """Plain text of a man page: macros dropped, their text arguments kept, paragraph
    macros as blank lines."""
    out = []
    for line in src.splitlines():
        if line.startswith(('.\\"', "'\\\"")):
            continue
        if line.startswith((".", "'")):
            macro, _, arg = line[1:].partition(" ")
            if macro in ("PP", "LP", "P", "SH", "SS", "TP", "IP", "sp", "br", "HP"):
                out.append("")
            if macro in ("SH", "SS", "B", "I", "BR", "IR", "RB", "RI", "BI", "IB", "IP"):
                arg = arg.replace('"', "")
                if macro == "IP":
                    arg = arg.split(" ")[0] if arg else ""
                if arg:
                    out.append(arg)
            continue
        out.append(line)
    text = "\n".join(out)
    for k, v in _ROFF_ESC.items():
        text = text.replace(k, v)
    text = _ROFF_FONT.sub("", text)
    return text.replace("\\\\", "\\")


def man_pages(dirs: Iterable[Path], pages: int, origin_lang: bool = False) -> Iterator[Pair]:
    """Paragraphs of a seeded sample of `pages` manual pages under `dirs`."""
    files = sorted(p for d in dirs for p in d.glob("man*/*.gz"))
    for path in sorted(random.Random(31).sample(files, min(pages, len(files)))):
        try:
            src = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
        except (OSError, EOFError):
            continue
        if src.startswith(".so "):
            continue
        lang = path.parts[-3] if origin_lang else "en"
        # paragraphs are re-flowed: a man page's source lines are not its lines
        text = "\n\n".join(" ".join(p.split()) for p in re.split(r"\n\s*\n", roff_text(src)))
        yield from paragraphs(text, f"man:{lang}/{path.name}", limit=8)


def debian_docs(root: Path = Path("/usr/share/doc"), per_package: int = 10) -> Iterator[Pair]:
    """README, NEWS and changelog paragraphs of each package's doc folder."""
    for pkg in sorted(p for p in root.iterdir() if p.is_dir()):
        texts = []
        for f in sorted(pkg.iterdir()):
            low = f.name.lower()
            if not low.startswith(("readme", "news", "changelog")) or f.is_dir():
                continue
            try:
                data = f.read_bytes()
                if low.endswith(".gz"):
                    data = gzip.decompress(data)[:200_000]
                texts.append(data.decode("utf-8", errors="replace"))
            except (OSError, EOFError):
                continue
        if texts:
            yield from paragraphs("\n\n".join(texts), f"doc:{pkg.name}", limit=per_package)


NPM_PACKAGES = (
    "express", "lodash", "axios", "chalk", "commander", "yargs", "react", "vue", "moment",
    "dayjs", "uuid", "dotenv", "debug", "request", "async", "underscore", "jquery", "minimist",
    "glob", "rimraf", "mkdirp", "semver", "ws", "socket.io", "mongoose", "body-parser",
    "cors", "jsonwebtoken", "bcrypt", "nodemon", "prettier", "eslint", "webpack", "rollup",
    "vite", "jest", "mocha", "chai", "sinon", "typescript", "ts-node", "zod", "yup", "joi",
    "date-fns", "ramda", "immer", "redux", "rxjs", "next", "nuxt", "svelte", "handlebars",
    "ejs", "pug", "marked", "markdown-it", "highlight.js", "cheerio", "puppeteer", "playwright",
    "sharp", "multer", "passport", "helmet", "morgan", "winston", "pino", "bluebird", "got",
    "node-fetch", "superagent", "inquirer", "ora", "boxen", "execa", "fs-extra", "chokidar",
    "cross-env", "concurrently", "husky", "lint-staged", "sequelize", "knex", "pg", "mysql2",
    "redis", "ioredis", "graphql", "apollo-server", "fastify", "koa", "hapi", "nestjs",
    "classnames", "styled-components", "tailwindcss", "postcss", "autoprefixer", "sass",
)


def npm_readmes(packages: Iterable[str] = NPM_PACKAGES) -> Iterator[Pair]:
    """README.md of each npm package's current tarball (`npm pack`, the npm registry)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in packages:
            try:
                out = subprocess.run(["npm", "pack", name, "--silent"], cwd=tmp, check=True,
                                     capture_output=True, text=True, timeout=60).stdout
            except (subprocess.SubprocessError, OSError):
                continue
            tgz = Path(tmp) / out.strip().splitlines()[-1]
            with tarfile.open(tgz) as tar:
                readme = next((m for m in tar.getmembers()
                               if m.name.count("/") == 1 and m.name.split("/")[1].lower()
                               .startswith("readme")), None)
                f = tar.extractfile(readme) if readme else None
                if f:
                    yield from paragraphs(f.read().decode("utf-8", errors="replace"),
                                          f"npm:{name}", limit=25)
            tgz.unlink()


_BROKEN_C = "int main(void) {\n  int x = \"text\";\n  undefined_call(x)\n  return y;\n}\n"
_FAILING_TEST = '''
import json

def parse(s):
    return json.loads(s)["value"]

def test_parse_value():
    assert parse('{"value": 2}') == 3

def test_parse_missing():
    assert parse('{"other": 1}') == 1

def test_bad_json():
    parse("{not json")
'''


def _run(cmd: list[str] | str, cwd: str | None = None) -> str:
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120,
                           shell=isinstance(cmd, str))
    except (subprocess.SubprocessError, OSError):
        return ""
    return (r.stdout + "\n" + r.stderr).strip()


def tool_outputs(python: str = sys.executable) -> Iterator[Pair]:
    """What real commands print here, cut into blocks of at most 30 lines."""
    site = sysconfig.get_paths()["purelib"]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "broken.c").write_text(_BROKEN_C)
        Path(tmp, "test_parse.py").write_text(_FAILING_TEST)
        commands: list[tuple[str, list[str] | str, str | None]] = [
            ("ls", ["ls", "-la", "/usr/lib/python3", "/etc", site], None),
            ("ps", ["ps", "aux"], None),
            ("df", ["df", "-h"], None),
            ("uname", ["uname", "-a"], None),
            ("pip-list", [python, "-m", "pip", "list"], None),
            ("pip-show", [python, "-m", "pip", "show", "numpy", "torch", "requests", "pyyaml"],
             None),
            ("pip-inspect", [python, "-m", "pip", "inspect"], None),
            ("dpkg", ["dpkg", "-l"], None),
            ("apt-cache", ["apt-cache", "show", "python3", "git", "curl", "coreutils"], None),
            ("git-log", ["git", "-C", str(Path(__file__).resolve().parents[2]), "log", "--stat",
                         "-n", "40"], None),
            ("gcc", ["gcc", "-Wall", "-c", "broken.c"], tmp),
            ("pytest", [python, "-m", "pytest", "-q", "test_parse.py"], tmp),
            ("traceback", [python, "-c", "import json; json.loads('{\"a\": }')"], None),
            ("traceback", [python, "-c", "import collections; collections.nope()"], None),
            ("find", "find /usr/include -maxdepth 2 -name '*.h' | head -200", None),
            ("npm-view", ["npm", "view", "express", "--json"], None),
            ("json-tool", f"{python} -m json.tool {site}/pip-*.dist-info/direct_url.json "
             f"2>/dev/null || {python} -c \"import json,sys; print(json.dumps("
             f"{{'path': sys.path, 'version': sys.version}}, indent=2))\"", None),
            ("help", [python, "-m", "pydoc", "json"], None),
            ("help", ["git", "help", "-a"], None),
            ("ip", "cat /proc/cpuinfo | head -60; cat /proc/meminfo | head -30", None),
            ("env-python", [python, "-c", "import sysconfig, pprint; "
                            "pprint.pprint(sysconfig.get_config_vars())"], None),
        ]
        for name, cmd, cwd in commands:
            lines = _run(cmd, cwd).splitlines()
            for i in range(0, min(len(lines), 600), 30):
                block = "\n".join(lines[i:i + 30])
                if len(block) >= MIN_CHARS:
                    yield block[:MAX_CHARS], f"cmd:{name}"

