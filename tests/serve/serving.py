"""What the hexir-serve test scripts share: starting a server on a free port, and requests."""
import os
import re
import subprocess
import urllib.error
import urllib.request


def start(tools, *args, stderr=subprocess.STDOUT):
    """Starts hexir-serve with `args` on a free port: (process, port, its first line), port None
    when it did not start (then the process has exited and the line holds its output)."""
    p = subprocess.Popen([os.path.join(tools, "hexir-serve"), "--port", "0", *args], stdout=subprocess.PIPE,
                         stderr=stderr, text=True)
    line = p.stdout.readline()
    if "gRPC listening" in line:  # --grpc-port: its line comes first
        line += p.stdout.readline()
    m = re.search(r"(?m)^hexir-serve: listening on 127.0.0.1:(\d+)", line)
    if not m:
        p.wait(timeout=30)
        return p, None, line + p.stdout.read()
    return p, int(m.group(1)), line


def request(port, method, path, body=None, timeout=60):
    """(status, body text) of a request to the server on `port`; HTTP errors are answers too."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body.encode() if body is not None else None,
                                 method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
