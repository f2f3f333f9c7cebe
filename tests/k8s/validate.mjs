// Validates Kubernetes objects against the Kubernetes OpenAPI schemas (npm kubernetes-models,
// pinned by package-lock.json): reads a JSON array of objects on stdin, prints one line per
// object ("ok KIND NAME" or "invalid KIND NAME: why") and exits 1 if any is invalid or of a
// kind no model knows. tests/integration/test_k8s_manifests.py runs it on deploy/kubernetes/.
//
// The models' validators allow fields the schema does not name (the API server would refuse
// them, or drop them silently), so a misspelt field would pass. They are compiled code, not
// schemas to walk; instead the object is handed to the validator behind a Proxy that records
// which fields it looked at: a field the schema names is read, a map's keys are enumerated, and a
// field nobody read is one the schema does not know.
import { readFileSync } from "node:fs";

// Returns [proxy, unknownFields()] for obj.
function watched(obj) {
  const read = new Map(); // object -> Set of keys read, or true once its keys were enumerated
  const proxies = new WeakMap();
  const wrap = (o) => {
    if (o === null || typeof o !== "object") return o;
    if (!proxies.has(o)) {
      proxies.set(o, new Proxy(o, {
        get(t, k) {
          if (typeof k === "string" && read.get(t) !== true) {
            if (!read.has(t)) read.set(t, new Set());
            read.get(t).add(k);
          }
          return wrap(t[k]);
        },
        ownKeys(t) {
          read.set(t, true);
          return Reflect.ownKeys(t);
        },
      }));
    }
    return proxies.get(o);
  };
  const unknown = () => {
    const out = [];
    const walk = (o, path) => {
      if (o === null || typeof o !== "object") return;
      const r = read.get(o);
      for (const [k, v] of Object.entries(o)) {
        const p = Array.isArray(o) ? `${path}/${k}` : `${path}/${k}`;
        if (!Array.isArray(o) && r !== true && !(r && r.has(k))) out.push(p);
        else walk(v, p);
      }
    };
    walk(obj, "");
    return out;
  };
  return [wrap(obj), unknown];
}

const objects = JSON.parse(readFileSync(0, "utf8"));
let failed = 0;
for (const obj of objects) {
  const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : ["", obj.apiVersion];
  const where = `${obj.kind} ${obj.metadata?.name ?? "?"}`;
  let Model;
  try {
    const mod = await import(group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`);
    Model = mod[obj.kind];
  } catch {
    Model = undefined;
  }
  if (!Model) {
    console.log(`invalid ${where}: no model for ${obj.apiVersion} ${obj.kind}`);
    failed++;
    continue;
  }
  try {
    const [proxy, unknownFields] = watched(obj);
    Model.prototype.validate.call(proxy);
    const unknown = unknownFields().filter((p) => p !== "/apiVersion" && p !== "/kind");
    if (unknown.length) throw new Error(`fields the schema does not know: ${unknown.join(", ")}`);
    console.log(`ok ${where}`);
  } catch (e) {
    console.log(`invalid ${where}: ${e.message}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
