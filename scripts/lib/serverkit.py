"""Helpers for scripts that drive real `ordersafe serve` processes over loopback."""
import json, os, socket, subprocess, sys, time, urllib.error, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_ordersafe(product="ordersafe"):
    """Builds an executable of the server package (Server/; debug; `ordersafe` unless named) and returns its path."""
    # The server's allocator, jemalloc, is Debian's libjemalloc-dev (Server/Package.swift).
    subprocess.run(["bash", "-c", "source scripts/lib/packages.sh && debian_packages libjemalloc-dev"], cwd=ROOT, check=True)
    build = subprocess.run(["swift", "build", "--package-path", "Server", "--product", product], cwd=ROOT, capture_output=True, text=True)
    if build.returncode != 0:
        sys.exit(build.stdout + build.stderr)
    bin_path = subprocess.run(["swift", "build", "--package-path", "Server", "--show-bin-path"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    return os.path.join(bin_path, product)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(method, url, token=None, body=None):
    """Returns (status, decoded JSON body)."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


class Server:
    """One `ordersafe serve` process on a free loopback port; stops with SIGTERM and checks the clean exit."""

    def __init__(self, binary, env):
        self.binary, self.env = binary, env
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([binary, "serve", "--port", str(self.port)], env=env)

    def wait_ready(self):
        try:
            return self.ready()
        except RuntimeError as error:
            sys.exit(str(error))

    def ready(self):
        """Waits for /readyz; RuntimeError if the process exits or 30 s pass."""
        for _ in range(300):
            if self.proc.poll() is not None:
                raise RuntimeError(f"server at {self.base} exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.base + "/readyz", timeout=1) as resp:
                    if resp.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server at {self.base} never became ready")

    def kill(self):
        """SIGKILL: nothing of the process runs after it (no graceful shutdown, no flush)."""
        self.proc.kill()
        self.proc.wait()

    def restart(self):
        """A new process on the same port, environment and data (after kill()); waits until it is ready."""
        self.proc = subprocess.Popen([self.binary, "serve", "--port", str(self.port)], env=self.env)
        return self.ready()

    def token(self, user):
        return subprocess.run([self.binary, "token", "--user", user], env=self.env, check=True,
                              capture_output=True, text=True).stdout.strip()

    def stop(self):
        """SIGTERM, then the exit code (0 is a graceful shutdown)."""
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return "killed after 20 s"
