"""make bench's web section: the whole stack as `make run` starts it (tests/integration/apistack.py:
redis, a gateway with bwrap sandboxes, sandpipe-api, nginx serving web/dist), then the browser
figures from web/tests/bench.mjs (Debian's chromium through playwright-core). Markdown out."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from apistack import ApiStack  # noqa: E402

stack = ApiStack(pool=2, web_root=os.path.join(ROOT, "web", "dist"))
try:
    env = dict(os.environ, SP_URL=f"http://127.0.0.1:{stack.http_port}",
               SP_USER_TOKEN=stack.token(sub="bench", role="user"),
               SP_ADMIN_TOKEN=stack.token(sub="root", role="admin"),
               SP_SHOTS=os.path.join(ROOT, "build", os.environ.get("MODE", "release"), "web-screenshots"))
    r = subprocess.run(["node", "tests/bench.mjs"], cwd=os.path.join(ROOT, "web"), env=env, timeout=1200)
    sys.exit(r.returncode)
finally:
    stack.stop()
