"""The provider parameter of the integration tests: what differs between a bwrap sandbox of a
runtime image and a Docker container of the same image, behind one small interface, so one
test body (test_scenarios.py) runs under both. Also the runtime image the tests need, in the
forms each provider runs (images/sandpipe-image; a failed build fails the tests, never a skip)."""
import json
import os
import signal
import subprocess

from spexec import ROOT
from stack import BUILD, proc_tree

IMAGE_TOOL = os.path.join(ROOT, "images", "sandpipe-image")
DOCKER_IMAGE = "sandpipe/runtime:default"


def image_tool(*args, executor=None, check=True):
    env = dict(os.environ, SANDPIPE_EXECUTOR=executor or os.path.join(BUILD, "sandpipe-executor"))
    r = subprocess.run([IMAGE_TOOL, *args], capture_output=True, text=True, env=env, timeout=1800)
    if check and r.returncode != 0:
        raise RuntimeError(f"sandpipe-image {' '.join(args)} failed ({r.returncode}): {r.stderr[-3000:]}")
    return r


def ensure_default_image():
    """The default image's rootfs (built unless the store has it)."""
    if image_tool("resolve", "default", check=False).returncode != 0:
        image_tool("build")
    return image_tool("resolve", "default").stdout.strip()


def this_build_vscode_image():
    """This tree's image with code-server (sandpipe-image build --vscode), rootfs form: built on
    this tree's base (the store's base/<lock>: a copy of it, then images/setup.sh's code-server
    step, a few minutes, with the npm registry), a no-op when it exists: its source tag."""
    rootfs = image_tool("resolve", this_build_image()).stdout.strip()
    with open(os.path.join(rootfs, ".sandpipe-image")) as f:
        lock = dict(line.split("=", 1) for line in f.read().splitlines())["lock"]
    base = os.path.join(os.path.dirname(os.path.dirname(rootfs)), "base", lock)
    return image_tool("build", "--no-docker", "--base", base, "--vscode").stdout.strip()


def docker(*args, check=True, timeout=120):
    r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args)}: {r.stderr}")
    return r.stdout.strip()


def ensure_docker_image():
    """The default image in both forms, with this build's executor and images/setup.sh (a no-op
    when it exists); returns its source tag (sandpipe/runtime:<tag>)."""
    r = subprocess.run(["docker", "version"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise RuntimeError("no Docker daemon answers (is dockerd running?): " + r.stderr[-500:])
    return image_tool("build", "--docker").stdout.strip()


def this_build_image():
    """The image of this tree's images/setup.sh and executor, rootfs form (built when missing,
    a no-op when it exists): its source tag. Tests that need what this tree puts in the image
    name it by that tag, not "default", which names whatever image the store built last (the
    store is shared with other checkouts)."""
    return image_tool("build", "--no-docker").stdout.strip()


def sandbox_record(st, sid):
    return json.loads(st.redis("HGET", f"sp:session:{{{sid}}}", "sandbox"))


def container_of(st, sid):
    sb = sandbox_record(st, sid)
    return "sandpipe-" + sb["id"], sb


class Bwrap:
    """A bwrap sandbox whose root is the default image's rootfs."""
    name = "bwrap"
    inside_uid = "1000"  # the user namespace maps the sandbox's block: its first + 1000 is 1000
    root_inside = True  # sudo is root, the image's root writable on the sandbox's disk

    @staticmethod
    def prepare():
        return this_build_image()

    @staticmethod
    def kill_from_outside(st, sid):
        """SIGKILL to every process of the sandbox, from the host (the top one first: the
        pid namespace's init; its death takes the rest)."""
        sb = sandbox_record(st, sid)
        for pid in proc_tree(sb["pid"]):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


class Docker:
    """A Docker container of the default image's Docker form."""
    name = "docker"
    inside_uid = None  # the sandbox's own host uid (checked in test_docker)
    root_inside = False  # one uid: sudo runs as the user, the root is read-only

    @staticmethod
    def prepare():
        return ensure_docker_image()

    @staticmethod
    def kill_from_outside(st, sid):
        docker("kill", container_of(st, sid)[0])


PROVIDERS = {"bwrap": Bwrap, "docker": Docker}
