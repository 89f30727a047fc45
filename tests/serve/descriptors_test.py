#!/usr/bin/python3
"""hexir-serve out of file descriptors, as a flood of idle connections leaves it: run with
RLIMIT_NOFILE 256 (soft and hard), a model repository, REST and gRPC.

- --max-connections 1024 is lowered at start to what the limit leaves (with a message);
- 400 idle TCP connections to the gRPC port (gRPC 1.51 has no connection cap) exhaust the
  descriptors: the server does not spin (its CPU time over 2 s stays small), the repository poll
  cannot read the folder but unloads nothing, and once the clients leave a new REST client is
  answered by the repository's model, without a load call;
- 400 idle REST connections: the cap holds, the longest idle ones close, a new client is answered.
Usage: descriptors_test.py --bin BUILD/tools
"""
import argparse
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from buckets import dense_model  # noqa: E402
from checks import check, summary  # noqa: E402
from serving import request  # noqa: E402

LIMIT = 256


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def flood(port, count):
    socks = []
    for _ in range(count):
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=2))
        except OSError:
            break
    return socks


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    tools = os.path.abspath(p.parse_args().bin)
    r = subprocess.run([os.path.join(tools, "hexir-serve"), "--help"], capture_output=True, text=True)
    grpc = "--grpc-port" in r.stdout + r.stderr
    with tempfile.TemporaryDirectory(prefix="hexir-fds-") as tmp:
        rng = np.random.default_rng(5)
        w, b = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
        dense_model(os.path.join(tmp, "m.onnx"), [1], w, b)
        repo = os.path.join(tmp, "models")
        os.makedirs(repo)
        subprocess.run([os.path.join(tools, "hexir-compile"), os.path.join(tmp, "m.onnx"), "-o",
                        os.path.join(repo, "dense.hxb")], check=True)
        x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)
        want = np.maximum(x.astype(np.float64) @ w + b, 0).reshape(-1)
        body = json.dumps({"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": x.ravel().tolist()}]})

        def answered(port):
            try:
                status, text = request(port, "POST", "/v2/models/dense/infer", body, timeout=10)
            except OSError as e:
                return False, str(e)
            ok = status == 200 and np.allclose(json.loads(text)["outputs"][0]["data"], want, atol=1e-4)
            return ok, f"{status} {text[:200]}"

        def limited():
            resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))

        args = [os.path.join(tools, "hexir-serve"), "--port", "0", "--model-repository", repo, "--repository-poll-s",
                "0.2", "--threads", "2", "--idle-timeout", "60"]
        if grpc:
            args += ["--grpc-port", "0"]
        server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limited)
        lines = server.stdout.readline() + (server.stdout.readline() if grpc else "")
        http_port = int(lines.split("listening on 127.0.0.1:")[-1].split()[0])
        grpc_port = int(lines.split("gRPC listening on 127.0.0.1:")[1].split()[0]) if grpc else None
        try:
            ok, detail = answered(http_port)
            check("hexir-serve with RLIMIT_NOFILE 256 answers", ok, detail)
            if grpc:
                socks = flood(grpc_port, 400)
                time.sleep(1.0)  # let gRPC accept them all, and the repository poll a few times
                # A REST client now: its connection waits in the backlog, which kept the listening
                # socket readable while accept failed (EMFILE): epoll woke at once, for ever.
                socks += flood(http_port, 1)
                before = cpu_seconds(server.pid)
                time.sleep(2.0)
                spent = cpu_seconds(server.pid) - before
                check(f"400 idle gRPC connections ({len(socks)} opened): {spent:.2f} s of CPU in 2 s (no spin)",
                      spent < 0.8)
                for s in socks:
                    s.close()
                time.sleep(1.0)
                ok, detail = answered(http_port)
                check("the clients gone: a new REST client is answered by the repository's model, no load call",
                      ok, detail)
            socks = flood(http_port, 400)
            time.sleep(0.5)
            ok, detail = answered(http_port)
            check(f"{len(socks)} idle REST connections: a new client is answered", ok, detail)
            for s in socks:
                s.close()
        finally:
            server.terminate()
            code = server.wait(timeout=60)
            log = server.stderr.read()
        check("SIGTERM: exit 0", code == 0, log[-500:])
        for line in log.splitlines():
            if "model repository" in line:
                print("     server log: " + line)
        check("--max-connections 1024 was lowered to fit RLIMIT_NOFILE, with a message",
              "--max-connections 1024 lowered to 128" in log, log[:500])
        check("no model was unloaded", "unloaded" not in log, log[-800:])
    return summary()


if __name__ == "__main__":
    sys.exit(main())
