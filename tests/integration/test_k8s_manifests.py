"""deploy/kubernetes/, linted (no cluster runs it here): every object against the Kubernetes
OpenAPI schemas, fields the schema does not know included (npm kubernetes-models, tests/k8s/,
`make k8s-schemas`), and the references between the objects and to the rest of the tree: Service
selectors and named ports, Secrets, ConfigMaps and the files the programs are given, the options
against the real programs' --help, the Sentinel address against the StatefulSet, the image
against what images/ builds, and the Redis users the replicas and sentinels log in as against a
real redis-server."""
import json
import os
import re
import shlex
import subprocess
import tempfile
import time
import unittest

import yaml

from spexec import ROOT
from stack import BUILD

K8S = os.path.join(ROOT, "deploy", "kubernetes")
SCHEMAS = os.path.join(ROOT, "tests", "k8s")
WORKLOADS = ("Deployment", "DaemonSet", "StatefulSet")
# The programs whose options the manifests give, and their source's --help.
PROGRAMS = ("sandpipe-gateway", "sandpipe-api", "sandpipe-netd")


class UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping (PyYAML keeps the last)."""


def _no_duplicates(loader, node, deep=False):
    keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise yaml.constructor.ConstructorError(None, None, f"duplicate keys {sorted(dup)}", node.start_mark)
    return loader.construct_mapping(node, deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def load(path):
    with open(path) as f:
        return [d for d in yaml.load_all(f, Loader=UniqueKeyLoader) if d]


def kustomization():
    return load(os.path.join(K8S, "kustomization.yaml"))[0]


def generated(k):
    """The Secrets and ConfigMaps kustomize generates, with their keys (secrets: empty values,
    their files are the operator's)."""
    out = []
    for kind, field in (("Secret", "secretGenerator"), ("ConfigMap", "configMapGenerator")):
        for g in k.get(field, []):
            data = {}
            for f in g["files"]:
                key, _, path = f.partition("=") if "=" in f else (os.path.basename(f), "", f)
                if kind == "ConfigMap":
                    with open(os.path.join(K8S, path)) as fh:
                        data[key] = fh.read()
                else:
                    data[key] = ""
            out.append({"apiVersion": "v1", "kind": kind, "metadata": {"name": g["name"], "namespace": k["namespace"]},
                        "data": data})
    return out


def every_object():
    k = kustomization()
    objs = [o for r in k["resources"] for o in load(os.path.join(K8S, r))]
    objs += load(os.path.join(K8S, "network-policy.yaml"))
    return objs + generated(k)


def pod_specs(objs):
    for o in objs:
        if o["kind"] in WORKLOADS:
            yield o, o["spec"]["template"]


def containers(spec):
    return spec.get("initContainers", []) + spec["containers"]


def command_of(c):
    """A container's program and options as one argv (sh -c's script split as the shell would)."""
    argv = c.get("command", []) + c.get("args", [])
    if argv[:2] == ["sh", "-c"]:
        return shlex.split(argv[2].replace("&&", " && "))
    return argv


def options(argv):
    """{--name: value} of an argv in --name=value or --name value form."""
    out = {}
    for i, a in enumerate(argv):
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            out.setdefault(name, []).append(value if eq else (argv[i + 1] if i + 1 < len(argv) else ""))
    return out


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


class ManifestsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.objs = every_object()
        cls.by_kind = {}
        for o in cls.objs:
            cls.by_kind.setdefault(o["kind"], {})[o["metadata"]["name"]] = o

    def test_every_object_is_valid_against_the_kubernetes_schemas(self):
        if not os.path.isdir(os.path.join(SCHEMAS, "node_modules", "kubernetes-models")):
            raise AssertionError("the schemas are not installed (tests/k8s/node_modules): run make k8s-schemas")
        r = subprocess.run(["node", os.path.join(SCHEMAS, "validate.mjs")], input=json.dumps(self.objs),
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count("\nok ") + r.stdout.startswith("ok "), len(self.objs), r.stdout)

    def test_the_validator_refuses_what_the_api_server_would(self):
        bad = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}, "spec": {"selektor": {}}},
               {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "b"},
                "spec": {"selector": {}, "template": {"spec": {"containers": [
                    {"name": "c", "ports": [{"containerPort": "80"}]}]}}}},
               {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "c"}}]
        r = subprocess.run(["node", os.path.join(SCHEMAS, "validate.mjs")], input=json.dumps(bad),
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("invalid Service a: fields the schema does not know: /spec/selektor", r.stdout)
        self.assertIn("containerPort must be integer", r.stdout)
        self.assertIn("invalid Widget c: no model", r.stdout)

    def test_every_yaml_file_is_applied_or_named_in_the_kustomization(self):
        k = kustomization()
        files = {f for f in os.listdir(K8S) if f.endswith(".yaml")} - {"kustomization.yaml"}
        self.assertEqual(files, set(k["resources"]) | {"network-policy.yaml"})
        ns = self.by_kind["Namespace"]
        self.assertEqual(list(ns), [k["namespace"]])

    def test_selectors_match_their_pods_and_services_reach_named_ports(self):
        for o, tpl in pod_specs(self.objs):
            self.assertTrue(matches(o["spec"]["selector"]["matchLabels"], tpl["metadata"]["labels"]), o["metadata"])
        for name, svc in self.by_kind["Service"].items():
            pods = [t for _, t in pod_specs(self.objs) if matches(svc["spec"]["selector"], t["metadata"]["labels"])]
            self.assertEqual(len(pods), 1, f"Service {name} selects {len(pods)} workloads")
            named = {p["name"] for c in pods[0]["spec"]["containers"] for p in c.get("ports", [])}
            for p in svc["spec"]["ports"]:
                self.assertIn(p["targetPort"], named, f"Service {name}")
        for name, np in self.by_kind["NetworkPolicy"].items():
            sel = np["spec"]["podSelector"]["matchLabels"]
            pods = [t for _, t in pod_specs(self.objs) if matches(sel, t["metadata"]["labels"])]
            self.assertTrue(pods, f"NetworkPolicy {name} selects no pod")
            named = {p["name"] for t in pods for c in t["spec"]["containers"] for p in c.get("ports", [])}
            for rule in np["spec"]["ingress"]:
                for peer in rule["from"]:
                    if "podSelector" in peer:
                        self.assertTrue(any(matches(peer["podSelector"]["matchLabels"], t["metadata"]["labels"])
                                            for _, t in pod_specs(self.objs)), f"NetworkPolicy {name}: {peer}")
                for p in rule["ports"]:
                    self.assertIn(p["port"], named, f"NetworkPolicy {name}")
        for o, tpl in pod_specs(self.objs):
            for c in containers(tpl["spec"]):
                named = {p["name"] for p in c.get("ports", [])}
                probe = c.get("readinessProbe", {})
                for kind in ("tcpSocket", "httpGet"):
                    if kind in probe:
                        self.assertIn(probe[kind]["port"], named, f"{o['metadata']['name']}/{c['name']}")

    def test_volumes_secrets_and_configmaps_referenced_exist(self):
        secrets, maps = self.by_kind["Secret"], self.by_kind["ConfigMap"]
        for o, tpl in pod_specs(self.objs):
            spec = tpl["spec"]
            vols = {v["name"]: v for v in spec["volumes"]}
            claims = {t["metadata"]["name"] for t in o["spec"].get("volumeClaimTemplates", [])}
            for v in vols.values():
                for kind, ref, known in (("secret", "secretName", secrets), ("configMap", "name", maps)):
                    if kind in v:
                        self.assertIn(v[kind][ref], known, v)
                        for item in v[kind].get("items", []):
                            self.assertIn(item["key"], known[v[kind][ref]]["data"], v)
            for c in containers(spec):
                for m in c.get("volumeMounts", []):
                    self.assertIn(m["name"], set(vols) | claims, f"{o['metadata']['name']}/{c['name']}")

    def files_in(self, tpl, c, path):
        """The files a container sees in the directory of path: a Secret's or ConfigMap's keys, or
        for an emptyDir those an init container copies into it from a Secret."""
        spec = tpl["spec"]
        vols = {v["name"]: v for v in spec["volumes"]}
        mount = next((m for m in c.get("volumeMounts", []) if m["mountPath"] == os.path.dirname(path)), None)
        self.assertIsNotNone(mount, f"{c['name']}: nothing mounted at {os.path.dirname(path)} for {path}")
        v = vols[mount["name"]]

        def keys(vol):
            if "secret" in vol:
                src = vol["secret"]
                return {i["path"] for i in src["items"]} if "items" in src else set(self.by_kind["Secret"][src["secretName"]]["data"])
            if "configMap" in vol:
                return set(self.by_kind["ConfigMap"][vol["configMap"]["name"]]["data"])
            return set()

        if "emptyDir" in v:
            copied = set()
            for init in spec.get("initContainers", []):
                if any(m["name"] == mount["name"] for m in init["volumeMounts"]):
                    for m in init["volumeMounts"]:
                        copied |= keys(vols[m["name"]])
            return copied
        return keys(v)

    def test_every_file_a_program_is_given_is_mounted(self):
        seen = 0
        for o, tpl in pod_specs(self.objs):
            for c in containers(tpl["spec"]):
                argv = command_of(c)
                for name, values in options(argv).items():
                    if name in ("--secret-file", "--redis-password-file") or name.endswith("-file"):
                        for path in values:
                            self.assertIn(os.path.basename(path), self.files_in(tpl, c, path), f"{c['name']} {name}")
                            seen += 1
                for a in argv:
                    if a.startswith("/opt/sandpipe/k8s/"):
                        self.assertIn(os.path.basename(a), self.files_in(tpl, c, a), c["name"])
                        seen += 1
        self.assertGreaterEqual(seen, 7)

    def test_every_file_a_redis_script_reads_is_mounted(self):
        sts = self.by_kind["StatefulSet"]["redis"]["spec"]["template"]
        scripts = self.by_kind["ConfigMap"]["redis-scripts"]["data"]
        for c in sts["spec"]["containers"]:
            script = scripts[os.path.basename(command_of(c)[-1])]
            paths = re.findall(r"(/(?:opt/sandpipe/k8s|run/sandpipe/redis-auth)/[\w.-]+)", script)
            self.assertGreaterEqual(len(paths), 2, c["name"])
            for path in paths:
                self.assertIn(os.path.basename(path), self.files_in(sts, c, path), f"{c['name']}: {path}")

    def test_every_option_is_one_the_program_takes(self):
        helps = {}
        for p in PROGRAMS:
            r = subprocess.run([os.path.join(BUILD, p), "--help"], capture_output=True, text=True, timeout=10)
            helps[p] = set(re.findall(r"--[a-z][a-z-]*", r.stdout + r.stderr))
            self.assertIn("--redis" if p != "sandpipe-netd" else "--control", helps[p], p)
        used = set()
        for _, tpl in pod_specs(self.objs):
            for c in containers(tpl["spec"]):
                argv = command_of(c)
                if argv and argv[0] in helps:
                    used.add(argv[0])
                    for name in options(argv):
                        self.assertIn(name, helps[argv[0]], f"{argv[0]} {name}")
        self.assertEqual(used, set(PROGRAMS))

    def test_the_sentinel_address_names_the_statefulsets_sentinels(self):
        sts = self.by_kind["StatefulSet"]["redis"]
        svc = self.by_kind["Service"][sts["spec"]["serviceName"]]
        ns = kustomization()["namespace"]
        port = next(p["port"] for p in svc["spec"]["ports"] if p["name"] == "sentinel")
        script = self.by_kind["ConfigMap"]["redis-scripts"]["data"]["start-sentinel.sh"]
        monitored = re.search(r"^sentinel monitor (\S+) ", script, re.M).group(1)
        want = "sentinel://" + ",".join(f"redis-{i}.{svc['metadata']['name']}.{ns}.svc.cluster.local:{port}"
                                        for i in range(sts["spec"]["replicas"])) + f"/{monitored}"
        addrs = []
        for _, tpl in pod_specs(self.objs):
            for c in containers(tpl["spec"]):
                addrs += options(command_of(c)).get("--redis", [])
        self.assertEqual(addrs, [want, want])  # the gateway's and the API's

    def test_the_sentinels_want_their_password_and_every_client_gives_it(self):
        """As in deploy/swarm: the sentinels answer nobody without sentinel.password (requirepass),
        give it to each other, and the pods' own lookups, the gateway and the API give it."""
        secret = "/run/sandpipe/redis-auth/sentinel.password"
        self.assertIn("sentinel.password", self.by_kind["Secret"]["sandpipe-redis-auth"]["data"])
        scripts = self.by_kind["ConfigMap"]["redis-scripts"]["data"]
        conf = scripts["start-sentinel.sh"]
        self.assertRegex(conf, r"(?m)^requirepass \$\(cat " + re.escape(secret) + r"\)$")
        self.assertRegex(conf, r"(?m)^sentinel sentinel-pass \$\(cat " + re.escape(secret) + r"\)$")
        asks = [line for line in scripts["find-primary.sh"].splitlines() if "redis-cli" in line]
        self.assertTrue(asks)
        for line in asks:
            self.assertIn(f"REDISCLI_AUTH=$(cat {secret})", line)
        given = []
        for _, tpl in pod_specs(self.objs):
            for c in containers(tpl["spec"]):
                opts = options(command_of(c))
                if "--redis" in opts:
                    given.append((command_of(c)[0], opts.get("--redis-sentinel-password-file")))
        self.assertEqual(sorted(given), [("sandpipe-api", [secret]), ("sandpipe-gateway", [secret])])

    def test_nginx_reaches_the_gateway_service(self):
        svc = self.by_kind["Service"]["gateway"]
        port = svc["spec"]["ports"][0]["port"]
        ns = kustomization()["namespace"]
        front = self.by_kind["Deployment"]["front"]["spec"]["template"]["spec"]
        nginx = next(c for c in front["containers"] if c["name"] == "nginx")
        self.assertEqual(options(command_of(nginx))["--gateway"], [f"gateway.{ns}.svc.cluster.local:{port}"])
        gw = self.by_kind["DaemonSet"]["gateway"]["spec"]["template"]["spec"]
        opts = options(command_of(gw["containers"][0]))
        self.assertEqual(opts["--listen"], [f"$(NODE_IP):{port}"])
        self.assertEqual(opts["--advertise"], opts["--listen"])
        self.assertTrue(gw["hostNetwork"] and gw["hostPID"])

    def test_every_image_is_the_one_images_builds(self):
        with open(os.path.join(ROOT, "compose.yaml")) as f:
            compose = yaml.safe_load(f)
        stack = compose["x-stack"]
        self.assertTrue(os.path.exists(os.path.join(ROOT, stack["build"]["dockerfile"])))
        images = {c["image"] for _, t in pod_specs(self.objs) for c in containers(t["spec"])}
        self.assertEqual(images, {stack["image"]})
        name, _, tag = stack["image"].partition(":")
        self.assertIn({"name": name, "newTag": tag}, kustomization()["images"])

    def test_the_scripts_parse(self):
        for key, text in self.by_kind["ConfigMap"]["redis-scripts"]["data"].items():
            if key.endswith(".sh"):
                r = subprocess.run(["sh", "-n"], input=text, capture_output=True, text=True, timeout=10)
                self.assertEqual(r.returncode, 0, f"{key}: {r.stderr}")


class ReplicationUsersTest(unittest.TestCase):
    """The ACL the redis pods render (redis/users.acl with its users replica and sentinel, by the real `sandpipe
    redis-acl`) loads into a real redis-server, and its replica and sentinel users may run what
    their roles need and nothing of sandpipe's keys."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="k8s-acl-")
        self.sock = os.path.join(self.tmp, "redis.sock")
        subprocess.run([os.path.join(BUILD, "sandpipe"), "redis-acl", "--generate", "--dir", self.tmp,
                        "--template", os.path.join(ROOT, "redis", "users.acl"),
                        "--out", os.path.join(self.tmp, "users.acl")], check=True, capture_output=True, timeout=10)
        self.redis = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", self.sock, "--save", "",
                                       "--appendonly", "no", "--dir", self.tmp,
                                       "--aclfile", os.path.join(self.tmp, "users.acl")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(self.sock):
                break
            time.sleep(0.05)

    def tearDown(self):
        self.redis.terminate()
        self.redis.wait(timeout=10)
        subprocess.run(["rm", "-rf", self.tmp], check=False)

    def cli(self, user, *cmd):
        with open(os.path.join(self.tmp, f"redis-{user}.password")) as f:
            env = dict(os.environ, REDISCLI_AUTH=f.read().strip())
        r = subprocess.run(["redis-cli", "-s", self.sock, "--user", user, *cmd], env=env,
                           capture_output=True, text=True, timeout=10)
        return r.stdout + r.stderr

    def test_replica_and_sentinel_users_have_their_roles_and_no_keys(self):
        self.assertIn("PONG", self.cli("replica", "PING"))
        self.assertIn("NOPERM", self.cli("replica", "GET", "sp:gateways"))
        self.assertIn("role:master", self.cli("sentinel", "INFO", "replication"))
        self.assertIn("master", self.cli("sentinel", "ROLE"))
        self.assertIn("OK", self.cli("sentinel", "CLIENT", "SETNAME", "sentinel-test"))
        self.assertEqual(self.cli("sentinel", "PUBLISH", "__sentinel__:hello", "x").strip(), "0")
        self.assertIn("NOPERM", self.cli("sentinel", "PUBLISH", "sp:status", "x"))
        self.assertIn("NOPERM", self.cli("sentinel", "GET", "sp:gateways"))
        self.assertIn("NOPERM", self.cli("sentinel", "FLUSHALL"))
        # the users of sandpipe's own programs stay as redis/users.acl has them
        self.assertIn("NOPERM", self.cli("gateway", "REPLICAOF", "NO", "ONE"))


if __name__ == "__main__":
    unittest.main()
