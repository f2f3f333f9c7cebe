"""The servers of a NetWorld (networld.py), run inside the world's network namespace as one
process: an authoritative DNS server (UDP and TCP) on the DNS address, and HTTP (80) and HTTPS
(443) on every served address, all from the files directory the fixture made.

    networld_serve.py CONFIG.json

It prints "ready" on stdout once every socket is bound and served, and exits when its stdin
reaches EOF: the fixture holds the pipe's other end, so a test process that dies (even by
SIGKILL) takes its world's servers with it instead of leaving them bound in a namespace.

Every DNS query and HTTP request is appended to a JSON-lines log before it is answered, so a test
that has its answer can read the log and find the query there (and can trust that a name missing
from it never arrived)."""
import http.server
import json
import os
import socket
import socketserver
import ssl
import struct
import sys
import threading

TYPES = {1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 15: "MX", 16: "TXT", 28: "AAAA",
         33: "SRV", 65: "HTTPS", 255: "ANY"}
A, CNAME, CLASS_IN = 1, 5, 1
NOERROR, FORMERR, NXDOMAIN, NOTIMP = 0, 1, 3, 4
TTL = 30
HEADER = struct.Struct(">HHHHHH")


class Log:
    """A JSON-lines file shared by the server threads: one whole line per write, flushed."""

    def __init__(self, path):
        self.f = open(path, "a", buffering=1)
        self.lock = threading.Lock()

    def write(self, **entry):
        line = json.dumps(entry) + "\n"
        with self.lock:
            self.f.write(line)
            self.f.flush()


# --- DNS ------------------------------------------------------------------------------------


def encode_name(name):
    out = b""
    for label in name.split("."):
        out += bytes([len(label)]) + label.encode("ascii")
    return out + b"\0"


def parse_query(msg):
    """(id, flags, name as asked, qtype, qclass, question bytes), or None for a message that is
    not a query (too short, or a response: answering those could loop two servers). A query
    that is malformed past its header raises ValueError (answered FORMERR)."""
    if len(msg) < HEADER.size:
        return None
    qid, flags, qdcount, _, _, _ = HEADER.unpack_from(msg)
    if flags & 0x8000:
        return None
    if qdcount != 1:
        raise ValueError("not one question")
    pos, labels = HEADER.size, []
    while True:
        if pos >= len(msg):
            raise ValueError("name runs past the message")
        n = msg[pos]
        pos += 1
        if n == 0:
            break
        if n & 0xC0:
            raise ValueError("compression pointer in a query's name")
        if pos + n > len(msg):
            raise ValueError("label runs past the message")
        labels.append(msg[pos:pos + n])
        pos += n
        if pos - HEADER.size > 255:
            raise ValueError("name longer than 255 bytes")
    if pos + 4 > len(msg):
        raise ValueError("question has no type and class")
    qtype, qclass = struct.unpack_from(">HH", msg, pos)
    name = b".".join(labels).decode("ascii", "backslashreplace")
    return qid, flags, name, qtype, qclass, msg[HEADER.size:pos + 4]


def rr(owner, rtype, rdata):
    return owner + struct.pack(">HHIH", rtype, CLASS_IN, TTL, len(rdata)) + rdata


class Zone:
    def __init__(self, names):
        self.a, self.cname = {}, {}
        for name, value in names.items():
            if isinstance(value, list):
                self.a[name] = value
            else:
                self.cname[name] = value

    def answer(self, name, qtype):
        """(rcode, answer records) for a question: a CNAME chain (at most 8 links) is followed
        within the zone; A records for A and ANY questions; nothing else has records here (AAAA
        included: NOERROR and empty, the world being IPv4 only)."""
        records, owner, current = [], None, name.lower()
        for _ in range(8):
            wire = owner or None
            if current in self.cname:
                target = self.cname[current]
                records.append((wire, current, CNAME, encode_name(target)))
                if qtype == CNAME:
                    return NOERROR, records
                current, owner = target, encode_name(target)
                continue
            if current not in self.a:
                return NXDOMAIN, records
            if qtype in (A, 255):
                records += [(wire, current, A, socket.inet_aton(ip)) for ip in self.a[current]]
            return NOERROR, records
        return NOERROR, records  # a longer chain: what was followed


def respond(zone, log, msg, proto, client):
    """The reply to one DNS message (bytes), or None when nothing is to be sent."""
    try:
        q = parse_query(msg)
    except ValueError as e:
        qid, flags = struct.unpack_from(">HH", msg)
        log.write(proto=proto, client=client, name=None, type=None, error=str(e))
        return HEADER.pack(qid, 0x8000 | (flags & 0x7900) | FORMERR, 0, 0, 0, 0)
    if q is None:
        return None
    qid, flags, name, qtype, qclass, question = q
    log.write(proto=proto, client=client, name=name, type=TYPES.get(qtype, str(qtype)))
    opcode = (flags >> 11) & 0xF
    reply_flags = 0x8000 | (opcode << 11) | 0x0400 | (flags & 0x0100)  # QR, AA, RD copied
    if opcode != 0 or qclass not in (CLASS_IN, 255):
        return HEADER.pack(qid, reply_flags | NOTIMP, 1, 0, 0, 0) + question
    rcode, records = zone.answer(name, qtype)
    asked = question[:-4]  # the question's name as it was asked (its case kept)
    body = b"".join(rr(wire or asked, rtype, rdata) for wire, _, rtype, rdata in records)
    reply = HEADER.pack(qid, reply_flags | rcode, 1, len(records), 0, 0) + question + body
    if proto == "udp" and len(reply) > 512:  # no EDNS here: truncated, the client retries on TCP
        reply = HEADER.pack(qid, reply_flags | 0x0200 | rcode, 1, 0, 0, 0) + question
    return reply


def serve_dns_udp(sock, zone, log):
    while True:
        msg, peer = sock.recvfrom(65535)
        reply = respond(zone, log, msg, "udp", peer[0]) if len(msg) >= 4 else None
        if reply:
            sock.sendto(reply, peer)


def recv_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def serve_dns_tcp_conn(conn, peer, zone, log):
    with conn:
        conn.settimeout(10)
        try:
            while True:
                head = recv_exact(conn, 2)
                msg = head and recv_exact(conn, struct.unpack(">H", head)[0])
                if not msg or len(msg) < 4:
                    return
                reply = respond(zone, log, msg, "tcp", peer[0])
                if reply is None:
                    return
                conn.sendall(struct.pack(">H", len(reply)) + reply)
        except OSError:
            return


def serve_dns_tcp(sock, zone, log):
    while True:
        conn, peer = sock.accept()
        threading.Thread(target=serve_dns_tcp_conn, args=(conn, peer, zone, log), daemon=True).start()


# --- HTTP and HTTPS -------------------------------------------------------------------------


class Handler(http.server.SimpleHTTPRequestHandler):
    """The files directory, plus /host (the Host header received, as text) and /headers (every
    header received, as they came). HTTP/1.1 with Content-Length on every response, so
    connections are kept alive."""
    protocol_version = "HTTP/1.1"
    server_version = "networld"
    timeout = 30  # an idle kept-alive connection's thread ends

    def __init__(self, request, client_address, server):
        super().__init__(request, client_address, server, directory=server.root)

    def echo(self):
        path = self.path.split("?", 1)[0]
        if path == "/host":
            return (self.headers.get("Host") or "").encode("latin-1")
        if path == "/headers":
            return str(self.headers).encode("latin-1")
        return None

    def send_echo(self, body, with_body):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def do_GET(self):
        body = self.echo()
        if body is None:
            return super().do_GET()
        self.send_echo(body, True)

    def do_HEAD(self):
        body = self.echo()
        if body is None:
            return super().do_HEAD()
        self.send_echo(body, False)

    def copyfile(self, source, outputfile):
        self.connection.sendfile(source)  # zero-copy over plain TCP (the /big benchmark file)

    def log_request(self, code="-", size="-"):
        self.server.log.write(scheme=self.server.scheme, local=self.connection.getsockname()[0],
                              client=self.client_address[0], method=self.command, path=self.path,
                              host=self.headers.get("Host"), status=int(code))

    def log_message(self, format, *args):
        sys.stderr.write(f"{self.server.scheme} {self.client_address[0]}: {format % args}\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # socketserver's 5 drops SYNs of a burst (1 s retransmits)

    def __init__(self, addr, port, root, log, tls=None):
        self.root, self.log, self.tls = root, log, tls
        self.scheme = "https" if tls else "http"
        super().__init__((addr, port), Handler)

    def server_bind(self):
        """HTTPServer's, without its socket.getfqdn(): a PTR lookup through the machine's own
        resolver, which the world must never ask (and cannot reach: it waited out its timeouts)."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def finish_request(self, request, client_address):
        """In the connection's own thread: the TLS handshake too (a client slow to finish its
        handshake holds only its thread, not the accept loop)."""
        request.settimeout(30)
        if self.tls:
            request = self.tls.wrap_socket(request, server_side=True)
        self.RequestHandlerClass(request, client_address, self)

    def handle_error(self, request, client_address):
        e = sys.exc_info()[1]
        if isinstance(e, (ConnectionError, TimeoutError, ssl.SSLError)):
            return  # a client that went away or failed its handshake: its own business
        super().handle_error(request, client_address)


def main():
    with open(sys.argv[1]) as f:
        cfg = json.load(f)
    dns_log, http_log = Log(cfg["dns_log"]), Log(cfg["http_log"])
    zone = Zone(cfg["names"])
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((cfg["dns_addr"], 53))
    tcp = socket.socket()
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind((cfg["dns_addr"], 53))
    tcp.listen(64)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cfg["cert"], cfg["key"])
    servers = []
    for addr in cfg["addrs"]:
        servers.append(Server(addr, 80, cfg["root"], http_log))
        servers.append(Server(addr, 443, cfg["root"], http_log, tls))
    threads = [threading.Thread(target=serve_dns_udp, args=(udp, zone, dns_log)),
               threading.Thread(target=serve_dns_tcp, args=(tcp, zone, dns_log))]
    threads += [threading.Thread(target=s.serve_forever) for s in servers]
    for t in threads:
        t.daemon = True
        t.start()
    print("ready", flush=True)
    sys.stdin.buffer.read()  # EOF: the fixture closed the pipe, or its process is gone
    os._exit(0)


if __name__ == "__main__":
    main()
