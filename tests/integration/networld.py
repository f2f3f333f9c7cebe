"""An "outside world" for network tests: DNS, HTTP, HTTPS, a package index and a git repository,
served from a network namespace the test creates, on documentation addresses (TEST-NET-2,
198.51.100.0/24, and TEST-NET-3, 203.0.113.0/24), so nothing a test asks for can leave the
machine. Never TEST-NET-1 (192.0.2.0/24): the machines this project runs on (developers' and
CI's) number their own uplink there (eth0 192.0.2.2/24, default via 192.0.2.1), so the world
neither uses it nor lets a name map into it.

The sandboxes' network daemon proxies their TCP connections and DNS queries from the host's
network namespace, so the world is reached from there by plain routing, as the internet would be:

    host netns                                 world netns (spworld-XXXXXX)
    spwXXXXXXh 198.51.100.1/24 <--- veth --->  spwXXXXXXw 198.51.100.2/24, default via 198.51.100.1
    203.0.113.0/24 via 198.51.100.2            lo: 198.51.100.53 (DNS) and every served address /32

"Host" is the network namespace of the thread that builds the world (the test process's own,
normally). The world has no route anywhere but back to the host and forwards nothing, and its
DNS server is authoritative only (it never asks anyone else).

    with NetWorld(big_bytes=100 << 20) as world:
        world.dns_queries()          # names the DNS server was asked, in order
        world.ca_pem                 # the test CA, for curl --cacert inside a sandbox
        world.git_head               # the commit http://files.world.example/repo.git serves

One world at a time per machine (its addresses are fixed): a second NetWorld waits for the first
to close (a lock in /run/lock), and worlds left by a test process that died are removed first.
A host namespace that already uses one of the world's two ranges (an address, a route or a
gateway in 198.51.100.0/24 or 203.0.113.0/24) is refused with the reason: the world would take
over addresses the machine needs (OwnNetns gives a test a namespace of its own to build the world
in instead). 192.0.2.0/24 is not the world's, so a host numbered there is no conflict: the world
is built in the machine's real host namespace, where the daemon proxies from."""
import base64
import ctypes
import fcntl
import hashlib
import io
import ipaddress
import json
import os
import re
import secrets
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

from stack import terminate

HERE = os.path.dirname(os.path.abspath(__file__))
SERVE = os.path.join(HERE, "networld_serve.py")

HOST_ADDR = "198.51.100.1"
WORLD_ADDR = "198.51.100.2"
DNS_ADDR = "198.51.100.53"
LINK_NET = ipaddress.ip_network("198.51.100.0/24")
ROUTED_NETS = (ipaddress.ip_network("203.0.113.0/24"),)
NETS = (LINK_NET,) + ROUTED_NETS  # the world's two ranges: all it owns, all host_conflicts() checks
UPLINK_NET = ipaddress.ip_network("192.0.2.0/24")  # TEST-NET-1: the machines' own; never the world's

FILES_NAME = "files.world.example"
DEFAULT_NAMES = {
    FILES_NAME: "198.51.100.10",
    "secure.world.example": "198.51.100.20",
    "other.world.example": "203.0.113.30",
    "cname.world.example": FILES_NAME,  # not an address: a CNAME to that name
}
HELLO = b"hello from the networld\n"
BIG_DEFAULT = 100 << 20

PACKAGE = "sptest_pkg"
PACKAGE_VERSION = "1.0"
PACKAGE_TEXT = b'"""A package served by the networld fixture\'s index."""\nGREETING = "hello from sptest_pkg"\n'
WHEEL_NAME = f"{PACKAGE}-{PACKAGE_VERSION}-py3-none-any.whl"

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "Networld", "GIT_AUTHOR_EMAIL": "networld@world.example",
           "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z", "GIT_COMMITTER_NAME": "Networld",
           "GIT_COMMITTER_EMAIL": "networld@world.example",
           "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
REPO_FILES = {"README.md": b"# networld\n\nA repository served over dumb HTTP by the test world.\n",
              "hello.txt": HELLO}

NS_PREFIX = "spworld-"
HOST_IF_RE = re.compile(r"^spw[0-9a-f]{6}h$")
LOCK_PATH = "/run/lock/sandpipe-networld.lock" if os.path.isdir("/run/lock") else \
    os.path.join(tempfile.gettempdir(), "sandpipe-networld.lock")
CLONE_NEWNET = 0x40000000
PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy")

_open_world = None  # the NetWorld this process has open: a second would wait on our own lock


def ip(*args, check=True):
    """Runs `ip args...`; its stdout, or RuntimeError with its stderr."""
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip() or r.returncode}")
    return r.stdout


def ip_json(*args):
    out = ip("-j", *args)
    return json.loads(out) if out.strip() else []


def direct_env(**extra):
    """os.environ without proxy variables (a CI machine's proxy would be asked for the world's
    names and answer with an error), plus extra."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in PROXY_VARS}
    env.update(extra)
    return env


def host_conflicts():
    """What in the current network namespace overlaps the world's two ranges (LINK_NET and
    ROUTED_NETS: addresses, routes, gateways), as sentences; [] when the world can be built here.
    Anything else, 192.0.2.0/24 (the machine's own uplink) included, is no conflict."""
    def overlaps(text):
        try:
            net = ipaddress.ip_network(text, strict=False)
        except ValueError:
            return False
        return net.version == 4 and any(net.overlaps(n) for n in NETS)

    found = []
    for link in ip_json("-4", "addr", "show"):
        for a in link.get("addr_info", []):
            if overlaps(f"{a['local']}/{a['prefixlen']}"):
                found.append(f"{link['ifname']} has {a['local']}/{a['prefixlen']}")
    for r in ip_json("-4", "route", "show"):
        dst = r.get("dst", "")
        if dst != "default" and overlaps(dst):
            found.append(f"route {dst} dev {r.get('dev')}")
        elif r.get("gateway") and overlaps(r["gateway"]):
            found.append(f"route {dst} via {r['gateway']} dev {r.get('dev')}")
    return found


def _setns(fd):
    if hasattr(os, "setns"):
        os.setns(fd, CLONE_NEWNET)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class OwnNetns:
    """A fresh network namespace (lo up, nothing else) that the calling thread moves into until
    close(), for a test whose host namespace overlaps the world's ranges (host_conflicts()):
    the world is then built and reached from this one instead. Only the calling thread (and the
    processes and threads it starts from then on) is moved; close() moves it back."""

    def __init__(self):
        self.name = "spwhost-" + secrets.token_hex(3)
        self.old = None
        ip("netns", "add", self.name)
        try:
            ip("-n", self.name, "link", "set", "lo", "up")
            self.old = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
            fd = os.open(f"/run/netns/{self.name}", os.O_RDONLY)
            try:
                _setns(fd)
            finally:
                os.close(fd)
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.old is not None:
            _setns(self.old)
            os.close(self.old)
            self.old = None
        if self.name:
            ip("netns", "del", self.name, check=False)
            self.name = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- DNS client, for tests ------------------------------------------------------------------

QTYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "MX": 15, "TXT": 16, "AAAA": 28, "ANY": 255}
QTYPE_NAMES = {v: k for k, v in QTYPES.items()}
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}


def dns_encode_query(name, qtype="A", qid=None, rd=True):
    """A standard query with one question (class IN), as bytes."""
    qid = secrets.randbits(16) if qid is None else qid
    labels = b"".join(bytes([len(p)]) + p.encode("ascii") for p in name.rstrip(".").split(".") if p)
    return (struct.pack(">HHHHHH", qid, 0x0100 if rd else 0, 1, 0, 0, 0) + labels + b"\0"
            + struct.pack(">HH", QTYPES.get(qtype, qtype) if isinstance(qtype, str) else qtype, 1))


def _read_name(msg, pos):
    """(dotted name, position after it) at pos, following compression pointers (backwards
    only, at most 32)."""
    labels, end, hops = [], None, 0
    while True:
        n = msg[pos]
        if n & 0xC0 == 0xC0:
            target = struct.unpack_from(">H", msg, pos)[0] & 0x3FFF
            if end is None:
                end = pos + 2
            if target >= pos or hops > 32:
                raise ValueError("bad compression pointer")
            pos, hops = target, hops + 1
            continue
        if n == 0:
            return ".".join(labels), (end if end is not None else pos + 1)
        labels.append(msg[pos + 1:pos + 1 + n].decode("ascii", "backslashreplace"))
        pos += 1 + n


def dns_decode_reply(msg):
    """A reply as a dict: id, flags, rcode (its name), aa, tc, question (name, type), answers
    [(name, type, ttl, value)] with A as dotted text and CNAME as a name."""
    qid, flags, qd, an, _, _ = struct.unpack_from(">HHHHHH", msg)
    pos, question = 12, None
    for _ in range(qd):
        name, pos = _read_name(msg, pos)
        qtype, _ = struct.unpack_from(">HH", msg, pos)
        pos += 4
        question = (name, QTYPE_NAMES.get(qtype, qtype))
    answers = []
    for _ in range(an):
        name, pos = _read_name(msg, pos)
        rtype, _, ttl, rdlen = struct.unpack_from(">HHIH", msg, pos)
        pos += 10
        rdata = msg[pos:pos + rdlen]
        if rtype == 1 and rdlen == 4:
            value = socket.inet_ntoa(rdata)
        elif rtype == 5:
            value = _read_name(msg, pos)[0]
        else:
            value = rdata
        answers.append((name, QTYPE_NAMES.get(rtype, rtype), ttl, value))
        pos += rdlen
    return {"id": qid, "flags": flags, "rcode": RCODES.get(flags & 0xF, flags & 0xF),
            "aa": bool(flags & 0x0400), "tc": bool(flags & 0x0200), "question": question,
            "answers": answers}


def dns_query(name, qtype="A", server=DNS_ADDR, tcp=False, timeout=3):
    """Asks server one question over UDP (or TCP) and returns dns_decode_reply's dict; checks
    the reply's id is the query's."""
    query = dns_encode_query(name, qtype)
    if tcp:
        with socket.create_connection((server, 53), timeout=timeout) as s:
            s.sendall(struct.pack(">H", len(query)) + query)
            data = b""
            while len(data) < 2 or len(data) < 2 + struct.unpack(">H", data[:2])[0]:
                chunk = s.recv(65536)
                if not chunk:
                    raise ConnectionError(f"the DNS server closed the connection after {len(data)} bytes")
                data += chunk
            reply = data[2:]
    else:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(timeout)
            s.connect((server, 53))
            s.send(query)
            reply = s.recv(65535)
    out = dns_decode_reply(reply)
    if out["id"] != struct.unpack(">H", query[:2])[0]:
        raise ValueError(f"reply id {out['id']} does not answer the query")
    return out


# --- the world ------------------------------------------------------------------------------


def _run(argv, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r.stdout


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(package=PACKAGE, version=PACKAGE_VERSION, text=PACKAGE_TEXT):
    """A valid pure-Python wheel of the module package (its __init__.py holds text), version
    version, whose project name is package with "-" for "_" (fixed timestamps: the same bytes
    every time), as bytes. Its file name: wheel_name(package, version)."""
    project = package.replace("_", "-")
    files = {
        f"{package}/__init__.py": text,
        f"{package}-{version}.dist-info/METADATA":
            f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n"
            "Summary: A package served by the networld test fixture\n".encode(),
        f"{package}-{version}.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: networld\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record_name = f"{package}-{version}.dist-info/RECORD"
    record = "".join(f"{p},{_record_hash(d)},{len(d)}\n" for p, d in files.items()) + f"{record_name},,\n"
    files[record_name] = record.encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return buf.getvalue()


def wheel_name(package, version):
    return f"{package}-{version}-py3-none-any.whl"


class NetWorld:
    """The world: see the module's docstring.

    names: {name: value}; an IPv4 address (or a list of them) gives the name A records, any
    other string makes the name a CNAME to that name. Every address must be in 198.51.100.0/24
    (not .0, .1, .255) or 203.0.113.0/24 (not .0, .255); never in 192.0.2.0/24, the machine's
    own uplink (ValueError, as for any other address). DEFAULT_NAMES when None. extra_addrs:
    addresses served (HTTP, HTTPS) without a name. big_bytes: the size of /big (random bytes,
    its sha256 in big_sha256); 0 makes none, True makes BIG_DEFAULT."""

    def __init__(self, names=None, big_bytes=0, extra_addrs=(), ready_timeout=15):
        global _open_world
        self.proc = None
        self.pids = []
        self.dir = None
        self._lock_fd = None
        self._ns_made = self._link_made = False
        self.id = secrets.token_hex(3)
        self.ns = NS_PREFIX + self.id
        self.host_if, self.world_if = f"spw{self.id}h", f"spw{self.id}w"
        self.host_addr, self.world_addr, self.dns_addr = HOST_ADDR, WORLD_ADDR, DNS_ADDR
        if _open_world is not None:
            raise RuntimeError(f"this process already has a NetWorld open ({_open_world.ns}): close it first")
        self.names, self._zone = self._check_names(DEFAULT_NAMES if names is None else names)
        addrs = {a for v in self._zone.values() if isinstance(v, list) for a in v}
        addrs |= {self._check_addr(a) for a in extra_addrs}
        self.addrs = sorted(addrs, key=ipaddress.ip_address)
        self.big_bytes = BIG_DEFAULT if big_bytes is True else int(big_bytes)
        _open_world = self
        try:
            self._start(ready_timeout)
        except BaseException:
            self.close()
            raise

    # -- checks

    @staticmethod
    def _check_addr(a):
        addr = ipaddress.ip_address(a)
        if addr in UPLINK_NET:
            raise ValueError(f"{a} is in {UPLINK_NET}, which the machines running these tests number "
                             f"their own uplink in: the world never uses it (its ranges: "
                             f"{', '.join(map(str, NETS))})")
        net = next((n for n in NETS if addr in n), None)
        if net is None or addr in (net.network_address, net.broadcast_address) or str(addr) == HOST_ADDR:
            raise ValueError(f"{a} is not an address the world can own (only {', '.join(map(str, NETS))}, "
                             f"not {HOST_ADDR}, not a network or broadcast address)")
        return str(addr)

    def _check_names(self, names):
        def dns_name(name):
            key = str(name).lower().rstrip(".")
            if len(key) > 253 or not re.fullmatch(r"([a-z0-9_-]{1,63}\.)*[a-z0-9_-]{1,63}", key):
                raise ValueError(f"{name!r} is not a DNS name")
            return key

        given, zone = {}, {}
        for name, value in names.items():
            key = dns_name(name)
            if isinstance(value, (list, tuple)) or re.fullmatch(r"[0-9.]+", str(value)):
                values = value if isinstance(value, (list, tuple)) else [value]
                zone[key] = [self._check_addr(v) for v in values]
            else:
                zone[key] = dns_name(value)  # a CNAME's target
            given[key] = value
        return given, zone

    # -- setup

    def _start(self, ready_timeout):
        self._lock()
        self._remove_stale()
        conflicts = host_conflicts()
        if conflicts:
            raise RuntimeError("the network namespace the world would be built from already uses its "
                               f"ranges, {', '.join(map(str, NETS))} ({', '.join(conflicts)}): the "
                               "world would take over addresses this machine needs. Build it from a "
                               "namespace of its own (networld.OwnNetns).")
        self.dir = tempfile.mkdtemp(prefix=f"{self.ns}-")
        self.files = os.path.join(self.dir, "files")
        os.makedirs(self.files)
        self.dns_log_path = os.path.join(self.dir, "dns.log")
        self.http_log_path = os.path.join(self.dir, "http.log")
        self.server_log_path = os.path.join(self.dir, "server.log")
        self.resolv_conf = os.path.join(self.dir, "resolv.conf")
        with open(self.resolv_conf, "w") as f:
            f.write(f"nameserver {DNS_ADDR}\noptions timeout:2 attempts:2\n")
        self.hello = HELLO
        with open(os.path.join(self.files, "hello.txt"), "wb") as f:
            f.write(HELLO)
        self._make_big()
        self._make_tls()
        self._make_index()
        self._make_repo()
        self._make_network()
        self._start_server(ready_timeout)

    def _make_big(self):
        self.big_sha256 = None
        if self.big_bytes <= 0:
            return
        h, left = hashlib.sha256(), self.big_bytes
        with open(os.path.join(self.files, "big"), "wb") as f:
            while left:
                chunk = os.urandom(min(left, 1 << 20))
                h.update(chunk)
                f.write(chunk)
                left -= len(chunk)
        self.big_sha256 = h.hexdigest()

    def _make_tls(self):
        """A CA and a server certificate it signs, for every name and served address."""
        d = os.path.join(self.dir, "tls")
        os.makedirs(d)
        self.ca_file, self.cert_file, self.key_file = (os.path.join(d, n) for n in ("ca.pem", "server.pem", "server.key"))
        ca_key = os.path.join(d, "ca.key")
        with open(os.path.join(d, "ca.cnf"), "w") as f:
            f.write("[req]\ndistinguished_name = dn\nprompt = no\nx509_extensions = ext\n"
                    f"[dn]\nCN = sandpipe networld test CA {self.id}\n"
                    "[ext]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n"
                    "subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always\n")
        with open(os.path.join(d, "server.cnf"), "w") as f:
            f.write("[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = world.example\n")
        alt = [f"DNS.{i} = {n}" for i, n in enumerate(sorted(self._zone), 1)]
        alt += [f"IP.{i} = {a}" for i, a in enumerate(self.addrs, 1)]
        with open(os.path.join(d, "server.ext"), "w") as f:
            f.write("[ext]\nbasicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature\n"
                    "extendedKeyUsage = serverAuth\nsubjectKeyIdentifier = hash\n"
                    "authorityKeyIdentifier = keyid,issuer\nsubjectAltName = @alt\n[alt]\n" + "\n".join(alt) + "\n")
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        _run(["openssl", "req", "-x509", *ec, "-days", "2", "-config", os.path.join(d, "ca.cnf"),
              "-keyout", ca_key, "-out", self.ca_file])
        csr = os.path.join(d, "server.csr")
        _run(["openssl", "req", "-new", *ec, "-config", os.path.join(d, "server.cnf"),
              "-keyout", self.key_file, "-out", csr])
        _run(["openssl", "x509", "-req", "-in", csr, "-CA", self.ca_file, "-CAkey", ca_key,
              "-set_serial", "0x" + secrets.token_hex(8), "-days", "2", "-extfile",
              os.path.join(d, "server.ext"), "-extensions", "ext", "-out", self.cert_file])
        with open(self.ca_file) as f:
            self.ca_pem = f.read()

    def _make_index(self):
        """PEP 503: /simple/ lists the projects, /simple/sptest-pkg/ (its normalised name) links
        the wheel in /packages/ with its sha256."""
        self.projects = []
        os.makedirs(os.path.join(self.files, "packages"))
        self.wheel_name, self.wheel_sha256 = self.add_wheel(PACKAGE, PACKAGE_VERSION, PACKAGE_TEXT)
        self.index_url = f"http://{FILES_NAME}/simple/"

    def add_wheel(self, package, version, text):
        """Serves build_wheel(package, version, text) in the index (its project's page and
        /simple/'s list), at once; returns the wheel's file name and sha256."""
        wheel, name = build_wheel(package, version, text), wheel_name(package, version)
        sha256 = hashlib.sha256(wheel).hexdigest()
        with open(os.path.join(self.files, "packages", name), "wb") as f:
            f.write(wheel)
        project = package.replace("_", "-")
        page = "<!DOCTYPE html>\n<html><head><title>{t}</title></head><body>\n{links}\n</body></html>\n"
        os.makedirs(os.path.join(self.files, "simple", project), exist_ok=True)
        with open(os.path.join(self.files, "simple", project, "index.html"), "w") as f:
            f.write(page.format(t=f"Links for {project}", links=(
                f'<a href="/packages/{name}#sha256={sha256}">{name}</a>')))
        if project not in self.projects:
            self.projects.append(project)
        with open(os.path.join(self.files, "simple", "index.html"), "w") as f:
            f.write(page.format(t="Simple index", links="\n".join(
                f'<a href="/simple/{p}/">{p}</a>' for p in self.projects)))
        return name, sha256

    def add_deb(self, package, version, script):
        """A Debian repository at /debian/ (flat: `deb [trusted=yes] URL ./`) holding a package
        of architecture all that installs /usr/bin/<package>, a shell script of the text given;
        built here with dpkg-deb. Returns the sources.list line."""
        repo = os.path.join(self.files, "debian")
        build = tempfile.mkdtemp(prefix="deb-", dir=self.dir)
        os.makedirs(os.path.join(build, "DEBIAN"))
        os.makedirs(os.path.join(build, "usr", "bin"))
        with open(os.path.join(build, "usr", "bin", package), "w") as f:
            f.write("#!/bin/sh\n" + script)
        os.chmod(os.path.join(build, "usr", "bin", package), 0o755)
        control = (f"Package: {package}\nVersion: {version}\nArchitecture: all\n"
                   "Maintainer: sandpipe tests <tests@world.example>\n"
                   f"Description: {package}, served by the test's world\n")
        with open(os.path.join(build, "DEBIAN", "control"), "w") as f:
            f.write(control)
        os.makedirs(repo, exist_ok=True)
        name = f"{package}_{version}_all.deb"
        _run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", build, os.path.join(repo, name)])
        shutil.rmtree(build)
        with open(os.path.join(repo, name), "rb") as f:
            deb = f.read()
        stanza = (control + f"Filename: ./{name}\nSize: {len(deb)}\n"
                  f"SHA256: {hashlib.sha256(deb).hexdigest()}\n\n")
        with open(os.path.join(repo, "Packages"), "a") as f:
            f.write(stanza)
        return f"deb [trusted=yes] http://{FILES_NAME}/debian ./"

    def _make_repo(self):
        """A bare repository at /repo.git for git's dumb HTTP protocol: one commit of fixed
        content, author and dates (so the same id every time), then update-server-info."""
        env = dict(direct_env(HOME=self.dir), **GIT_ENV)
        work = os.path.join(self.dir, "repo-work")
        bare = os.path.join(self.files, "repo.git")
        _run(["git", "init", "-q", "-b", "main", work], env=env)
        for name, data in REPO_FILES.items():
            with open(os.path.join(work, name), "wb") as f:
                f.write(data)
        _run(["git", "-C", work, "add", "-A"], env=env)
        _run(["git", "-C", work, "commit", "-q", "-m", "networld test repository"], env=env)
        _run(["git", "clone", "-q", "--bare", "--no-local", work, bare], env=env)
        _run(["git", "-C", bare, "update-server-info"], env=env)
        self.git_head = _run(["git", "-C", bare, "rev-parse", "HEAD"], env=env).strip()
        self.repo_url = f"http://{FILES_NAME}/repo.git"
        shutil.rmtree(work)

    def _lock(self, timeout=120):
        fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    holder = os.pread(fd, 64, 0).decode(errors="replace").strip()
                    os.close(fd)
                    raise RuntimeError(f"another NetWorld (pid {holder or '?'}) held {LOCK_PATH} for {timeout}s")
                time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def _remove_stale(self):
        """Worlds whose process died without closing them (we hold the lock: no live one exists):
        their namespaces and host veths, which would hold the routes."""
        for name in (os.listdir("/run/netns") if os.path.isdir("/run/netns") else []):
            if name.startswith(NS_PREFIX):
                ip("netns", "del", name, check=False)
        for link in ip_json("link", "show", "type", "veth"):
            if HOST_IF_RE.match(link.get("ifname", "")):
                ip("link", "del", link["ifname"], check=False)

    def _make_network(self):
        ip("netns", "add", self.ns)
        self._ns_made = True
        ip("link", "add", self.host_if, "type", "veth", "peer", "name", self.world_if, "netns", self.ns)
        self._link_made = True
        w = ("-n", self.ns)
        ip(*w, "link", "set", "lo", "up")
        ip(*w, "addr", "add", f"{WORLD_ADDR}/24", "dev", self.world_if)
        for a in sorted(set(self.addrs) | {DNS_ADDR}, key=ipaddress.ip_address):
            if a != WORLD_ADDR:
                ip(*w, "addr", "add", f"{a}/32", "dev", "lo")
        ip(*w, "link", "set", self.world_if, "up")
        ip(*w, "route", "add", "default", "via", HOST_ADDR)  # replies to any host-side source
        ip("addr", "add", f"{HOST_ADDR}/24", "dev", self.host_if)
        ip("link", "set", self.host_if, "up")
        for net in ROUTED_NETS:
            ip("route", "add", str(net), "via", WORLD_ADDR, "dev", self.host_if)

    def _start_server(self, ready_timeout):
        cfg = {"dns_addr": DNS_ADDR, "addrs": self.addrs, "root": self.files, "cert": self.cert_file,
               "key": self.key_file, "dns_log": self.dns_log_path, "http_log": self.http_log_path,
               "names": self._zone}
        cfg_path = os.path.join(self.dir, "serve.json")
        with open(cfg_path, "w") as f:
            json.dump(cfg, f)
        for p in (self.dns_log_path, self.http_log_path):
            open(p, "w").close()
        with open(self.server_log_path, "ab") as log:
            self.proc = subprocess.Popen(["ip", "netns", "exec", self.ns, sys.executable, SERVE, cfg_path],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                         cwd=self.dir)
        self.pids = [self.proc.pid]  # `ip netns exec` execs the command: this is python's pid
        deadline = time.monotonic() + ready_timeout
        line = b""
        while time.monotonic() < deadline and not line.endswith(b"\n"):
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(self.proc.stdout.fileno(), 64)
            if not chunk:
                break
            line += chunk
        if line.strip() != b"ready":
            raise RuntimeError(f"the world's servers did not start within {ready_timeout}s (exit "
                               f"{self.proc.poll()}, said {line!r}): {self.server_log()[-3000:]}")

    # -- what a test reads

    def server_log(self):
        """The servers' stderr (errors, tracebacks)."""
        try:
            with open(self.server_log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    @staticmethod
    def _read_jsonl(path):
        with open(path) as f:
            return [json.loads(line) for line in f if line.endswith("\n")]

    def dns_log(self):
        """Every DNS message received, in order: {proto: udp|tcp, client, name (as asked, case
        kept; None for a malformed one), type ("A", "AAAA", ... or the number)}."""
        return self._read_jsonl(self.dns_log_path)

    def dns_queries(self, qtype=None):
        """The names asked (lower case, no trailing dot), in order; only those of qtype if given."""
        return [e["name"].lower().rstrip(".") for e in self.dns_log()
                if e["name"] is not None and (qtype is None or e["type"] == qtype)]

    def http_requests(self):
        """Every HTTP and HTTPS request answered, in order: {scheme, local (the world address
        it arrived at), client, method, path, host (the Host header, or None), status}."""
        return self._read_jsonl(self.http_log_path)

    def clear_logs(self):
        """Empties the DNS and HTTP logs (the servers append to them: they go on logging)."""
        for p in (self.dns_log_path, self.http_log_path):
            open(p, "w").close()

    def resolved(self, argv):
        """argv wrapped to run in the current network namespace with the world's DNS server as
        its resolver (its own mount namespace, the world's resolv.conf bound on /etc/resolv.conf):
        for a host-side command that must resolve the world's names."""
        return ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /etc/resolv.conf && exec "$@"',
                self.resolv_conf, *argv]

    # -- teardown

    def close(self):
        """Stops the servers (by pid), deletes the routes, the veth pair and the namespace, and
        the files. Safe to call twice, and after a failed __init__ (which calls it)."""
        global _open_world
        if self.proc is not None:
            terminate(self.proc, grace=5)
            for f in (self.proc.stdin, self.proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass
            self.proc = None
        if self._link_made:
            for net in ROUTED_NETS:
                ip("route", "del", str(net), "via", WORLD_ADDR, "dev", self.host_if, check=False)
            ip("link", "del", self.host_if, check=False)  # both ends, and the host's routes
            self._link_made = False
        if self._ns_made:
            ip("netns", "del", self.ns, check=False)
            self._ns_made = False
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        if _open_world is self:
            _open_world = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def world_and_api_stack(prepare, extra=(), pool=1):
    """A NetWorld (prepare(world) adds what the test serves) and an ApiStack whose sessions
    reach it by default (egress through netd, the world's resolver); the world is closed if the
    stack fails to start. Returns (world, stack): close_world_and_stack ends both."""
    from apistack import ApiStack
    world = NetWorld()
    try:
        prepare(world)
        return world, ApiStack(pool=pool, netd={"resolver": world.dns_addr},
                               extra=[*extra, "--network-default", "egress"])
    except BaseException:
        world.close()
        raise


def close_world_and_stack(world, stack):
    try:
        stack.stop()
    finally:
        world.close()
