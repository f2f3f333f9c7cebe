"""Who may name what in the image store through the Runtime API's /build (issue 29). Names are
shared: a session of any user runs the image its name points at, and "default" is the image of
every session that names none. So a viewer names nothing; a user names what does not exist yet
and what that same user named before (OpenHands' V0 builder tags only names that do not exist),
never "default", the builder's own tags, an admin's or the operator's names, nor another user's;
an admin names anything, and the name is then the operator's. Real sandpipe-api workers, nginx,
images/sandpipe-image, on an image store of the test's own (--images) holding two small images,
so that a name moved shows and no other test's image moves; Docker for the build from a Docker
image (no Docker daemon answering is a failure, as in test_docker)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

from apistack import ApiStack
from providers import docker
from stack import terminate
from test_oh_remote_runtime import API, build_request


def make_store():
    """A store with images img-a ("default") and img-b ("other", the operator's)."""
    store = tempfile.mkdtemp(prefix="sp-images-")
    for tag in ("img-a", "img-b"):
        os.makedirs(os.path.join(store, "rootfs", tag))
        with open(os.path.join(store, "rootfs", tag, ".sandpipe-image"), "w") as f:
            f.write(f"tag={tag}\ncreated=2024-01-01T00:00:00Z\nsize=4096\n")
    os.makedirs(os.path.join(store, "names"))
    for name, tag in (("default", "img-a"), ("other", "img-b")):
        os.symlink(f"../rootfs/{tag}", os.path.join(store, "names", name))
    return store


class BuildOwners(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.store = make_store()
        # sandpipe-api's builder works on its --images whatever its environment says: here an
        # empty decoy (never the host's store, whatever the API under test does)
        cls.decoy = tempfile.mkdtemp(prefix="sp-images-decoy-")
        env_before = os.environ.get("SANDPIPE_IMAGE_DIR")
        os.environ["SANDPIPE_IMAGE_DIR"] = cls.decoy
        try:
            cls.s = ApiStack(pool=0, workers=2, api_extra=["--images", cls.store])
        finally:
            if env_before is None:
                del os.environ["SANDPIPE_IMAGE_DIR"]
            else:
                os.environ["SANDPIPE_IMAGE_DIR"] = env_before

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()
        shutil.rmtree(cls.store, ignore_errors=True)
        shutil.rmtree(cls.decoy, ignore_errors=True)

    def key(self, sub, role="user"):
        return self.s.token(sub=sub, role=role, session="s-x" if role == "viewer" else None)

    def points_at(self, name):
        """The image (rootfs/<tag>) name points at, None when it does not exist."""
        link = os.path.join(self.store, "names", name.replace("/", "+"))
        return os.path.basename(os.readlink(link)) if os.path.islink(link) else None

    def owner(self, name):
        try:
            with open(os.path.join(self.store, "owners", name.replace("/", "+"))) as f:
                return f.read()
        except FileNotFoundError:
            return None

    def build(self, key, base, target, tags=()):
        return build_request(self.s, key, f"FROM {base}\nRUN true\n", target, list(tags))

    def built(self, key, base, target, tags=()):
        st, b = self.build(key, base, target, tags)
        self.assertEqual(st, 202, b)
        st, b, _ = self.s.request("GET", f"{API}/build_status?build_id={b['build_id']}", headers={"X-API-Key": key})
        self.assertEqual((st, b["status"]), (200, "SUCCESS"), b)

    def refused(self, key, base, target, tags=(), says="not yours"):
        st, b = self.build(key, base, target, tags)
        self.assertEqual(st, 403, b)
        self.assertEqual(b["error"]["code"], "forbidden", b)
        self.assertIn(says, b["detail"])
        return b

    def fresh(self, who):
        return f"sandpipe/runtime:{who}-{uuid.uuid4().hex[:8]}"

    def test_every_name_is_set_on_the_apis_store(self):
        """target_image and all eight tags (the builder was given at most four names), in the
        store of --images, not the one its environment names."""
        names = [self.fresh("alice") for _ in range(9)]
        self.built(self.key("alice"), "default", names[0], names[1:])
        self.assertEqual([self.points_at(n) for n in names], ["img-a"] * 9)
        self.assertEqual([self.owner(n) for n in names], ["alice"] * 9)
        self.assertEqual(os.listdir(self.decoy), [])

    def test_a_viewer_names_nothing(self):
        name = self.fresh("viewer")
        self.refused(self.key("vera", "viewer"), "default", name, says="viewer tokens")
        self.assertIsNone(self.points_at(name))

    def test_a_user_never_moves_default_nor_the_operators_names(self):
        alice = self.key("alice")
        for target, tags, says in (("default", (), "the operator's"),
                                   (self.fresh("alice"), ["sandpipe/runtime:default"], "the operator's"),
                                   (self.fresh("alice"), ["sandpipe/runtime:sp_v0.1_debian-bookworm"],
                                    "the operator's"),
                                   ("other", (), "not yours")):
            b = self.refused(alice, "other" if target == "default" else "default", target, tags, says)
            self.assertIn("only an admin token", b["detail"])
            if target.startswith("sandpipe/runtime:alice-"):
                self.assertIsNone(self.points_at(target))  # nothing named when one name is refused
        self.assertEqual(self.points_at("default"), "img-a")
        self.assertEqual(self.points_at("other"), "img-b")
        self.assertIsNone(self.owner("default"))

    def test_a_users_own_names_are_hers_alone(self):
        alice, bob = self.key("alice"), self.key("bob")
        mine, also = self.fresh("alice"), self.fresh("alice")
        self.built(alice, "default", mine, [also])
        self.assertEqual((self.points_at(mine), self.points_at(also)), ("img-a", "img-a"))
        self.assertEqual((self.owner(mine), self.owner(also)), ("alice", "alice"))
        self.built(alice, "other", mine)  # her own name, to another image
        self.assertEqual(self.points_at(mine), "img-b")
        self.built(alice, f"sandpipe/runtime:{mine.split(':', 1)[1]}", also)  # FROM her own image
        self.assertEqual(self.points_at(also), "img-b")
        # Bob may run them, not move them; a refused build names nothing, not even its free names
        st, b, _ = self.s.request("GET", f"{API}/image_exists?image={mine}", headers={"X-API-Key": bob})
        self.assertIs(b["exists"], True, b)
        free = self.fresh("bob")
        self.refused(bob, "default", free, [mine], says="belongs to another user")
        self.refused(bob, "default", mine, says="belongs to another user")
        self.assertEqual((self.points_at(mine), self.owner(mine)), ("img-b", "alice"))
        self.assertIsNone(self.points_at(free))

    def test_a_claim_without_a_name_and_no_build_lapses(self):
        """A record of a name that does not exist (a build that failed) reserves nothing once
        no build runs."""
        ghost = self.fresh("ghost")
        self.claim(ghost, "bob")
        self.built(self.key("alice"), "default", ghost)
        self.assertEqual((self.points_at(ghost), self.owner(ghost)), ("img-a", "alice"))

    def claim(self, name, sub):
        """A record as a build of sub's in flight leaves it (the name not made yet)."""
        os.makedirs(os.path.join(self.store, "owners"), exist_ok=True)
        with open(os.path.join(self.store, "owners", name.replace("/", "+")), "w") as f:
            f.write(sub)

    def test_a_claim_holds_while_a_build_runs(self):
        """While a build runs, the names it will make are its user's: another user is refused,
        the same user may name them. "A build runs" is what /build_status reads: a process whose
        command line holds the build's state prefix, with its pid in builds/<id>.pid; here a
        stand-in process, not a build of minutes."""
        name = self.fresh("alice")
        self.claim(name, "alice")
        build_id = "b-" + name.encode().hex()
        builds = os.path.join(self.store, "builds")
        os.makedirs(builds, exist_ok=True)
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)",
                                 os.path.join(builds, build_id)])
        try:
            with open(os.path.join(builds, build_id + ".pid"), "w") as f:
                f.write(f"{proc.pid}\n")
            st, b, _ = self.s.request("GET", f"{API}/build_status?build_id={build_id}",
                                      headers={"X-API-Key": self.key("alice")})
            self.assertEqual(b["status"], "BUILDING", b)
            self.refused(self.key("bob"), "default", name, says="belongs to another user")
            self.assertIsNone(self.points_at(name))
            st, b = self.build(self.key("alice"), "default", name)  # (its status: the build's)
            self.assertEqual(st, 202, b)
            self.assertEqual((self.points_at(name), self.owner(name)), ("img-a", "alice"))
        finally:
            terminate(proc)
            os.unlink(os.path.join(builds, build_id + ".pid"))

    def test_a_build_from_a_docker_image_claims_its_names_for_its_user(self):
        """The names are recorded as the user's when the build starts; a build that failed
        leaves them to whoever comes next. The base: a local Docker image without /bin/sh,
        which the builder refuses once it has exported it."""
        tag = uuid.uuid4().hex[:8]
        bare = f"sp-test-bare:{tag}"
        ctx = tempfile.mkdtemp(prefix="sp-bare-")
        try:
            with open(os.path.join(ctx, "Dockerfile"), "w") as f:
                f.write("FROM scratch\nCOPY Dockerfile /nothing\n")
            docker("build", "-q", "-t", bare, ctx, timeout=300)
            alice, name = self.key("alice"), self.fresh("alice")
            st, b = self.build(alice, bare, name)
            self.assertEqual(st, 202, b)
            self.assertEqual(self.owner(name), "alice")
            build_id, deadline = b["build_id"], time.monotonic() + 120
            while True:
                st, b, _ = self.s.request("GET", f"{API}/build_status?build_id={build_id}",
                                          headers={"X-API-Key": alice})
                if b["status"] != "BUILDING" or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            self.assertEqual(b["status"], "FAILURE", b)
            self.assertIsNone(self.points_at(name))
            self.built(self.key("bob"), "default", name)
            self.assertEqual(self.owner(name), "bob")
        finally:
            shutil.rmtree(ctx)
            docker("rmi", bare, check=False)

    def test_an_admin_names_anything_and_the_name_is_then_the_operators(self):
        admin, alice = self.key("root", "admin"), self.key("alice")
        mine = self.fresh("alice")
        self.built(alice, "default", mine)
        self.built(admin, "other", mine)
        self.assertEqual((self.points_at(mine), self.owner(mine)), ("img-b", None))
        self.refused(alice, "default", mine)  # no longer hers
        try:
            self.built(admin, "other", "default")
            self.assertEqual(self.points_at("default"), "img-b")
        finally:
            os.unlink(os.path.join(self.store, "names", "default"))
            os.symlink("../rootfs/img-a", os.path.join(self.store, "names", "default"))


if __name__ == "__main__":
    unittest.main()
