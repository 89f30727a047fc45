#!/usr/bin/python3
"""hexir-serve end to end, on 127.0.0.1 only: every endpoint through urllib and curl, infer
results against hexir-run on the same input, malformed JSON, form and binary-data requests
(each its status and message, the server serving correctly afterwards), concurrent clients, a full queue answering
503, clients that disconnect, and SIGTERM under load (every request answered or refused, exit 0).
Usage: serve_test.py --bin BUILD/tools"""
import argparse
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import numpy as np

# A small graph, and a slow one (a 256x1024x1024 matmul) for queueing.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(ROOT, "tests", "graphs", "matmul_tanh.mlir")) as _f:
    SMALL = _f.read()  # y = tanh(x @ w + 1), x 4x8
SLOW = """
func.func @main(%x: tensor<256x1024xf32> {hexir.name = "x"}) -> (tensor<256x1024xf32> {hexir.name = "y"}) {
  %w = arith.constant dense<0.001> : tensor<1024x1024xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %m = linalg.matmul ins(%x, %w : tensor<256x1024xf32>, tensor<1024x1024xf32>) outs(%f : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  return %m : tensor<256x1024xf32>
}
"""

FAILURES = []


def check(what, ok, detail=""):
    print(("ok  " if ok else "FAIL") + " " + what + ("" if ok else f"\n     {detail}"))
    if not ok:
        FAILURES.append(what)


def start(bin_dir, *args):
    p = subprocess.Popen([os.path.join(bin_dir, "hexir-serve"), "--port", "0", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    line = p.stdout.readline()
    m = re.search(r"listening on 127.0.0.1:(\d+)", line)
    if not m:
        p.kill()
        raise RuntimeError("hexir-serve did not start: " + line + p.stdout.read())
    return p, int(m.group(1))


def request(port, method, path, body=None, headers=None, timeout=30):
    data = body if isinstance(body, (bytes, type(None))) else body.encode()
    headers = {"Content-Type": "application/json", **(headers or {})}
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def read_response(sock, data=b""):
    """(status, headers dict lower-case, body bytes, bytes after it) of one HTTP response on
    `sock`, `data` what was read of it already; status 0 when the connection closed first."""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return 0, {}, data, b""
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode(errors="replace").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest[:length], rest[length:]


def rss_peak_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


def slow_clients_and_limits(tools, x, expected):
    """Clients that send slowly, pipeline, stream huge chunked bodies or sit idle: none holds a
    worker or grows the server; SIGTERM waits for them only as long as the grace."""
    server, port = start(tools, "--model", "small=small.hxb", "--header-timeout", "2", "--idle-timeout", "3",
                         "--shutdown-grace", "2", "--max-connections", "64", "--threads", "4")
    try:
        head = b"POST /v2/models/small/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        body = infer_body(x).encode()

        def right(status, data):
            return status == 200 and np.array_equal(np.array(json.loads(data)["outputs"][0]["data"], np.float32),
                                                    expected.reshape(-1))

        # 50 connections sending a header line every 0.5 s (more than the 4 workers): other
        # clients are answered at once; the slow ones get 408 when their headers are 2 s late.
        slow_replies, stop_slow = [], threading.Event()
        def slow_client():
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            try:
                s.sendall(head)
                for i in range(12):
                    if stop_slow.wait(0.5):
                        break
                    s.sendall(f"X-Slow-{i}: 1\r\n".encode())
            except OSError:
                pass  # closed by the server after its 408
            try:
                slow_replies.append(s.recv(4096))
            except OSError:
                slow_replies.append(b"")
            s.close()
        slow = [threading.Thread(target=slow_client) for _ in range(50)]
        for t in slow:
            t.start()
        time.sleep(0.5)
        latencies = []
        for _ in range(3):
            t0 = time.monotonic()
            status, text = request(port, "POST", "/v2/models/small/infer", infer_body(x), timeout=10)
            latencies.append(time.monotonic() - t0)
            check("an infer request beside 50 slow-header connections is right", right(status, text), text[:200])
        check(f"... and answered within 1 s (slowest {max(latencies):.3f} s)", max(latencies) < 1.0, str(latencies))
        for t in slow:
            t.join()
        stop_slow.set()
        late = sum(r.startswith(b"HTTP/1.1 408") for r in slow_replies)
        check("slow headers get 408 after the header timeout", late == 50 and
              b"the request's headers did not arrive within 2 s" in slow_replies[0], str(slow_replies[:2]))

        # A chunked body of 1 GiB: refused (413) as soon as it passes the model's limit, the
        # server's memory stays flat.
        before = rss_peak_kib(server.pid)
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"100000\r\n" + b" " * 0x100000 + b"\r\n"
        sent = 0
        try:
            for _ in range(1024):
                s.sendall(chunk)
                sent += 1
        except OSError:
            pass
        status, _, data, _ = read_response(s)
        s.close()
        grown = rss_peak_kib(server.pid) - before
        check(f"a 1 GiB chunked body: 413 after {sent} MiB sent, peak RSS +{grown} KiB",
              status == 413 and b"the request body is over the 66560 bytes a request of model 'small' can need"
              in data and grown < 64 * 1024 and sent < 1024, f"{status} {data[:200]} {sent}")

        # A chunked body within the limit is read whole.
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        half = len(body) // 2
        s.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n" +
                  b"%x\r\n" % half + body[:half] + b"\r\n" +
                  b"%x;ext=1\r\n" % (len(body) - half) + body[half:] + b"\r\n0\r\n\r\n")
        status, _, data, _ = read_response(s)
        s.close()
        check("a chunked request is answered", right(status, data), data[:200])

        # Pipelined requests on one connection: answered in order.
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        requests_ = b""
        for rid in ("first", "second", "third"):
            b = json.dumps({**json.loads(body), "id": rid}).encode()
            requests_ += head + b"Content-Length: " + str(len(b)).encode() + b"\r\n\r\n" + b
        s.sendall(requests_)
        ids = []
        pending = b""
        for _ in range(3):
            status, _, data, pending = read_response(s, pending)
            ids.append(json.loads(data).get("id") if status == 200 else status)
        s.close()
        check("3 pipelined requests answered in order", ids == ["first", "second", "third"], str(ids))

        # Expect: 100-continue (curl's for larger bodies) is answered before the body is sent.
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(head + b"Expect: 100-continue\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
        interim = s.recv(64)
        s.sendall(body)
        status, _, data, _ = read_response(s)
        s.close()
        check("Expect: 100-continue, then the answer", interim.startswith(b"HTTP/1.1 100 Continue") and
              right(status, data), interim[:40])

        # At --max-connections 64, 64 idle keep-alive connections do not shut a new client out:
        # the one idle the longest is closed for it. An idle connection closes after 3 s.
        idle = []
        for _ in range(64):
            c = socket.create_connection(("127.0.0.1", port), timeout=30)
            c.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            read_response(c)
            idle.append(c)
        status, text = request(port, "POST", "/v2/models/small/infer", infer_body(x), timeout=10)
        check("a client beside 64 idle connections (the most) is answered", right(status, text), text[:200])
        idle[0].settimeout(5)
        check("... the connection idle the longest was closed for it", idle[0].recv(10) == b"")
        idle[-1].settimeout(10)
        t0 = time.monotonic()
        closed = idle[-1].recv(10) == b""
        check(f"an idle connection is closed after --idle-timeout ({time.monotonic() - t0:.1f} s more)", closed)
        for c in idle:
            c.close()

        # SIGTERM while a client sends its headers slowly: exit 0 within the 2 s grace.
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(head)
        t0 = time.monotonic()
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=30)
        waited = time.monotonic() - t0
        s.close()
        check(f"SIGTERM with a slow client: exit {code} after {waited:.1f} s (grace 2 s)", code == 0 and waited < 5)
    finally:
        if server.poll() is None:
            server.kill()


def infer_body(x, name="x", **extra):
    return json.dumps({"inputs": [{"name": name, "shape": list(x.shape), "datatype": "FP32",
                                   "data": x.flatten().tolist()}], **extra})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    tools = args.bin
    with tempfile.TemporaryDirectory(prefix="hexir-serve-") as tmp:
        os.chdir(tmp)
        for name, text in (("small", SMALL), ("slow", SLOW)):
            with open(name + ".mlir", "w") as f:
                f.write(text)
            subprocess.run([os.path.join(tools, "hexir-compile"), name + ".mlir", "-o", name + ".hxb"], check=True)
        x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
        np.save("x.npy", x)
        subprocess.run([os.path.join(tools, "hexir-run"), "small.hxb", "--input", "x=x.npy", "--output", "y=y.npy"],
                       check=True, capture_output=True)
        expected = np.load("y.npy")

        server, port = start(tools, "--model", "small=small.hxb", "--model", "slow=slow.hxb", "--sessions", "2")
        try:
            # Endpoints.
            for path, key in (("/v2/health/live", "live"), ("/v2/health/ready", "ready"),
                              ("/v2/models/small/ready", "ready")):
                status, body = request(port, "GET", path)
                check(f"GET {path}", status == 200 and json.loads(body)[key] is True, body)
            status, body = request(port, "GET", "/v2")
            check("GET /v2", status == 200 and json.loads(body)["name"] == "hexir-serve", body)
            status, body = request(port, "GET", "/v2/models/small")
            meta = json.loads(body) if status == 200 else {}
            check("GET /v2/models/small (metadata)", meta.get("inputs") == [{"name": "x", "datatype": "FP32",
                                                                             "shape": [4, 8]}]
                  and meta.get("outputs") == [{"name": "y", "datatype": "FP32", "shape": [4, 16]}], body)
            # Infer through urllib and curl: equal to hexir-run's output.
            status, body = request(port, "POST", "/v2/models/small/infer", infer_body(x, id="req-7"),
                                   {"Content-Type": "application/json"})
            out = json.loads(body) if status == 200 else {}
            got = np.array(out.get("outputs", [{}])[0].get("data", []), np.float32).reshape(-1)
            check("infer (urllib) equals hexir-run", status == 200 and out.get("id") == "req-7"
                  and np.array_equal(got, expected.reshape(-1)), body[:300])
            with open("req.json", "w") as f:
                f.write(infer_body(x))
            r = subprocess.run(["curl", "-s", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
                                "@req.json", f"http://127.0.0.1:{port}/v2/models/small/infer"],
                               capture_output=True, text=True)
            got = np.array(json.loads(r.stdout)["outputs"][0]["data"], np.float32)
            check("infer (curl) equals hexir-run", np.array_equal(got, expected.reshape(-1)), r.stdout[:300])
            nested = json.dumps({"inputs": [{"name": "x", "shape": [4, 8], "datatype": "FP32", "data": x.tolist()}],
                                 "outputs": [{"name": "y"}]})
            status, body = request(port, "POST", "/v2/models/small/infer", nested)
            check("infer with nested data and a requested output", status == 200 and np.array_equal(
                np.array(json.loads(body)["outputs"][0]["data"], np.float32), expected.reshape(-1)), body[:200])

            # The binary tensor data extension: binary input, binary output.
            header = json.dumps({"inputs": [{"name": "x", "shape": [4, 8], "datatype": "FP32",
                                             "parameters": {"binary_data_size": 128}}],
                                 "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v2/models/small/infer", data=header + x.tobytes(),
                                         headers={"Content-Type": "application/octet-stream",
                                                  "Inference-Header-Content-Length": str(len(header))})
            with urllib.request.urlopen(req, timeout=30) as r:
                length = int(r.headers["Inference-Header-Content-Length"])
                raw = r.read()
            meta = json.loads(raw[:length])
            got = np.frombuffer(raw[length:], np.float32)
            check("infer with binary tensor data equals hexir-run",
                  meta["outputs"][0]["parameters"]["binary_data_size"] == 256
                  and np.array_equal(got, expected.reshape(-1)), raw[:200])

            def binary_request(header_obj, data, length=None):
                h = json.dumps(header_obj).encode()
                return request(port, "POST", "/v2/models/small/infer", h + data,
                               {"Content-Type": "application/octet-stream",
                                "Inference-Header-Content-Length": str(len(h) if length is None else length)})
            binary_input = {"inputs": [{"name": "x", "shape": [4, 8], "datatype": "FP32",
                                        "parameters": {"binary_data_size": 128}}]}
            for what, (status, text), message in [
                ("binary data shorter than declared", binary_request(binary_input, x.tobytes()[:100]),
                 "needs 128 bytes of binary data, 100 are left"),
                ("binary data longer than the inputs", binary_request(binary_input, x.tobytes() + b"xxxx"),
                 "132 bytes of binary data; its inputs take 128"),
                ("binary_data_size of another size", binary_request(
                    {"inputs": [{**binary_input["inputs"][0], "parameters": {"binary_data_size": 64}}]}, x.tobytes()),
                 "has binary_data_size 64; its tensor takes 128 bytes"),
                ("header length beyond the body", binary_request(binary_input, x.tobytes(), length=99999),
                 "is not a length within the"),
                ("header length not a number", binary_request(binary_input, x.tobytes(), length="12a"),
                 "Inference-Header-Content-Length '12a'")]:
                err = json.loads(text).get("error", "") if text.startswith("{") else text
                check(f"bad request: {what} -> 400", status == 400 and message in err, f"{status} {text[:200]}")

            # Malformed requests: each its status and message.
            good = json.loads(infer_body(x))
            def variant(**changes):
                d = json.loads(json.dumps(good))
                d["inputs"][0].update(changes)
                return json.dumps(d)
            cases = [
                ("malformed JSON", "/v2/models/small/infer", "{\"inputs\": [", 400, "not a JSON object"),
                ("empty body", "/v2/models/small/infer", "", 400, "not a JSON object"),
                ("body is an array", "/v2/models/small/infer", "[1, 2]", 400, "not a JSON object"),
                ("no inputs", "/v2/models/small/infer", "{}", 400, "no \"inputs\" array"),
                ("inputs not an array", "/v2/models/small/infer", "{\"inputs\": 3}", 400, "no \"inputs\" array"),
                ("input without a name", "/v2/models/small/infer", "{\"inputs\": [{}]}", 400, "needs a \"name\""),
                ("unknown input", "/v2/models/small/infer", variant(name="z"), 400, "has no input 'z'"),
                ("wrong datatype", "/v2/models/small/infer", variant(datatype="INT64"), 400, "must have datatype FP32"),
                ("wrong shape", "/v2/models/small/infer", variant(shape=[8, 4]), 400,
                 "must have shape [4,8], got [8,4]"),
                ("huge declared shape", "/v2/models/small/infer", variant(shape=[4294967296, 4294967296]), 400,
                 "must have shape [4,8]"),
                ("shape not integers", "/v2/models/small/infer", variant(shape=["4", 8]), 400, "not integers"),
                ("too few values", "/v2/models/small/infer", variant(data=[1.0] * 31), 400, "needs 32 values, got 31"),
                ("too many values", "/v2/models/small/infer", variant(data=[1.0] * 33), 400, "needs 32 values, got 33"),
                ("ragged nested data", "/v2/models/small/infer", variant(data=[[1.0] * 20, [1.0] * 12]), 400,
                 "nested \"data\" that does not match its shape [4,8] at level 0"),
                ("rows of the wrong length", "/v2/models/small/infer", variant(data=[[1.0] * 8] * 3 + [[1.0] * 7]),
                 400, "does not match its shape [4,8] at level 1"),
                ("data nested deeper than its shape", "/v2/models/small/infer",
                 variant(data=[[[1.0]] * 8] * 4), 400, "deeper than its shape [4,8]"),
                ("an FP32 value beyond FP32", "/v2/models/small/infer", variant(data=[1e39] + [1.0] * 31), 400,
                 "value 0 (1e+39) is not a FP32 value"),
                ("65 levels of nesting", "/v2/models/small/infer", "{\"inputs\": " + "[" * 65 + "]" * 65 + "}", 400,
                 "nests arrays and objects more than 64 levels deep"),
                ("30,000 levels of nesting", "/v2/models/small/infer", "[" * 30000 + "]" * 30000, 400,
                 "nests arrays and objects more than 64 levels deep"),
                ("non-numeric data", "/v2/models/small/infer", variant(data=["a"] * 32), 400, "value 0 (\"a\") is not a FP32"),
                ("booleans for FP32", "/v2/models/small/infer", variant(data=[True] * 32), 400, "is not a FP32"),
                ("missing data", "/v2/models/small/infer", json.dumps({"inputs": [{"name": "x", "shape": [4, 8],
                                                                                  "datatype": "FP32"}]}), 400,
                 "has no \"data\""),
                ("input given twice", "/v2/models/small/infer", json.dumps({"inputs": good["inputs"] * 2}), 400,
                 "given twice"),
                ("id not a string", "/v2/models/small/infer", json.dumps({**good, "id": 5}), 400, "\"id\" must be a string"),
                ("unknown output", "/v2/models/small/infer", json.dumps({**good, "outputs": [{"name": "w"}]}), 400,
                 "has no output 'w'"),
                ("an output requested 300 times (an amplified answer)", "/v2/models/small/infer",
                 json.dumps({**good, "outputs": [{"name": "y"}] * 300}), 400, "output 'y' is requested more than once"),
                ("outputs not an array", "/v2/models/small/infer", json.dumps({**good, "outputs": {}}), 400,
                 "\"outputs\" must be an array"),
                ("unknown model", "/v2/models/nope/infer", infer_body(x), 404, "no model 'nope'"),
                ("a 10,000-character model name: echoed cut short", "/v2/models/" + "n" * 10000 + "/infer",
                 infer_body(x), 404, "n" * 100 + "... (10000 bytes)'"),
                ("unknown model metadata", "/v2/models/nope", None, 404, "no model 'nope'"),
                ("unknown path", "/v3/anything", None, 404, "not found"),
                ("body over the limit", "/v2/models/small/infer", "[" + "1," * 40000 + "1]", 413,
                 "the request body of 80003 bytes is over the 66560 bytes a request of model 'small' can need"),
            ]
            # The content type is not looked at: curl -d sends JSON as form-encoded.
            cases.append(("a large form-encoded body", "/v2/models/small/infer", " " * 20000, 400,
                          "not a JSON object"))
            for what, path, body, code, message in cases:
                headers = {"Content-Type": "application/x-www-form-urlencoded"} if what.startswith("a large form") \
                    else None
                status, text = request(port, "GET" if body is None else "POST", path, body, headers)
                err = json.loads(text).get("error", "") if text.startswith("{") else text
                check(f"bad request: {what} -> {code}", status == code and message in err, f"{status} {text[:200]}")
            # Raw sockets: a body shorter than its Content-Length (then the client goes), and a
            # client that disconnects in the middle of its headers.
            for raw in (b"POST /v2/models/small/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"inputs\"",
                        b"POST /v2/models/small/infer HTTP/1.1\r\nHost: x\r\nCont"):
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                s.sendall(raw)
                s.close()
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"POST /v2/models/small/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{\"in}")
            reply = s.recv(4096).decode(errors="replace")
            s.close()
            check("bad request: a body that is not what its length says -> 400", reply.startswith("HTTP/1.1 400"),
                  reply[:200])
            # Clients that leave mid-response: one closes right after sending a request whose
            # answer (1 MiB of JSON) the server then writes into a closed socket, one reads the
            # first bytes of its answer and closes.
            slow_body = infer_body(np.ones((256, 1024), np.float32)).encode()
            for read_first in (False, True, False, True):
                s = socket.create_connection(("127.0.0.1", port), timeout=60)
                # Close with a reset: the server's next write fails at once (EPIPE), as it does
                # when a client process dies.
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.sendall(b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: " + str(len(slow_body)).encode() + b"\r\n\r\n" + slow_body)
                if read_first:
                    first = s.recv(64)
                    check("a client reading the first bytes of its answer gets HTTP 200",
                          first.startswith(b"HTTP/1.1 200"), first[:64].decode(errors="replace"))
                s.close()
            time.sleep(1.0)  # the server finishes writing into the closed sockets
            check("the server survives clients leaving mid-response", server.poll() is None, str(server.poll()))
            status, body = request(port, "POST", "/v2/models/small/infer", infer_body(x))
            check("still serving after the bad requests", status == 200 and np.array_equal(
                np.array(json.loads(body)["outputs"][0]["data"], np.float32), expected.reshape(-1)), body[:200])

            # Concurrent clients: every answer right.
            errors = []
            def client(n):
                for _ in range(n):
                    st, b = request(port, "POST", "/v2/models/small/infer", infer_body(x))
                    if st != 200 or not np.array_equal(np.array(json.loads(b)["outputs"][0]["data"], np.float32),
                                                       expected.reshape(-1)):
                        errors.append((st, b[:100]))
            threads = [threading.Thread(target=client, args=(25,)) for _ in range(16)]
            t0 = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            secs = time.monotonic() - t0
            check(f"16 concurrent clients x 25 requests: all right ({400 / secs:.0f} requests/s)", not errors,
                  str(errors[:3]))
            status, metrics = request(port, "GET", "/metrics")
            m = re.search(r'hexir_requests_total\{model="small"\} (\d+)', metrics)
            check("GET /metrics counts the requests", status == 200 and m is not None and int(m.group(1)) >= 400
                  and 'hexir_request_seconds_bucket{model="small",le="+Inf"}' in metrics
                  and 'hexir_arena_bytes{model="slow"}' in metrics, metrics[:300])
        finally:
            server.send_signal(signal.SIGTERM)
            code = server.wait(timeout=60)
        check("SIGTERM when idle: exit 0", code == 0, str(code))

        slow_clients_and_limits(tools, x, expected)

        # A full queue answers 503 at once; SIGTERM under load answers every accepted request.
        server, port = start(tools, "--model", "slow=slow.hxb", "--sessions", "1", "--max-queue", "1",
                             "--threads", "8")
        big = np.ones((256, 1024), np.float32)
        body = infer_body(big)
        statuses, lock = [], threading.Lock()
        def slow_client():
            try:
                st, _ = request(port, "POST", "/v2/models/slow/infer", body, timeout=120)
            except (urllib.error.URLError, ConnectionError, OSError):
                st = "closed"
            with lock:
                statuses.append(st)
        # A burst of 8 (on a loaded machine the clients may trickle in slower than the server
        # answers them: up to three bursts).
        for _ in range(3):
            statuses.clear()
            threads = [threading.Thread(target=slow_client) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if 503 in statuses:
                break
        check("a full queue answers 503 (1 session, queue 1, 8 clients at once)",
              statuses.count(503) >= 1 and statuses.count(200) >= 1 and set(statuses) <= {200, 503},
              str(statuses))
        statuses.clear()
        threads = [threading.Thread(target=slow_client) for _ in range(6)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        server.send_signal(signal.SIGTERM)
        for t in threads:
            t.join()
        code = server.wait(timeout=120)
        check("SIGTERM under load: every request answered or refused, exit 0",
              code == 0 and len(statuses) == 6 and set(statuses) <= {200, 503, "closed"}, f"{code} {statuses}")
    print(f"{len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
