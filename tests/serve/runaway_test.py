#!/usr/bin/python3
"""hexir-serve against requests that would run for ever: an ONNX Loop whose trip count comes from
the request (2^62 trips), served with one session.

- --request-timeout: the runaway request gets 504 after about its timeout, and a normal request
  sent behind it is answered right after, correctly;
- a client that hangs up: its run stops, and the next request is answered;
- SIGTERM with a runaway run in flight: the server exits 0 within the grace (plus a margin);
- gRPC (when built with it): a client deadline gives DEADLINE_EXCEEDED, a call the client
  cancels stops its run, and SIGTERM with a runaway call exits within the grace.
Usage: runaway_test.py --bin BUILD/tools
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, HERE)
from checks import check, summary  # noqa: E402
from runaway_runs import loop_model  # noqa: E402
from serving import grpc_messages, request, start  # noqa: E402

MARGIN = 4.0  # seconds a stop may take past its limit on a loaded CI machine


def body(m):
    return json.dumps({"inputs": [{"name": "x", "shape": [4], "datatype": "FP32", "data": [0, 1, 2, 3]},
                                  {"name": "m", "shape": [], "datatype": "INT64", "data": [m]},
                                  {"name": "c", "shape": [], "datatype": "BOOL", "data": [True]}]})


def answer_of(text):
    try:
        return json.loads(text)["outputs"][0]["data"]
    except (ValueError, KeyError, IndexError):
        return None


def terminate(server):
    """(exit code or None, seconds) of SIGTERM to a server with a 2 s grace."""
    t0 = time.monotonic()
    server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(timeout=2 + MARGIN + 30)
    except subprocess.TimeoutExpired:
        code = None
    return code, time.monotonic() - t0


def raw_post(port, m):
    """A request sent on a socket the caller may close before the answer."""
    payload = body(m).encode()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v2/models/loop/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
    return s


def http_checks(tools, exe):
    infer = "/v2/models/loop/infer"
    server, port, line = start(tools, "--model", f"loop={exe}", "--sessions", "1", "--threads", "4",
                               "--request-timeout", "1", "--shutdown-grace", "2")
    check("hexir-serve starts with --request-timeout", port is not None, line)
    if port is None:
        return
    try:
        results = {}

        def runaway():
            t0 = time.monotonic()
            results["runaway"] = request(port, "POST", infer, body(2**62), timeout=60) + (time.monotonic() - t0,)

        thread = threading.Thread(target=runaway)
        thread.start()
        time.sleep(0.3)  # the runaway holds the only session
        t0 = time.monotonic()
        status, text = request(port, "POST", infer, body(5), timeout=60)
        waited = time.monotonic() - t0
        thread.join()
        code, rtext, rsecs = results["runaway"]
        check(f"a 2^62-trip request: 504 after {rsecs:.2f} s (--request-timeout 1)",
              code == 504 and "passed its deadline" in rtext and rsecs < 1 + MARGIN, f"{code} {rtext}")
        check(f"the request behind it: answered after {waited:.2f} s, 0..3 + 5",
              status == 200 and answer_of(text) == [5, 6, 7, 8] and waited < 1 + MARGIN, f"{status} {text[:200]}")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    # No timeout: a client that hangs up stops its run; SIGTERM stops one in flight.
    server, port, line = start(tools, "--model", f"loop={exe}", "--sessions", "1", "--threads", "4",
                               "--request-timeout", "0", "--shutdown-grace", "2")
    check("hexir-serve starts with --request-timeout 0", port is not None, line)
    if port is None:
        return
    try:
        s = raw_post(port, 2**62)
        time.sleep(0.5)
        s.close()
        t0 = time.monotonic()
        status, text = request(port, "POST", infer, body(3), timeout=30)
        waited = time.monotonic() - t0
        check(f"a client that hangs up stops its run: the next request answered after {waited:.2f} s",
              status == 200 and answer_of(text) == [3, 4, 5, 6] and waited < MARGIN, f"{status} {text[:200]}")
        s = raw_post(port, 2**62)
        time.sleep(0.5)
        code, waited = terminate(server)
        s.close()
        check(f"SIGTERM with a runaway run in flight: exit {code} after {waited:.2f} s (grace 2 s)",
              code == 0 and waited < 2 + MARGIN)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def grpc_checks(tools, exe, tmp):
    try:
        import grpc
    except ImportError:
        print("skip gRPC: python3-grpcio is not installed")
        return
    r = subprocess.run([os.path.join(tools, "hexir-serve"), "--help"], capture_output=True, text=True)
    if "--grpc-port" not in r.stdout + r.stderr:
        print("skip gRPC: this hexir-serve was built without it")
        return
    pb = grpc_messages(ROOT, tmp)
    import numpy as np

    server = subprocess.Popen([os.path.join(tools, "hexir-serve"), "--port", "0", "--grpc-port", "0", "--model",
                               f"loop={exe}", "--sessions", "1", "--request-timeout", "0", "--shutdown-grace", "2"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    g = re.search(r"gRPC listening on 127.0.0.1:(\d+)", server.stdout.readline())
    server.stdout.readline()
    check("hexir-serve --grpc-port 0 starts", g is not None)
    if g is None:
        server.kill()
        return
    channel = grpc.insecure_channel(f"127.0.0.1:{g.group(1)}")
    infer = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                                request_serializer=lambda m: m.SerializeToString(),
                                response_deserializer=pb.ModelInferResponse.FromString)

    def message(m):
        q = pb.ModelInferRequest(model_name="loop")
        for name, dtype, shape, value in (("x", "FP32", [4], np.arange(4, dtype=np.float32)),
                                          ("m", "INT64", [], np.array(m, np.int64)),
                                          ("c", "BOOL", [], np.array(True))):
            q.inputs.add(name=name, datatype=dtype, shape=shape)
            q.raw_input_contents.append(value.tobytes())
        return q

    try:
        t0 = time.monotonic()
        try:
            infer(message(2**62), timeout=0.5)
            code = None
        except grpc.RpcError as e:
            code = e.code()
        first = time.monotonic() - t0
        # The next call must find the session free: the run stopped at the client's deadline.
        t0 = time.monotonic()
        out = infer(message(4), timeout=30)
        waited = time.monotonic() - t0
        got = np.frombuffer(out.raw_output_contents[0], np.float32).tolist()
        check(f"gRPC: a client deadline of 0.5 s: {code} after {first:.2f} s; the next call answered after "
              f"{waited:.2f} s", code == grpc.StatusCode.DEADLINE_EXCEEDED and got == [4, 5, 6, 7] and waited < MARGIN)
        future = infer.future(message(2**62), timeout=600)
        time.sleep(0.5)
        future.cancel()
        t0 = time.monotonic()
        out = infer(message(2), timeout=30)
        waited = time.monotonic() - t0
        got = np.frombuffer(out.raw_output_contents[0], np.float32).tolist()
        check(f"gRPC: a cancelled call stops its run: the next answered after {waited:.2f} s",
              got == [2, 3, 4, 5] and waited < MARGIN)
        future = infer.future(message(2**62), timeout=600)
        time.sleep(0.5)
        code, waited = terminate(server)
        check(f"gRPC: SIGTERM with a runaway call in flight: exit {code} after {waited:.2f} s (grace 2 s)",
              code == 0 and waited < 2 + MARGIN)
    finally:
        channel.close()
        if server.poll() is None:
            server.kill()
            server.wait()


def max_trips_checks(tools, exe):
    """--max-trips: a request asking for more trips is a 400 at once; one under the cap runs."""
    server, port, line = start(tools, "--model", f"loop={exe}", "--sessions", "1", "--max-trips", "1000")
    check("hexir-serve starts with --max-trips 1000", port is not None, line)
    if port is None:
        return
    try:
        t0 = time.monotonic()
        status, text = request(port, "POST", "/v2/models/loop/infer", body(2 ** 62), timeout=30)
        seconds = time.monotonic() - t0
        check(f"a 2^62-trip request with --max-trips 1000: 400 after {seconds:.2f} s, naming the cap",
              status == 400 and "over the cap of 1000" in text and seconds < 5, f"{status} {text}")
        status, text = request(port, "POST", "/v2/models/loop/infer", body(5), timeout=30)
        check("a 5-trip request: answered, 0..3 + 5", status == 200 and answer_of(text) == [5, 6, 7, 8],
              f"{status} {text}")
    finally:
        server.terminate()
        server.wait(timeout=30)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    tools = p.parse_args().bin
    with tempfile.TemporaryDirectory(prefix="hexir-runaway-") as tmp:
        onnx.save(loop_model(), os.path.join(tmp, "loop.onnx"))
        exe = os.path.join(tmp, "loop.hxb")
        subprocess.run([os.path.join(tools, "hexir-compile"), os.path.join(tmp, "loop.onnx"), "-o", exe], check=True)
        http_checks(tools, exe)
        max_trips_checks(tools, exe)
        grpc_checks(tools, exe, tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
