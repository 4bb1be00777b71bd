"""Code-injection scanner: what a tool call must not run.

Families (issue 6; web and template code, issue 31): destructive shell commands, shell
chains that smuggle a second command into an argument, download-and-execute and reverse
shells, SQL injection, path traversal and sensitive paths read or sent, dangerous Python
calls, scripts that exfiltrate a page's cookies or storage, event handlers and
`javascript:` links that run code, server-side template injection (Jinja, Java EL,
Log4Shell lookups) and PHP web shells. The threat is text that would do something if a
tool, a shell, a browser or a template engine ran it; a dangerous function or file named
in a sentence ("why eval() on untrusted input is dangerous", "/etc/shadow holds the
hashes") is prose. Patterns match on the lower-cased text; validators look at the
surrounding line to tell code from prose (`model.eval()` is not `eval(`; a mention
inside a string literal or comment is not a call).
"""

from __future__ import annotations

import re

from tracerl.guard.findings import Finding, Pattern, Validator, line_bounds, pattern, run_patterns

_SENSITIVE_TARGET = re.compile(
    r"\s(?:/|/\*|~|~/|\*|\$home|/etc|/usr|/var|/home|/boot|/bin|/lib|/root|/opt|\.|\.\.|/\w{1,20}/?)"
    r"(?:\s|$|;|&|\|)|--no-preserve-root"
)


_PROSE_WORD = re.compile(
    r"\s{0,3}(?:$|[`'\",.:;)!?](?:\s|$)|(?:with|is|to|and|or|on|in|can|will|would|should|the|a|an|command"
    r"|commands|flag|flags|deletes|removes|is|was|when|if)\b)"
)


def _rm(m: re.Match[str], text: str) -> float | None:
    """`rm -r/-f` is destructive; on / or ~ or * it is catastrophic; in prose it names a command."""
    rest = text[m.end() : m.end() + 80].split("\n", 1)[0].lower()
    if rest[:1].isalnum() or rest[:1] == "-":  # the flag token runs on (`-rfv`): skip it
        rest = " " + rest.partition(" ")[2]
    if "--no-preserve-root" in rest or _SENSITIVE_TARGET.match(" " + rest.lstrip() + " "):
        return 0.95
    return 0.45 if _PROSE_WORD.match(rest) else 0.75


def _in_string_or_comment(text: str, pos: int) -> bool:
    """Heuristic: `pos` sits inside a quoted string or after `#` on its line."""
    lo, _ = line_bounds(text, pos)
    before = text[lo:pos]
    if "-c " in before or "-c\t" in before:  # python -c "...": the string is code
        return False
    quotes = 0
    open_q = ""
    for ch in before:
        if open_q:
            if ch == open_q:
                open_q = ""
                quotes += 1
        elif ch in "'\"":
            open_q = ch
        elif ch == "#":
            return True
    return bool(open_q)


_WORDS_BEFORE = re.compile(r"(?:[^\W\d_]{2,}[,]?\s+){2,}(?:\S+\s+)?$")
_CODE_MARKS = frozenset("=;{}[]<>$(")
_KEYWORDS = frozenset("return await yield print lambda if elif while not and or else assert "
                      "raise in is for with from import def async".split())


def _in_prose(text: str, pos: int) -> bool:
    """The call is named inside a sentence: two words or more that are not Python
    keywords run up to it on its line, and the line before it holds no assignment,
    bracket, statement or markup character."""
    lo, _ = line_bounds(text, pos)
    before = text[lo:pos]
    if before[:1].isspace() or before.lstrip().startswith((">>>", "$", "...")):
        return False  # indented code, a REPL or a shell prompt
    m = _WORDS_BEFORE.search(before)
    if _CODE_MARKS & set(before) or not m:
        return False
    return sum(w.lower() not in _KEYWORDS for w in re.findall(r"[^\W\d_]+", m.group())) >= 2


def _python_call(m: re.Match[str], text: str) -> float | None:
    if _in_string_or_comment(text, m.start()):
        return None
    after = text[m.end() : m.end() + 2]
    if after.startswith(")"):  # `eval()` names the function and calls nothing
        return None
    if _in_prose(text, m.start()):  # "why eval(x) on untrusted input is dangerous"
        return 0.45
    name = m.group(1)
    if name in ("eval", "exec", "__import__", "os.system", "os.popen", "pty.spawn"):
        return 0.9
    if name.startswith("subprocess"):
        line = text[m.end() : line_bounds(text, m.end())[1]]
        return 0.9 if "shell=true" in line.lower().replace(" ", "") else 0.8
    return 0.8


def _sql_tautology(m: re.Match[str], text: str) -> float | None:
    """`' OR 'a'='a` and `' or 1=1`: both sides of the comparison are the same."""
    return 0.9 if m.group(1) == m.group(2) else None


def _unbalanced_quote(m: re.Match[str], text: str) -> float | None:
    """`admin'--`: the quote closes a string the text never opened (an injected close).
    In `"O'Brien" -- note` it closes a literal opened on the same line: not injection."""
    quote = text[m.start()]
    lo, _ = line_bounds(text, m.start())
    return 0.75 if text.count(quote, lo, m.start()) % 2 == 0 else None


def _sql_sleep(m: re.Match[str], text: str) -> float | None:
    head = text[max(0, m.start() - 30) : m.start()].lower()
    return 0.85 if any(t in head for t in ("'", " and ", " or ", "select", '"')) else None


def _traversal(m: re.Match[str], text: str) -> float | None:
    depth = m.group().count("..")
    tail = text[m.end() : m.end() + 40].lower()
    if any(t in tail for t in ("etc/", "passwd", "shadow", "windows", ".ssh", ".env", "proc/",
                               "boot.ini", "win.ini", "system32", ".aws", "root/")):  # fmt: skip
        return 0.95
    return 0.75 if depth >= 4 else None


_PROSE_NEXT = re.compile(r"[ \t]{1,3}(?!now\b)[a-z]{3,}\b")


def _command_position(m: re.Match[str], text: str) -> float | None:
    """`shutdown` etc. count only where a command starts (line start, ; && | $( `) and
    is not followed by a word of prose ("halt without doing work", "Shutdown the ...")."""
    head = text[max(0, m.start() - 6) : m.start()].rstrip(" ")
    if _PROSE_NEXT.match(text, m.end()):
        return None
    if not head or head[-1] in ";&|`(\n\"'" or head.endswith("sudo"):
        return 0.8
    return None


_PATH_USE = re.compile(
    r"(?:\b(?:cat|less|more|head|tail|cp|scp|mv|tar|zip|base64|xxd|strings|nc|curl|wget|rsync"
    r"|type|get-content|gc|open|read|read_text|readfile|file_get_contents|include|require"
    r"|fopen|load)\b[^\n]{0,40}$|(?:file://|<|\.\./|%2f|[\"'(=])\s{0,2}$)")


def _path_use(m: re.Match[str], text: str) -> float | None:
    """A sensitive file read, sent or opened (`cat /etc/shadow`, `open("~/.ssh/id_rsa")`,
    `file:///etc/passwd`, `../../root/.ssh`) is an attack on the machine; the file named in
    a manual's FILES section or a changelog ("fields in /etc/shadow") is a mention."""
    lo, _ = line_bounds(text, m.start())
    return 0.75 if _PATH_USE.search(text[max(lo, m.start() - 60) : m.start()].lower()) else None


def _p(kind: str, rx: str, score: float, triggers: tuple[str, ...],
       validate: Validator | None = None, anchored: bool = False) -> Pattern:  # fmt: skip
    return pattern(kind, rx, score, triggers, validate, lower=True, flags=re.M,
                   anchored=anchored)


_CHAIN_CMD = (
    r"(?:nc|ncat|netcat|telnet|mkfifo|whoami|id|uname\s{1,3}-a|curl|wget|cat\s{1,3}/etc/"
    r"(?:passwd|shadow)|bash\s{1,3}-i|sh\s{1,3}-i|rm\s{1,3}-|chmod|sudo|base64\s{1,3}-d)"
)

PATTERNS: tuple[Pattern, ...] = (
    _p("destructive_command", r"\brm\s{1,5}-{1,2}[a-z-]{0,12}[rf]", 0.75, ("rm ",), _rm),
    _p("destructive_command", r"\bmkfs(?:\.[a-z0-9]{1,8})?\s", 0.95, ("mkfs",)),
    _p("destructive_command", r"\bdd\s[^\n]{0,80}?\bof=/dev/[a-z]", 0.95, ("of=/dev",)),
    _p(
        "destructive_command", r">\s{0,3}/dev/(?:sd[a-z]|nvme|hd[a-z]|mmcblk|xvd)", 0.95, ("/dev/",)
    ),
    _p(
        "destructive_command",
        r":\(\)\s{0,3}\{\s{0,3}:\s{0,3}\|\s{0,3}:\s{0,3}&\s{0,3}\}",
        0.99,
        (":()",),
    ),  # fork bomb
    _p("destructive_command", r"\bchmod\s{1,5}(?:-r\s{1,5})?0?777\s{1,5}/", 0.9, ("777",)),
    _p("destructive_command", r"\bfind\s[^\n]{0,80}?\s-delete\b", 0.8, ("-delete",)),
    _p("destructive_command", r"\bshred\s{1,3}-", 0.85, ("shred",)),
    _p("destructive_command", r"\bkill\s{1,3}-9\s{1,3}-1\b", 0.9, ("kill",)),
    _p(
        "destructive_command",
        r"\b(?:shutdown|poweroff|halt|reboot|init\s0)\b",
        0.8,
        ("shutdown", "poweroff", "halt", "reboot", "init"),
        _command_position,
    ),
    _p(
        "destructive_command",
        r"\bgit\s{1,3}(?:push\s[^\n]{0,60}?(?:--force|\s-f\b)"
        r"|reset\s{1,3}--hard|clean\s{1,3}-[a-z]{0,3}f)",
        0.7,
        ("git",),
    ),
    _p("shell_chain", r"(?:;|&&|\|\||\||\$\()\s{0,3}" + _CHAIN_CMD + r"\b", 0.8,
       (";", "&&", "|", "$("), anchored=True),
    _p(
        "shell_chain",
        r"`(?:whoami|id|uname\s{1,3}-a|hostname|cat\s{1,3}/etc/passwd|curl\s|wget\s)(?![\w-])",
        0.8,
        ("`",),
    ),
    _p(
        "reverse_shell",
        r"/dev/(?:tcp|udp)/|\bnc(?:at)?\s[^\n]{0,40}?\s-[a-z]{0,3}e\s{1,3}/bin/"
        r"|\bbash\s{1,3}-i\s{0,3}>&|\bpty\.spawn\(|socket\.socket\([^\n]{0,200}?\.connect\(",
        0.95,
        ("/dev/tcp", "/dev/udp", "nc", "bash", "pty.", "socket"),
    ),
    _p(
        "download_execute",
        r"\b(?:curl|wget|fetch)\b[^\n|;]{0,200}+\|\s{0,3}(?:sudo\s{1,3})?"
        r"(?:ba|z|da|k)?sh\b",
        0.95,
        ("curl", "wget", "fetch"),
    ),
    _p(
        "download_execute",
        r"\b(?:curl|wget)\b[^\n|;]{0,200}+\|\s{0,3}(?:sudo\s{1,3})?"
        r"(?:python[0-9.]{0,4}|perl|ruby|node|php)\s{0,3}(?:-\s{0,3})?(?:$|[;&|)])",
        0.9,
        ("curl", "wget"),
    ),
    _p(
        "download_execute",
        r"\bchmod\s{1,3}\+x\s{1,3}[^\s;&|]{1,200}\s{0,3}(?:&&|;)\s{0,3}"
        r"(?:\./|/tmp/|/dev/shm/|sh\s|bash\s)",
        0.85,
        ("+x",),
    ),
    _p(
        "download_execute",
        r"\b(?:iex|invoke-expression)\b[^\n]{0,120}?(?:downloadstring|"
        r"invoke-webrequest|iwr|net\.webclient)|downloadstring\s{0,3}\(|\bpowershell(?:\.exe)?\s"
        r"[^\n]{0,60}?\s-(?:enc|encodedcommand|e)\s|\bcertutil\b[^\n]{0,60}?-urlcache",
        0.9,
        ("iex", "invoke-expression", "downloadstring", "powershell", "certutil"),
    ),
    _p(
        "download_execute",
        r"\bbase64\s{1,3}(?:-d|--decode|-di)\b[^\n]{0,40}?\|\s{0,3}(?:ba)?sh\b",
        0.95,
        ("base64",),
    ),
    _p(
        "sql_injection",
        r"['\"]\s{0,3}(?:or|and|\|\|)\s{1,3}['\"]?(\w{1,10})['\"]?\s{0,3}=\s{0,3}"
        r"['\"]?(\w{1,10})",
        0.9,
        ("=",),  # every match has one; rarer in text than "or", its other necessary part
        _sql_tautology,
        anchored=True,
    ),
    _p(
        "sql_injection",
        r"['\"]\s{0,3}\)?\s{0,3}(?:;\s{0,3})?(?:--(?:\s|$)|#\s{0,3}$|/\*)",
        0.75,
        ("--", "#", "/*"),
        _unbalanced_quote,
        anchored=True,
    ),
    _p(
        "sql_injection",
        r"'\s{0,3}(?:or|\|\|)\s{1,3}''\s{0,3}=\s{0,3}'|\"\s{0,3}(?:or|\|\|)\s{1,3}"
        r"\"\"\s{0,3}=\s{0,3}\"",
        0.9,
        ("=",),
        anchored=True,
    ),
    _p(
        "sql_injection",
        r"\bunion\s{1,5}(?:all\s{1,5})?select\s{1,5}(?:null|\d{1,3}\s{0,3},|@@"
        r"|version\(|user\(|database\(|concat|group_concat|table_name|column_name|load_file"
        r"|char\()|['\")]\s{0,5}union\s{1,5}(?:all\s{1,5})?select\b",
        0.9,
        ("union",),
    ),
    _p(
        "sql_injection",
        r"['\"]\s{0,3}\)?\s{0,3};\s{0,3}(?:drop|delete|update|insert|truncate"
        r"|shutdown|exec|create|alter)\b",
        0.9,
        (";",),
        anchored=True,
    ),
    _p(
        "sql_injection",
        r"(?<![\w.])(?:sleep|benchmark|pg_sleep)\s{0,3}\(\s{0,3}\d",
        0.85,
        ("sleep", "benchmark"),
        _sql_sleep,
    ),
    _p(
        "sql_injection",
        r"\bwaitfor\s{1,3}delay\s{1,3}'|\bxp_cmdshell\b|\binto\s{1,3}(?:out|dump)"
        r"file\b|\bload_file\s{0,3}\(",
        0.9,
        ("waitfor", "xp_cmdshell", "outfile", "dumpfile", "load_file"),
    ),  # fmt: skip
    _p(
        "destructive_sql",
        r"\b(?:drop|truncate)\s{1,3}(?:table|database|schema)\s{1,3}(?:if\s{1,3}"
        r"exists\s{1,3})?[\w.`\"\[\]]{1,64}\s{0,3}(?:;|cascade|$)",
        0.8,
        ("drop", "truncate"),
    ),
    _p(
        "destructive_sql",
        r"\bdelete\s{1,3}from\s{1,3}[\w.`\"]{1,64}\s{0,3}(?:;|$)",
        0.75,
        ("delete",),
    ),
    _p("path_traversal", r"(?:\.\.[/\\]){2,64}", 0.75, ("..",), _traversal),
    _p(
        "path_traversal",
        r"(?:%2e|\.){2}(?:%2f|%5c)|%2e%2e[/\\]|%252e%252e|\.\.%c0%af|\.\.%u2216",
        0.9,
        ("%2", "%c0", "%u2"),
    ),
    _p(
        "sensitive_path",
        r"/etc/(?:passwd|shadow|sudoers|gshadow)\b|~/\.ssh/|/\.ssh/id_|/root/\.(?:ssh|aws|bash_h"
        r"|gnupg|netrc|docker|kube|git-cred|config/gcloud)|"
        r"\.aws/credentials|/proc/self/(?:environ|mem)|c:\\\\?windows\\\\?system32|\.docker/config"
        r"\.json|\.kube/config|\.git-credentials|\.netrc\b",
        0.75,
        (
            "/etc/",
            ".ssh",
            "/root/",
            ".aws",
            "/proc/self",
            "system32",
            ".docker",
            ".kube",
            ".git-credentials",
            ".netrc",
        ),
        _path_use,
    ),
    _p(
        "dangerous_python",
        r"(?<![\w.])(os\.(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?|remove"
        r"|unlink|rmdir|removedirs|kill)|subprocess\.(?:run|call|popen|check_output|check_call"
        r"|getoutput|getstatusoutput)|shutil\.rmtree|pty\.spawn|c?pickle\.loads?|marshal\.loads"
        r"|dill\.loads|eval|exec|execfile|__import__)\s{0,3}\(",
        0.85,
        (
            "os.",
            "subprocess",
            "shutil",
            "pty.",
            "pickle",
            "marshal",
            "dill",
            "eval",
            "exec",
            "__import__",
        ),
        _python_call,
    ),
    _p(
        "dangerous_python",
        r"\.__(?:subclasses|globals|builtins)__\b|\bgetattr\s{0,3}\(\s{0,3}"
        r"__builtins__|\bglobals\(\)\s{0,3}\[\s{0,3}['\"]__builtins__",
        0.85,
        ("__",),
    ),
)


_EXFIL_READ = r"(?:document\.cookie|localstorage|sessionstorage|document\.domain)"
_EXFIL_SEND = (r"(?:fetch\s{0,3}\(|xmlhttprequest|sendbeacon|new\s{1,3}image|\.src\s{0,3}=|"
               r"(?:window|document)\.location(?:\.href)?\s{0,3}=|location\.href\s{0,3}=|"
               r"\$\.(?:get|post|ajax)\s{0,3}\()")

WEB_PATTERNS: tuple[Pattern, ...] = (
    # a script that reads the page's secrets and sends them out: either order
    _p("xss", r"<script\b[^>]{0,200}>[^<]{0,2000}?(?:" + _EXFIL_READ + r"[^<]{0,400}?"
       + _EXFIL_SEND + "|" + _EXFIL_SEND + r"[^<]{0,400}?" + _EXFIL_READ + ")", 0.95,
       ("<script",)),
    _p("xss", r"<script\b[^>]{0,200}>\s{0,3}(?:alert|prompt|confirm)\s{0,3}\(", 0.8,
       ("<script",)),
    _p("xss", r"<[a-z]{1,12}\b[^>]{0,200}?\son(?:error|load|mouseover|focus|click|toggle"
       r"|animationstart)\s{0,3}=\s{0,3}['\"]?[^>]{0,200}?(?:alert|prompt|confirm|fetch"
       r"|eval|atob|document\.cookie|location|\.src\s{0,3}=)", 0.85,
       ("onerror", "onload", "onmouseover", "onfocus", "onclick", "ontoggle",
        "onanimationstart")),
    _p("xss", r"(?:href|src|action|formaction)\s{0,3}=\s{0,3}['\"]?\s{0,3}javascript:", 0.8,
       ("javascript:",)),
    _p("xss", _EXFIL_READ + r"[^\n]{0,300}?" + _EXFIL_SEND + "|" + _EXFIL_SEND
       + r"[^\n]{0,300}?" + _EXFIL_READ, 0.85,
       ("document.cookie", "localstorage", "sessionstorage", "document.domain")),
    _p("server_template_injection",
       r"\{\{[^}\n]{0,200}?(?:__class__|__mro__|__subclasses__|__globals__|__builtins__"
       r"|__import__|__init__|config\.items\s{0,3}\(|request\.application|self\._"
       r"|lipsum\.|cycler\.|joiner\.|\|attr\s{0,3}\()", 0.9, ("{{",)),
    _p("server_template_injection", r"\{%[^%\n]{0,200}?(?:__class__|__globals__|__import__"
       r"|import\s{1,3}os|popen)", 0.9, ("{%",)),
    _p("server_template_injection", r"\$\{[^}\n]{0,20}?jndi\s{0,3}:|\$\{\$\{[^}\n]{0,20}\}"
       r"[^}\n]{0,40}?jndi|\$\{(?:\$\{[^}\n]{0,20}\}){2}", 0.95, ("${",)),
    _p("server_template_injection", r"[$#]\{[^}\n]{0,200}?(?:runtime\s{0,3}\.\s{0,3}getruntime"
       r"|processbuilder|\.exec\s{0,3}\(|getclass\s{0,3}\(\s{0,3}\)\s{0,3}\.forname)", 0.9,
       ("${", "#{")),
    _p("web_shell", r"<\?(?:php|=)?[^?]{0,200}?\b(?:system|exec|shell_exec|passthru|popen"
       r"|proc_open|eval|assert)\s{0,3}\(\s{0,3}(?:base64_decode\s{0,3}\(\s{0,3})?"
       r"\$_(?:get|post|request|cookie|server)", 0.95, ("<?",)),
)
"""Code that runs in a page or a template and does something: exfiltration, a handler
that runs code, a template that reaches the interpreter, a JNDI lookup (Log4Shell), a
PHP web shell. A page that only loads a script, or prose about XSS, is not flagged."""

ALL_PATTERNS = PATTERNS + WEB_PATTERNS
"""One tuple, built once: the trigger index is cached per tuple."""


class CodeInjectionScanner:
    """Destructive shell, injection chains, download-and-execute, SQLi, traversal, Python."""

    name = "code_injection"

    def scan(self, text: str) -> list[Finding]:
        return run_patterns(self.name, ALL_PATTERNS, text)
