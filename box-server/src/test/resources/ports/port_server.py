"""A test server for Box's port relay, standard library only: python3 port_server.py PORT.

GET /           an HTML page whose script opens a WebSocket to ws (relative), sends "hello",
                and writes what comes back into <p id="out">
GET /bytes?n=N  N bytes (i % 251 for byte i), with a Content-Length, written 64 KiB at a time
GET /chunked?n=N  the same bytes, chunked
POST /echo      the request body (Content-Length or chunked) back, chunked, once read whole
GET /headers    the request's header fields as JSON (names in lower case)
GET /cookie     sets the cookie app=1
GET /ws         a WebSocket that echoes each text and binary message
GET /hold       answers once a WebSocket has received the text "done" (or after 30 s)
GET /hostile-head   a response head that never ends (a header field of 1 MiB)
GET /hostile-chunk  a chunked body whose chunk-size line never ends
"""

import base64
import hashlib
import json
import struct
import threading
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGE = b"""<!doctype html>
<html><body><p id="out">waiting</p>
<script>
const url = new URL('ws', location.href);
url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
const socket = new WebSocket(url);
socket.onopen = () => socket.send('hello');
socket.onmessage = (m) => {
  document.getElementById('out').textContent = 'echo:' + m.data;
  socket.send('done');
};
socket.onerror = () => { document.getElementById('out').textContent = 'error'; };
</script>
<!-- Holds the page's load event (after which a headless browser dumps the DOM) until the echo is
     in the DOM: the server answers it once the page has said "done". -->
<script src="hold"></script>
</body></html>
"""

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
DONE = threading.Event()


def pattern(n):
    block = bytes(i % 251 for i in range(251 * 261))  # a multiple of 251, about 64 KiB
    sent = 0
    while sent < n:
        part = block[: min(len(block), n - sent)]
        sent += len(part)
        yield part


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/":
            self.reply(200, "text/html", PAGE)
        elif url.path == "/bytes":
            n = int(query["n"][0])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(n))
            self.end_headers()
            for part in pattern(n):
                self.wfile.write(part)
        elif url.path == "/chunked":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in pattern(int(query["n"][0])):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        elif url.path == "/headers":
            fields = {k.lower(): v for k, v in self.headers.items()}
            self.reply(200, "application/json", json.dumps(fields).encode())
        elif url.path == "/cookie":
            self.send_response(200)
            self.send_header("Set-Cookie", "app=1; Path=/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif url.path == "/hold":
            DONE.wait(30)
            self.reply(200, "text/javascript", b"// held\n")
        elif url.path == "/hostile-head":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Endless: " + b"a" * (1024 * 1024))
        elif url.path == "/hostile-chunk":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            self.wfile.write(b"1" * (1024 * 1024))
        elif url.path.endswith("/ws") or url.path == "/ws":
            self.websocket()
        else:
            self.reply(404, "text/plain", b"no such page\n")

    def do_POST(self):
        if urlsplit(self.path).path != "/echo":
            self.reply(404, "text/plain", b"no such page\n")
            return
        # Read whole before answering: a client that sends its whole body before it reads the
        # answer would otherwise stall against a server that answers as it reads.
        length = self.headers.get("Content-Length")
        if length is not None:
            body = self.rfile.read(int(length))
        else:
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            body = b"".join(parts)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i in range(0, len(body), 65536):
            part = body[i : i + 65536]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        self.wfile.write(b"0\r\n\r\n")

    def reply(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def websocket(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return
            opcode = head[0] & 0x0F
            length = head[1] & 0x7F
            if length == 126:
                length = struct.unpack(">H", self.rfile.read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            if opcode == 8:
                self.frame(8, data[:2])
                return
            if opcode == 1 and data == b"done":
                DONE.set()
            elif opcode in (1, 2):
                self.frame(opcode, data)
            elif opcode == 9:
                self.frame(10, data)

    def frame(self, opcode, data):
        n = len(data)
        if n < 126:
            head = struct.pack(">BB", 0x80 | opcode, n)
        elif n < 65536:
            head = struct.pack(">BBH", 0x80 | opcode, 126, n)
        else:
            head = struct.pack(">BBQ", 0x80 | opcode, 127, n)
        self.wfile.write(head + data)
        self.wfile.flush()


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
