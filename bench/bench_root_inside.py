"""Root inside (issue 30, item 1) against one uid, same run: a cold bwrap sandbox of the default
image to its first command, and a warm claim, with --root-inside on (the sandbox's user
namespace maps its 65,536 uids, made by the gateway; the image idmapped, with an overlay on the
sandbox's disk; the executor's sudo broker) and off (one uid, the image bound read-only), the
two modes alternating so that drift hits both. Starts its own stacks (tests/integration/stack.py)
with the build in $MODE; needs the default image (rootfs form)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from bench_images import cold, med, warm_claims  # noqa: E402
from stack import Stack  # noqa: E402

ROUNDS = 3


def main():
    res = {(k, m): [] for k in ("cold", "warm") for m in ("on", "off")}
    for _ in range(ROUNDS):
        for mode in ("off", "on"):
            st = Stack(pool=0, extra=["--image", "default", "--root-inside", mode])
            try:
                res[("cold", mode)] += cold(st, None)
            finally:
                st.stop()
            st = Stack(pool=2, extra=["--image", "default", "--root-inside", mode])
            try:
                time.sleep(3)
                res[("warm", mode)] += warm_claims(st, 5)
            finally:
                st.stop()
    print("| path | one uid (`--root-inside off`) | root inside (on) | on / off |")
    print("|---|---|---|---|")
    for kind, what in (("cold", "cold bwrap sandbox of the image → first command"),
                       ("warm", "warm claim (session.create from the pool)")):
        off, on = med(res[(kind, "off")]), med(res[(kind, "on")])
        print(f"| {what} | {off:.1f} ms | {on:.1f} ms | {on / off:.2f}x |")
    print(f"\n(medians of {len(res[('cold', 'on')])} cold starts and "
          f"{len(res[('warm', 'on')])} warm claims per mode)")


if __name__ == "__main__":
    main()
