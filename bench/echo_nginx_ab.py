"""Keystroke echo and the nginx hop (issue 35): one gateway (a session's terminal) and websocketd
serving `cat`, each straight and behind three nginx variants (ws_proxy.conf's relay directives;
nginx reaches the gateway over its unix socket, as deployed, and websocketd over TCP); bench_ws
echo alternates keystroke by keystroke over the eight targets. usage:
bench/echo_nginx_ab.py ROUNDS N; GW=path measures another gateway binary."""
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


def nginx_conf(d, port, workers, events, listen, gw_sock, wsd_port):
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
  location /ws/ {{ proxy_pass http://unix:{gw_sock}; {RELAY} }}
  location /wsd/ {{ proxy_pass http://127.0.0.1:{wsd_port}/; {RELAY} }}
 }}
}}
"""


def main():
    rounds, n = int(sys.argv[1]), int(sys.argv[2])
    st = AbStack("sp-echo-ab-")
    try:
        gw_sock = f"{st.work}/gw.sock"
        gp = st.gateway(os.environ.get("GW", f"{B}/sandpipe-gateway"), "gw-echo", 1, unix=gw_sock)
        wp = free_port()
        st.start(["websocketd", "--port", str(wp), "--address", "127.0.0.1", "--loglevel", "error", "cat"])
        time.sleep(2.5)
        token = jwt(st.secret, sub="bench", role="admin")
        c = WS("127.0.0.1", gp, f"/ws/control?token={token}")
        c.send_json({"id": 1, "method": "session.create", "params": {}})
        sid = c.recv_json(60)["result"]["id"]
        c.close()
        path = f"/ws/sessions/{sid}/terminal?token={token}"
        args = [f"{B}/bench/bench_ws", "echo", "127.0.0.1", str(gp), path, str(n), "binary", str(wp), "/", "text"]
        names = ["terminal straight", "websocketd straight"]
        for i, (name, (workers, events, listen)) in enumerate(VARIANTS.items()):
            d = f"{st.work}/nginx{i}"
            os.makedirs(f"{d}/logs")
            p = free_port()
            with open(f"{d}/nginx.conf", "w") as f:
                f.write(nginx_conf(d, p, workers, events, listen, gw_sock, wp))
            st.start(["nginx", "-p", d, "-c", f"{d}/nginx.conf"])
            args += [str(p), path, "binary", str(p), "/wsd/", "text"]
            names += [f"terminal behind nginx, {name}", f"websocketd behind nginx, {name}"]
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
