"""The gateway test stack (stack.Stack: redis + gateway + real sandboxes) plus sandpipe-api on a
FastCGI unix socket and nginx on a free loopback port in front of both: the whole service on one
origin, as `make run` starts it. HTTP helpers use the standard library only."""
import http.client
import json
import os
import subprocess
import time

from spexec import ROOT
from stack import BUILD, Stack, free_port, terminate


class ApiStack(Stack):
    def __init__(self, workers=4, rate=100000, burst=100000, addr_rate=100000, addr_burst=100000,
                 api_extra=(), tls=None, web_root=None,
                 gateways=1, gateway_extra=None, upload_max=None, tcp_gateways=(3,), nginx_extra=(),
                 preview_domain="localhost", **kw):
        """tls: (cert.pem, key.pem) to serve HTTPS with that certificate (render.sh --tls);
        request() then speaks TLS, and self.tls is the client context (verifying against
        cert.pem) for other clients, e.g. WS(..., tls=stack.tls). web_root: the static files
        nginx serves (render.sh's default: web/dist when built). gateways: how many gateways
        (the first is Stack's, gw-test; the others gw-test-2, ... on ports self.gw_ports[1:],
        processes self.more_gws), all behind the one nginx; gateway_extra: {i: [options]} for
        gateway i (2, 3, ...) alone. upload_max: nginx's --upload-max. nginx reaches each gateway
        over its unix socket (--listen-unix, as make run does) except those in tcp_gateways (1, 2,
        ...), reached over TCP as a gateway on another host would be. rate, burst, addr_rate,
        addr_burst: nginx's limits (render.sh --rate ...), high enough by default that no test
        meets them but those about them. nginx_extra: more render.sh options. preview_domain:
        render.sh --preview-domain (previews at P-S.localhost:PORT besides /preview/S/P/, as make
        run; None: path previews only)."""
        self.more_gws = []
        super().__init__(**kw)
        self.gw_ports = [self.port]
        self.gw_socks = [self.gw_sock]
        self.tls = None
        if tls:
            import ssl
            self.tls = ssl.create_default_context(cafile=tls[0])
        self.api_sock = os.path.join(self.tmp, "api.sock")
        self.api_workers = workers
        self.api_extra = list(api_extra)
        self.api = None
        self.nginx = None
        self.http_port = free_port()
        self.nginx_prefix = os.path.join(self.tmp, "nginx")
        try:
            for i in range(2, gateways + 1):
                self.start_more_gateway(i, (gateway_extra or {}).get(i, ()))
            self.start_api()
            subprocess.run([os.path.join(ROOT, "nginx", "render.sh"), "--prefix", self.nginx_prefix,
                            "--api-socket", self.api_sock, "--port", str(self.http_port),
                            "--secret-file", self.secret_file,
                            "--sandpipe", os.path.join(BUILD, "sandpipe"),
                            *[a for i, (p, sock) in enumerate(zip(self.gw_ports, self.gw_socks), 1)
                              for a in ("--gateway", f"127.0.0.1:{p}" if i in tcp_gateways
                                        else f"127.0.0.1:{p}=unix:{sock}")],
                            "--rate", str(rate),
                            "--burst", str(burst), "--addr-rate", str(addr_rate),
                            "--addr-burst", str(addr_burst), "--body-max", "16m",
                            *(["--upload-max", upload_max] if upload_max else []),
                            *(["--preview-domain", preview_domain] if preview_domain else []),
                            # kept FastCGI connections, as make run: half the workers at most
                            "--api-keepalive", str(workers // 4),
                            *(["--tls", "--tls-cert", tls[0], "--tls-key", tls[1]] if tls else []),
                            *(["--web-root", web_root] if web_root else []), *nginx_extra],
                           check=True, capture_output=True)
            self.nginx = subprocess.Popen(
                ["nginx", "-p", self.nginx_prefix, "-c", os.path.join(self.nginx_prefix, "nginx.conf")],
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.tmp, "nginx.stderr"), "w"))
            self.wait_port(self.http_port, self.nginx)
        except Exception:
            self.stop()
            raise

    def gateway_proc(self, gid):
        """The process of gateway gid (gw-test, gw-test-2, ...)."""
        return self.gw if gid == self.gateway_id else self.more_gws[int(gid.rsplit("-", 1)[1]) - 2]

    def restart_gateway(self, gid, extra=()):
        """Starts gateway gid again (after a kill) under its id, port and socket."""
        if gid == self.gateway_id:
            self.start_gateway()
            return
        i = int(gid.rsplit("-", 1)[1])
        self.start_more_gateway(i, extra, again=True)

    def start_more_gateway(self, i, extra=(), again=False):
        port = self.gw_ports[i - 1] if again else free_port()
        sock = os.path.join(self.tmp, f"gateway-{i}.sock")
        log = open(os.path.join(self.tmp, f"gateway-{i}.log"), "a")
        gw = subprocess.Popen(
            [os.path.join(BUILD, "sandpipe-gateway"), "--listen", f"127.0.0.1:{port}", "--listen-unix", sock,
             *self.redis_args("gateway"), "--provider", self.provider,
             "--state-dir", self.state_dir, "--secret-file", self.secret_file,
             "--pool", str(self.pool), "--id", f"gw-test-{i}", *extra,
             *(["--image", os.environ["SANDPIPE_TEST_IMAGE"]] if os.environ.get("SANDPIPE_TEST_IMAGE") else []),
             *self.extra,
             *(["--executor", os.environ["SANDPIPE_EXECUTOR"]] if os.environ.get("SANDPIPE_EXECUTOR") else [])],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        if again:
            self.more_gws[i - 2] = gw
        else:
            self.more_gws.append(gw)
            self.gw_ports.append(port)
            self.gw_socks.append(sock)
        self.wait_port(port, gw)

    def start_api(self):
        self.api_log = open(os.path.join(self.tmp, "api.log"), "a")
        self.api = subprocess.Popen(
            [os.path.join(BUILD, "sandpipe-api"), "--socket", "unix:" + self.api_sock,
             *self.redis_args("api"), "--secret-file", self.secret_file,
             "--workers", str(self.api_workers), *self.api_extra],
            stdout=self.api_log, stderr=subprocess.STDOUT)
        for _ in range(250):
            if os.path.exists(self.api_sock):
                return
            if self.api.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError("sandpipe-api did not start")

    @staticmethod
    def wait_port(port, proc):
        import socket
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.02)
        raise RuntimeError(f"nothing listens on {port}")

    def api_worker_pids(self):
        out = subprocess.run(["pgrep", "-P", str(self.api.pid)], capture_output=True, text=True)
        return sorted(int(p) for p in out.stdout.split())

    def request(self, method, path, body=None, token=None, headers=None, timeout=60, raw=False):
        """One HTTP request through nginx. Returns (status, parsed JSON or text, headers)."""
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        data = body
        if body is not None and not isinstance(body, (bytes, str)):
            data = json.dumps(body)
            h.setdefault("Content-Type", "application/json")
        if self.tls:
            c = http.client.HTTPSConnection("127.0.0.1", self.http_port, timeout=timeout, context=self.tls)
        else:
            c = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=timeout)
        try:
            c.request(method, path, body=data, headers=h)
            resp = c.getresponse()
            payload = resp.read()
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
        finally:
            c.close()
        if raw:
            return resp.status, payload, hdrs
        ctype = hdrs.get("content-type", "")
        if "json" in ctype:
            return resp.status, json.loads(payload), hdrs
        return resp.status, payload.decode("utf-8", "replace"), hdrs

    def api_create_session(self, token, params=None):
        st, body, _ = self.request("POST", "/api/v1/sessions", params or {}, token=token, timeout=90)
        if st != 201:
            raise RuntimeError(f"create failed: {st} {body}")
        return body["id"]

    def stop(self):
        for p in (self.nginx, self.api, *self.more_gws):
            terminate(p)
        if getattr(self, "api_log", None):
            self.api_log.close()
        super().stop()


class ClassStack:
    """A test class's own ApiStack, made from its STACK_KW before its tests and stopped after:
        class T(ClassStack, unittest.TestCase):
            STACK_KW = dict(pool=1, gateways=2)"""
    STACK_KW = {}

    @classmethod
    def setUpClass(cls):
        cls.st = ApiStack(**cls.STACK_KW)

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()


class ModuleStack:
    """One ApiStack shared by all the classes of a test module, started by the module's
    setUpModule and stopped by its tearDownModule:
        STACK = ModuleStack(pool=2)
        setUpModule, tearDownModule = STACK.start, STACK.stop
    Everything else is the running stack's (STACK.token(), STACK.request(), ...)."""

    def __init__(self, **kw):
        self._kw, self._stack = kw, None

    def start(self):
        self._stack = ApiStack(**self._kw)

    def stop(self):
        stack, self._stack = self._stack, None
        if stack:
            stack.stop()

    def __getattr__(self, name):
        if self._stack is None:
            raise AttributeError(f"{name}: the module's stack is not running")
        return getattr(self._stack, name)
