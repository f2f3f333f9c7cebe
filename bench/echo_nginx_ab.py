"""Keystroke echo and the nginx hop (issue 35): one gateway (a session's terminal), websocketd
serving `cat` (a pipe) and websocketd serving an interactive bash on a PTY of its own (script(1),
readline on: the fair peer, which pays for the PTY and the shell as a terminal does), each straight
and behind nginx as deployed (ws_proxy.conf's relay directives; nginx reaches the gateway over its
unix socket, websocketd over TCP); bench_ws echo alternates keystroke by keystroke over all
targets. usage: bench/echo_nginx_ab.py ROUNDS N
  GW=path         measures another gateway binary (with this build's executor, or EXEC=path)
  BASE=dir        adds a second gateway from another build (dir/sandpipe-gateway and its
                  dir/sandpipe-executor, e.g. /work/main/build/release), straight and behind the
                  same nginx, its keystrokes alternating with this build's: an A/B in the same
                  minutes
  VARIANTS=all    nginx in the three variants measured before (1 worker; accept_mutex off,
                  multi_accept, reuseport) as well, for the terminal and websocketd's `cat`"""
import os
import subprocess
import sys
import time

from ab_stack import B, AbStack, free_port

from wsclient import WS, jwt  # noqa: E402 (ab_stack put tests/integration on the path)

RELAY = """proxy_http_version 1.1; proxy_set_header Host $host; proxy_set_header Upgrade $http_upgrade;
  proxy_set_header Connection "upgrade"; proxy_buffering off; proxy_buffer_size 16k;
  proxy_buffers 4 16k; proxy_busy_buffers_size 16k; proxy_request_buffering off;
  proxy_read_timeout 3600s; proxy_send_timeout 3600s;"""
# name: (worker_processes, events block extras, listen extras); bench_ws takes 8 targets: 3 of them
VARIANTS = {
    "2 workers (as deployed)": ("2", "", ""),
    "1 worker": ("1", "", ""),
    "2 workers, accept_mutex off, multi_accept, reuseport": ("2", "accept_mutex off; multi_accept on;", " reuseport"),
}
# websocketd's PTY peer: bash as a terminal's shell is (interactive, readline, a TERM), on a PTY
# that script(1) holds and relays between websocketd's pipes, as the executor holds ours
PTY_BASH = ["--binary", "env", "TERM=xterm-256color", "script", "-qfc", "bash --norc --noprofile -i", "/dev/null"]


def nginx_conf(d, port, workers, events, listen, gw_socks, wsd_ports):
    return f"""user root;
worker_processes {workers};
daemon off;
pid {d}/nginx.pid;
error_log {d}/logs/error.log warn;
events {{ worker_connections 4096; {events} }}
http {{
 access_log off;
 client_body_temp_path {d}/t1; proxy_temp_path {d}/t2; fastcgi_temp_path {d}/t3;
 uwsgi_temp_path {d}/t4; scgi_temp_path {d}/t5;
 server {{
  listen 127.0.0.1:{port}{listen};
  location /ws/ {{ proxy_pass http://unix:{gw_socks[0]}; {RELAY} }}
  location /base/ws/ {{ proxy_pass http://unix:{gw_socks[-1]}:/ws/; {RELAY} }}
  location /wsd/ {{ proxy_pass http://127.0.0.1:{wsd_ports[0]}/; {RELAY} }}
  location /wsdpty/ {{ proxy_pass http://127.0.0.1:{wsd_ports[1]}/; {RELAY} }}
 }}
}}
"""


def session_path(st, port):
    token = jwt(st.secret, sub="bench", role="admin")
    c = WS("127.0.0.1", port, f"/ws/control?token={token}")
    c.send_json({"id": 1, "method": "session.create", "params": {}})
    sid = c.recv_json(60)["result"]["id"]
    c.close()
    return f"/ws/sessions/{sid}/terminal?token={token}"


def main():
    rounds, n = int(sys.argv[1]), int(sys.argv[2])
    base = os.environ.get("BASE")
    variants = list(VARIANTS.items()) if os.environ.get("VARIANTS") == "all" else list(VARIANTS.items())[:1]
    st = AbStack("sp-echo-ab-")
    try:
        gw_socks = [f"{st.work}/gw.sock"]
        gp = st.gateway(os.environ.get("GW", f"{B}/sandpipe-gateway"), "gw-echo", 1, unix=gw_socks[0],
                        executor=os.environ.get("EXEC"))
        if base:
            gw_socks.append(f"{st.work}/gw-base.sock")
            bp = st.gateway(f"{base}/sandpipe-gateway", "gw-base", 1, unix=gw_socks[1],
                            executor=f"{base}/sandpipe-executor")
        wp, wpty = free_port(), free_port()
        st.start(["websocketd", "--port", str(wp), "--address", "127.0.0.1", "--loglevel", "error", "cat"])
        st.start(["websocketd", "--port", str(wpty), "--address", "127.0.0.1", "--loglevel", "error", *PTY_BASH])
        time.sleep(2.5)
        path = session_path(st, gp)
        args = [f"{B}/bench/bench_ws", "echo", "127.0.0.1", str(gp), path, str(n), "binary",
                str(wp), "/", "text", str(wpty), "/", "binary"]
        names = ["terminal straight", "websocketd cat straight", "websocketd bash on a PTY straight"]
        if base:
            bpath = session_path(st, bp)
            args += [str(bp), bpath, "binary"]
            names += ["BASE terminal straight"]
        for i, (name, (workers, events, listen)) in enumerate(variants):
            d = f"{st.work}/nginx{i}"
            os.makedirs(f"{d}/logs")
            p = free_port()
            with open(f"{d}/nginx.conf", "w") as f:
                f.write(nginx_conf(d, p, workers, events, listen, gw_socks, [wp, wpty]))
            st.start(["nginx", "-p", d, "-c", f"{d}/nginx.conf"])
            args += [str(p), path, "binary", str(p), "/wsd/", "text"]
            names += [f"terminal behind nginx, {name}", f"websocketd cat behind nginx, {name}"]
            if i == 0:
                args += [str(p), "/wsdpty/", "binary"]
                names += [f"websocketd bash on a PTY behind nginx, {name}"]
                if base:
                    args += [str(p), "/base" + bpath, "binary"]
                    names += [f"BASE terminal behind nginx, {name}"]
        time.sleep(1)
        for r in range(rounds):
            load = open("/proc/loadavg").read().split()[0]
            out = subprocess.run(args, capture_output=True, text=True, timeout=600).stdout.strip().splitlines()
            print(f"round {r + 1} (load {load})")
            for name, line in zip(names, out):
                print(f"  {name:64s} {line.split(' n=')[-1]}")
    finally:
        st.stop()


main()
