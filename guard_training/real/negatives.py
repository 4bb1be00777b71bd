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
import io
import random
import re
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path

from real import key

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



# --- Debian documentation packages, pinned (apt-get download, read as data) ------------

APP_HELP = {
    # GNOME applications' own help (gnome-app-help; gnome-user-docs is held out)
    "baobab": "43.0-1",
    "eog": "43.2-1+deb12u1",
    "evince-common": "43.1-2+deb12u1",
    "file-roller": "43.0-1",
    "gedit-common": "44.2-1",
    "gnome-calculator": "1:43.0.1-2",
    "gnome-clocks": "43.0-1",
    "gnome-mines": "1:40.1-1",
    "gnome-system-monitor": "42.0-2",
    "gnome-terminal-data": "3.46.8-1",
    "seahorse": "43.0-1",
    "simple-scan": "42.5-2",
    "totem-common": "43.0-2",
    "zenity-common": "3.44.0-1",
}
DEBS = {
    "debian-handbook": "11.20220922",
    "gnome-user-docs": "43.0-2",
    **APP_HELP,
}


def fetch_deb(name: str, cache: Path) -> Path:
    """The pinned .deb of DEBS, downloaded into `cache` once (`apt-get download`; nothing
    is installed)."""
    cache.mkdir(parents=True, exist_ok=True)
    version = DEBS[name]
    pattern = f"{name}_*{version.split(':')[-1]}_*.deb"  # an epoch is written 1%3a
    found = sorted(cache.glob(pattern))
    if not found:
        subprocess.run(["apt-get", "download", f"{name}={version}"], cwd=cache, check=True,
                       capture_output=True)
        found = sorted(cache.glob(pattern))
    return found[0]


def deb_files(deb: Path, prefix: str) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of the regular files under `prefix` in a .deb's data archive (an ar
    archive holding data.tar.*; read here, no dpkg needed)."""
    raw = deb.read_bytes()
    if not raw.startswith(b"!<arch>\n"):
        raise ValueError(f"{deb} is not a Debian package")
    pos = 8
    while pos + 60 <= len(raw):
        header = raw[pos:pos + 60]
        member = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58])
        if member.startswith("data.tar"):
            with tarfile.open(fileobj=io.BytesIO(raw[pos + 60:pos + 60 + size])) as tar:
                for info in tar:
                    path = info.name.lstrip("./")
                    if info.isfile() and path.startswith(prefix):
                        f = tar.extractfile(info)
                        if f:
                            yield path, f.read()
            return
        pos += 60 + size + size % 2
    raise ValueError(f"{deb} has no data archive")


_ENGLISH = frozenset((
    "the and of that which with this are you your from by not there its these when into "
    "should would they their been only has have").split())
_LETTERS = re.compile(r"[^\W\d_]+")


def english_share(text: str) -> float:
    """The share of a text's words that are English function words no other language of
    these manuals uses as words (a paragraph a translation left in English: 0.15-0.3)."""
    words = [w.lower() for w in _LETTERS.findall(text)]
    return sum(w in _ENGLISH for w in words) / max(1, len(words))


def _per_language(paras: dict[str, dict[str, list[str]]], english: set[str], per_lang: int,
                  prefix: str) -> Iterator[Pair]:
    """At most `per_lang` paragraphs a language (at most PER_DOC a page, then a seeded
    sample), leaving out those still in English: equal to a paragraph of the original,
    or (an older English text) with English function words for 8% of their words."""
    for lang in sorted(paras):
        pool = []
        for page in sorted(paras[lang]):
            mine = [p for p in dict.fromkeys(paras[lang][page]) if key(p) not in english
                    and MIN_CHARS <= len(p) <= MAX_CHARS and english_share(p) < 0.08]
            if len(mine) > PER_DOC:
                mine = random.Random(f"31:{lang}/{page}").sample(mine, PER_DOC)
            pool += [(p, f"{prefix}:{lang}/{page}") for p in mine]
        if len(pool) > per_lang:
            pool = sorted(random.Random(f"31:{lang}").sample(pool, per_lang),
                          key=lambda x: x[1])
        yield from pool


class _HandbookParas(HTMLParser):
    """The text of each <div class="para"> of a Publican page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paras: list[str] = []
        self._depth = 0  # divs open inside the current para (0: not in one)
        self._buf: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "div":
            return
        if self._depth:
            self._depth += 1
        elif ("class", "para") in attrs:
            self._depth, self._buf = 1, []

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._depth:
            self._depth -= 1
            if not self._depth:
                self.paras.append(" ".join("".join(self._buf).split()))

    def handle_data(self, data: str) -> None:
        if self._depth:
            self._buf.append(data)


def _translations(debs: Iterable[Path], root: str, depth: int, suffix: str,
                  blocks: Callable[[bytes], list[str]], original: str, per_lang: int,
                  prefix: str) -> Iterator[Pair]:
    """The blocks of documentation packages' pages (root/<lang>/..., `depth` path parts,
    ending in `suffix`) by language, through _per_language; the `original` language is
    only the reference for what a translation left untranslated."""
    paras: dict[str, dict[str, list[str]]] = {}
    for deb in debs:
        for path, data in deb_files(deb, root):
            parts = path[len(root):].split("/")
            if len(parts) == depth and parts[-1].endswith(suffix):
                paras.setdefault(parts[0], {})["/".join(parts[1:])] = blocks(data)
    english = {key(p) for page in paras.pop(original).values() for p in page}
    yield from _per_language(paras, english, per_lang, prefix)


def _handbook_paras(data: bytes) -> list[str]:
    parser = _HandbookParas()
    parser.feed(data.decode("utf-8", errors="replace"))
    return parser.paras


def debian_handbook(deb: Path, per_lang: int = 400) -> Iterator[Pair]:
    """Paragraphs of the handbook's translations (html/<lang>/*.html; en-US is the
    original and is left out, and so is every paragraph a translation left in English)."""
    return _translations([deb], "usr/share/doc/debian-handbook/html/", 2, ".html",
                         _handbook_paras, "en-US", per_lang, "handbook")


_MALLARD = "{http://projectmallard.org/1.0/}"
_LISTS = {f"{_MALLARD}{t}" for t in ("steps", "list", "terms", "tree")}


def _mallard_blocks(data: bytes) -> list[str]:
    """A Mallard page's paragraphs (<p> outside <info> and tables) and its step and item
    lists, one block each (an item a line)."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return []
    out: list[str] = []

    def flat(e: ET.Element) -> str:  # a key sequence reads Ctrl+S, as yelp shows it
        parts = [flat(c) for c in e] if e.tag == f"{_MALLARD}keyseq" else \
            [e.text or ""] + [flat(c) + (c.tail or "") for c in e]
        return "+".join(parts) if e.tag == f"{_MALLARD}keyseq" else "".join(parts)

    def text(e: ET.Element) -> str:
        return " ".join(flat(e).split())

    def walk(e: ET.Element) -> None:
        for child in e:
            if child.tag in (f"{_MALLARD}info", f"{_MALLARD}table"):
                continue
            if child.tag in _LISTS:
                lines = [text(item) for item in child if text(item)]
                if lines:
                    out.append("\n".join(lines))
            elif child.tag == f"{_MALLARD}p":
                out.append(text(child))
            else:
                walk(child)

    walk(root)
    return out


def gnome_help(deb: Path, per_lang: int = 200) -> Iterator[Pair]:
    """Paragraphs of the GNOME help pages (help/<lang>/<document>/*.page; C is the
    original and is left out, and so is every block a translation left in English)."""
    return _translations([deb], "usr/share/help/", 3, ".page", _mallard_blocks, "C",
                         per_lang, "gnome-help")


def gnome_app_help(debs: Iterable[Path], per_lang: int = 300) -> Iterator[Pair]:
    """Paragraphs and step lists of GNOME applications' own help (help/<lang>/<app>/
    *.page of the APP_HELP packages, pinned: disk usage, image and document viewers, archive
    manager, editor, calculator, clocks, a game, system monitor, terminal, passwords and
    keys, scanning, video player, dialogs), C left out as in gnome_help; a page is
    `<app>/<page>`, so one app's pages in one language are one document each."""
    return _translations(debs, "usr/share/help/", 3, ".page", _mallard_blocks, "C",
                         per_lang, "gnome-app-help")
