"""Docker nodes on this machine, each a dockerd of its own in namespaces made here (issue 34's
three-node swarm, tests/soak/swarm3.py): per node a network namespace with a veth into a bridge
of the test's own on TEST-NET-2 (198.51.100.0/24; no default route, so nothing leaves the
machine) in a network namespace of its own too (never the host's, where make test's network
worlds use the same range), a mount namespace (a tmpfs over /run: the node's docker.sock, exec-root and containerd,
which dockerd starts itself since no /run/containerd/containerd.sock is there; its own
/var/lib/sandpipe, the host's image store bound read-only into it), a UTS namespace (the node's
hostname: Swarm's {{.Node.Hostname}}, so each gateway has an id of its own), an /etc/resolv.conf
naming the bridge's address, where Nodes.enter() answers every DNS question NXDOMAIN at once, as
a real upstream answers a name it does not know (Docker's embedded DNS forwards a name the swarm
does not know, a lost node's task's, upstream: the host's nameserver, unreachable from a node, made
each such lookup wait 20 s, and a sentinel's resolve-hostnames blocked into TILT and never failed
over), a data root of its
own and a freezer cgroup holding dockerd, containerd, the shims and the containers (their
--cgroup-parent): freezing it stops the whole node at once, as a machine that hangs.

Node i is at 198.51.100.i; Nodes.enter() moves the calling thread (and the processes it starts
then) into the bridge's namespace, at .254, to reach them; its Docker is at the unix socket
Node.sock (bound in the node's directory, outside the tmpfs), reachable from anywhere.
Everything is removed by Nodes.remove(): the dockerds and what is left in their cgroups (by pid),
the namespaces (the bridge's takes the bridge and the veths with it), the directories."""
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid

NET = "198.51.100"  # TEST-NET-2 (RFC 5737): never routed
HOST_ADDR = f"{NET}.254"
FREEZER = "/sys/fs/cgroup/freezer"
CLONE_NEWNET = 0x40000000


def sh(*cmd, check=True, timeout=120):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stdout[-1000:]}{r.stderr[-2000:]}")
    return r.stdout


# Run inside the node's network namespace (ip netns exec also makes a mount namespace and
# mounts that netns's /sys, without the host's cgroup hierarchies: mounted again here, as on the
# host, for runc) and then unshare -m -u: the node's own /run, /var/lib/sandpipe and hostname.
# The node's processes are in the freezer cgroup already (joined before ip netns exec).
NODE_SCRIPT = r"""
set -eu
dir=$1 host=$2 cg=$3 images=$4 cgroups=$5 hostaddr=$6
mount --make-rprivate /
mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
echo "$cgroups" | while read -r type opts target; do
    mkdir -p "$target"
    mount -t "$type" -o "$opts" "$type" "$target"
done
hostname "$host"
mkdir -p "$dir/sandpipe/images" "$dir/docker"
[ -z "$images" ] || mount --rbind -o ro "$images" "$dir/sandpipe/images"
mkdir -p /var/lib/sandpipe
mount --rbind "$dir/sandpipe" /var/lib/sandpipe
echo "nameserver $hostaddr" >"$dir/resolv.conf"
mount --bind "$dir/resolv.conf" /etc/resolv.conf
mount -t tmpfs -o mode=755 tmpfs /run
ip link set lo up
exec dockerd --data-root "$dir/docker" --exec-root /run/docker --pidfile /run/docker.pid \
    -H unix:///run/docker.sock -H "unix://$dir/docker.sock" --cgroup-parent "/$(basename "$cg")" \
    --iptables=true --ip-forward=true >"$dir/dockerd.log" 2>&1
"""


def host_cgroups():
    """The host's cgroup hierarchies, one "type options target" a line."""
    with open("/proc/self/mounts") as f:
        return "\n".join(f"{t} {o} {m}" for _, m, t, o, *_ in (line.split() for line in f)
                         if t in ("cgroup", "cgroup2") and m.startswith("/sys/fs/cgroup/"))


def answer_nxdomain(sock):
    """The nodes' upstream DNS: NXDOMAIN to every question (the question echoed, no record)."""
    while True:
        q, peer = sock.recvfrom(4096)
        if len(q) < 12:
            continue
        end = 12
        while end < len(q) and q[end]:
            end += 1 + q[end]
        question = q[12:end + 5]
        flags = bytes([0x80 | (q[2] & 0x79), 0x80 | 3])  # a response, RD kept, RA, NXDOMAIN
        sock.sendto(q[:2] + flags + b"\x00\x01" + b"\x00" * 6 + question, peer)


class Node:
    def __init__(self, nodes, index):
        self.index = index
        self.hostname = f"{nodes.tag}-n{index}"
        self.netns = f"{nodes.tag}-n{index}"
        self.veth = f"{nodes.tag}h{index}"
        self.addr = f"{NET}.{index}"
        self.dir = os.path.join(nodes.dir, f"n{index}")
        self.sock = os.path.join(self.dir, "docker.sock")
        self.host = f"unix://{self.sock}"
        self.cgroup = os.path.join(FREEZER, f"{nodes.tag}-n{index}")
        self.proc = None

    def docker(self, *args, check=True, timeout=120, input=None):
        r = subprocess.run(["docker", "-H", self.host, *args], capture_output=True, text=True,
                           timeout=timeout, input=input)
        if check and r.returncode != 0:
            raise RuntimeError(f"node {self.index}: docker {' '.join(args)}: {r.stderr[-2000:]}")
        return r.stdout.strip()

    def pids(self):
        """Every process of the node (dockerd, containerd, shims, containers)."""
        try:
            with open(os.path.join(self.cgroup, "cgroup.procs")) as f:
                own = [int(p) for p in f.read().split()]
        except FileNotFoundError:
            return []
        kids = []
        for root, dirs, _ in os.walk(self.cgroup):
            for d in dirs:
                try:
                    with open(os.path.join(root, d, "cgroup.procs")) as f:
                        kids += [int(p) for p in f.read().split()]
                except FileNotFoundError:
                    pass
        return own + kids

    def freeze(self, frozen=True):
        """FROZEN stops every process of the node at once (as a machine that hangs); THAWED
        lets them go on where they were."""
        state = "FROZEN" if frozen else "THAWED"
        with open(os.path.join(self.cgroup, "freezer.state"), "w") as f:
            f.write(state)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(os.path.join(self.cgroup, "freezer.state")) as f:
                if f.read().strip() == state:
                    return
            time.sleep(0.05)
        raise RuntimeError(f"node {self.index}: freezer not {state}")

    def log(self, tail=4000):
        try:
            with open(os.path.join(self.dir, "dockerd.log"), errors="replace") as f:
                return f.read()[-tail:]
        except FileNotFoundError:
            return ""


class Nodes:
    """count nodes, 198.51.100.1..count, and .254 on a bridge of their own in a namespace of its
    own (enter() to be there)."""

    def __init__(self, count, images="/var/lib/sandpipe/images"):
        self.tag = "sp" + uuid.uuid4().hex[:6]
        self.bridge = f"{self.tag}br"
        self.netns = f"{self.tag}-br"  # the bridge's (a fresh namespace: its FORWARD accepts)
        self.dir = f"/var/lib/{self.tag}-swarm"
        self.images = images if os.path.isdir(images) else ""
        self.nodes = [Node(self, i + 1) for i in range(count)]
        self.made_netns = False

    def start(self, timeout=120):
        os.makedirs(self.dir, mode=0o700)
        sh("ip", "netns", "add", self.netns)
        self.made_netns = True
        br = ("ip", "-n", self.netns)
        sh(*br, "link", "set", "lo", "up")
        sh(*br, "link", "add", self.bridge, "type", "bridge")
        sh(*br, "addr", "add", f"{HOST_ADDR}/24", "dev", self.bridge)
        sh(*br, "link", "set", self.bridge, "up")
        for n in self.nodes:
            os.makedirs(n.dir)
            os.makedirs(n.cgroup)
            sh("ip", "netns", "add", n.netns)
            sh("ip", "-n", self.netns, "link", "add", n.veth, "type", "veth", "peer", "name", "eth0",
               "netns", n.netns)
            sh(*br, "link", "set", n.veth, "master", self.bridge, "up")
            sh("ip", "-n", n.netns, "addr", "add", f"{n.addr}/24", "dev", "eth0")
            sh("ip", "-n", n.netns, "link", "set", "eth0", "up")
            n.proc = subprocess.Popen(["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec "$@"', n.cgroup,
                                       "ip", "netns", "exec", n.netns, "unshare", "-m", "-u", "sh", "-c",
                                       NODE_SCRIPT, "node", n.dir, n.hostname, n.cgroup, self.images,
                                       host_cgroups(), HOST_ADDR], stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        for n in self.nodes:
            while True:
                if n.proc.poll() is not None:
                    raise RuntimeError(f"node {n.index}: dockerd ended ({n.proc.returncode}): {n.log()}")
                if os.path.exists(n.sock) and n.docker("version", "-f", "{{.Server.Version}}", check=False):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"node {n.index}: dockerd not answering: {n.log()}")
                time.sleep(0.5)
        return self

    def enter(self):
        """The calling thread into the bridge's namespace (setns), where the nodes' addresses
        answer; processes it starts afterwards are there too. For the rest of the process's
        life: the namespace is never entered by anything else, and removed by remove()."""
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(f"/run/netns/{self.netns}", os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns {self.netns}")
        finally:
            os.close(fd)
        dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # made in the namespace just entered
        dns.bind((HOST_ADDR, 53))
        threading.Thread(target=answer_nxdomain, args=(dns,), daemon=True).start()

    def remove(self):
        for n in self.nodes:
            if os.path.isdir(n.cgroup):
                try:
                    n.freeze(False)
                except (OSError, RuntimeError):
                    pass
            if n.proc and n.proc.poll() is None:
                n.proc.send_signal(signal.SIGTERM)  # dockerd stops its containers and containerd
                try:
                    n.proc.wait(60)
                except subprocess.TimeoutExpired:
                    pass
            deadline = time.monotonic() + 30
            while n.pids() and time.monotonic() < deadline:
                for pid in n.pids():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.2)
            if n.proc and n.proc.poll() is None:
                n.proc.kill()
                n.proc.wait(10)
            # the containers' cgroups under the node's, deepest first
            for hier in os.listdir("/sys/fs/cgroup"):
                top = os.path.join("/sys/fs/cgroup", hier, os.path.basename(n.cgroup))
                for root, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
                    try:
                        os.rmdir(root)
                    except OSError:
                        pass
            sh("ip", "netns", "del", n.netns, check=False)
        if self.made_netns:  # the bridge and the veths' ends go with it
            sh("ip", "netns", "del", self.netns, check=False)
        # the nodes' mounts died with their mount namespaces: only files are left
        shutil.rmtree(self.dir, ignore_errors=True)
