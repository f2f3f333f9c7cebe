"""What bench/claim_ab.py and bench/echo_nginx_ab.py start: a work directory, Redis on a unix
socket with the users of make run, gateways with bwrap sandboxes; all stopped by pid and the
sandboxes destroyed by stop(). Loopback and unix sockets only."""
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
B = os.path.join(REPO, "build", os.environ.get("MODE", "release"))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))

from stack import free_port  # noqa: E402,F401 (the tests' own; echo_nginx_ab.py takes it from here)


class AbStack:
    def __init__(self, prefix):
        self.work = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.work, 0o711)  # searchable: each sandbox runs as its own uid below it
        self.procs, self.state_dirs = [], []
        subprocess.run([f"{B}/sandpipe", "redis-acl", "--generate", "--dir", self.work, "--template",
                        f"{REPO}/redis/users.acl", "--out", f"{self.work}/users.acl"], check=True)
        self.redis_sock = f"{self.work}/redis.sock"
        self.start(["redis-server", f"{REPO}/redis/redis.conf", "--port", "0", "--unixsocket", self.redis_sock,
                    "--dir", self.work, "--aclfile", f"{self.work}/users.acl", "--daemonize", "no"])
        while not os.path.exists(self.redis_sock):
            time.sleep(0.02)
        self.secret = os.urandom(32).hex()
        with open(f"{self.work}/secret", "w") as f:
            f.write(self.secret + "\n")
        os.chmod(f"{self.work}/secret", 0o600)

    def start(self, argv, log=None):
        out = open(log, "w") if log else subprocess.DEVNULL
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def gateway(self, binary, name, pool, unix=None, executor=None):
        """Starts a gateway (with this build's executor unless given); returns its TCP port (and
        listens on unix too when given)."""
        port = free_port()
        state = f"{self.work}/{name}"
        self.state_dirs.append(state)
        self.start([binary, "--listen", f"127.0.0.1:{port}", *(["--listen-unix", unix] if unix else []),
                    "--redis", f"unix:{self.redis_sock}", "--redis-user", "gateway",
                    "--redis-password-file", f"{self.work}/redis-gateway.password", "--provider", "bwrap",
                    "--state-dir", state, "--secret-file", f"{self.work}/secret", "--pool", str(pool),
                    "--id", name, "--executor", executor or f"{B}/sandpipe-executor"], log=f"{self.work}/{name}.log")
        return port

    def stop(self):
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        leftovers = f"{REPO}/tests/integration/leftovers.py"
        for d in self.state_dirs:
            subprocess.run(["python3", leftovers, "destroy", d], stdout=subprocess.DEVNULL)
        for _ in range(10):  # loop devices detach a moment after their mounts go
            time.sleep(1)
            if subprocess.run(["python3", leftovers, "check", self.work], capture_output=True).returncode == 0:
                subprocess.run(["rm", "-rf", self.work])
                return
        subprocess.run(["python3", leftovers, "check", self.work])
        print(f"{self.work} kept (above)", file=sys.stderr)
