#!/usr/bin/env python3
"""Starts and stops Germanium's private REAPI test cluster: a PostgreSQL cluster on a loopback
port (BuildGrid's scheduler keeps its jobs there), a BuildGrid server with an in-memory CAS
and action cache, and N test workers (worker.py). Everything lives under DIR; nothing is
installed or left running elsewhere.

usage: cluster.py up DIR [--workers N] [--instance NAME]   start; writes DIR/cluster.json
       cluster.py worker DIR                               start one more worker
       cluster.py down DIR                                 stop everything, remove DIR's state

Run with the Python of the buildgrid venv (.tools/buildgrid, made by scripts/remote-test).
cluster.json: {"url": "grpc://127.0.0.1:PORT", "instance": ..., "server": PID,
"workers": [PID, ...], "postgres": {"data": ..., "port": ...}}.
"""
import argparse, json, os, pwd, shutil, signal, socket, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
BIN = os.path.dirname(sys.executable)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres_user():
    """PostgreSQL refuses to run as root: its server runs as `nobody` then."""
    if os.getuid() != 0:
        return [], None
    user = pwd.getpwnam("nobody")
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"], user


def log(*a):
    print("cluster:", *a, file=sys.stderr, flush=True)


def start_postgres(d):
    prefix, user = as_postgres_user()
    data, sock = os.path.join(d, "pg", "data"), os.path.join(d, "pg", "sock")
    os.makedirs(data)
    os.makedirs(sock)
    if user:
        os.chmod(d, 0o755)  # the server's user must reach its data directory
        for p in [os.path.join(d, "pg"), data, sock]:
            os.chown(p, user.pw_uid, user.pw_gid)
    port = free_port()
    with open(os.path.join(d, "initdb.log"), "w") as out:
        subprocess.run(prefix + [f"{PGBIN}/initdb", "-D", data, "-U", "bgd", "--auth=trust", "-E", "UTF8",
                                 "--no-locale"], check=True, stdout=out, stderr=out, cwd="/")
    options = (f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={sock} -c fsync=off "
               "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
    pglog = os.path.join(d, "pg", "postgres.log")
    subprocess.run(prefix + [f"{PGBIN}/pg_ctl", "-D", data, "-l", pglog, "-w", "-t", "60", "-o", options, "start"],
                   check=True, stdout=subprocess.DEVNULL, cwd="/")
    subprocess.run([f"{PGBIN}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "bgd", "bgd"], check=True)
    return {"data": data, "port": port, "url": f"postgresql://bgd@127.0.0.1:{port}/bgd"}


def stop_postgres(pg):
    prefix, _ = as_postgres_user()
    subprocess.run(prefix + [f"{PGBIN}/pg_ctl", "-D", pg["data"], "-m", "immediate", "-w", "-t", "30", "stop"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")


def server_config(port, pg_url, instance):
    return f"""description: Germanium's test cluster (in-memory CAS and action cache, SQL scheduler)
server:
  - !channel
    address: "127.0.0.1:{port}"
    insecure-mode: true
authorization:
  method: none
monitoring:
  enabled: false
connections:
  - !sql-connection &sql
    connection-string: {pg_url}
    pool-size: 5
    pool-timeout: 30
    max-overflow: 10
storages:
  - !lru-storage &cas
    size: 2048M
caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 100000
    allow-updates: true
    cache-failed-actions: false
schedulers:
  - !sql-scheduler &sched
    sql: *sql
    storage: *cas
    action-cache: *ac
    bot-session-keepalive-timeout: 10
    session-expiry-timer-interval: 1
    max-execution-timeout: 3600
    poll-interval: 0.1
    bot-poll-interval: 0.1
    assigners:
      - !priority-age-assigner
        count: 1
        interval: 0.05
        jitter-factor: 0.1
        failure-backoff: 0.5
        priority-assignment-percentage: 100
instances:
  - name: "{instance}"
    services:
      - !action-cache
        cache: *ac
      - !execution
        scheduler: *sched
        operation-stream-keepalive-timeout: 10
      - !cas
        storage: *cas
      - !bytestream
        storage: *cas
thread-pool-size: 40
"""


def ready(address, instance):
    """The server answers GetCapabilities (an open port alone is not enough)."""
    import grpc
    from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re, \
        remote_execution_pb2_grpc as re_grpc
    try:
        with grpc.insecure_channel(address) as ch:
            re_grpc.CapabilitiesStub(ch).GetCapabilities(re.GetCapabilitiesRequest(instance_name=instance), timeout=2)
        return True
    except grpc.RpcError:
        return False


def spawn(argv, logfile):
    out = open(logfile, "ab")
    return subprocess.Popen(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True).pid


def start_worker(d, state):
    n = len(state["workers"])
    cache = os.path.join(d, f"worker-{n}", "blobs")
    os.makedirs(cache, exist_ok=True)
    pid = spawn([sys.executable, os.path.join(HERE, "worker.py"), state["address"], "--instance", state["instance"],
                 "--bot-id", f"test-worker-{n}-{os.getpid()}", "--poll", "5", "--cache", cache],
                os.path.join(d, f"worker-{n}.log"))
    state["workers"].append(pid)
    return pid


def save(d, state):
    with open(os.path.join(d, "cluster.json.part"), "w") as fh:
        json.dump(state, fh)
    os.replace(os.path.join(d, "cluster.json.part"), os.path.join(d, "cluster.json"))


def load(d):
    with open(os.path.join(d, "cluster.json")) as fh:
        return json.load(fh)


def up(d, workers, instance):
    os.makedirs(d, exist_ok=True)
    state = {"instance": instance, "workers": [], "server": None, "postgres": None}
    started = time.time()
    state["postgres"] = start_postgres(d)
    save(d, state)
    with open(os.path.join(d, "migrate.log"), "w") as out:
        subprocess.run([os.path.join(BIN, "bgd"), "migrate", "apply", state["postgres"]["url"]], check=True,
                       stdout=out, stderr=out)
    port = free_port()
    state["address"] = f"127.0.0.1:{port}"
    state["url"] = f"grpc://127.0.0.1:{port}"
    config = os.path.join(d, "server.yml")
    with open(config, "w") as fh:
        fh.write(server_config(port, state["postgres"]["url"], instance))
    state["server"] = spawn([os.path.join(BIN, "bgd"), "server", "start", config], os.path.join(d, "server.log"))
    save(d, state)
    deadline = time.time() + 60
    while not ready(state["address"], instance):
        if time.time() > deadline:
            raise SystemExit(f"cluster: the server did not answer within 60 s (see {d}/server.log)")
        try:
            os.kill(state["server"], 0)
        except ProcessLookupError:
            raise SystemExit(f"cluster: the server died (see {d}/server.log)")
        time.sleep(0.2)
    for _ in range(workers):
        start_worker(d, state)
    save(d, state)
    log(f"up at {state['url']} with {workers} workers in {time.time() - started:.1f} s")
    print(json.dumps(state))


def stop_pid(pid, grace=5.0):
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.time() + grace
    while time.time() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def down(d):
    try:
        state = load(d)
    except FileNotFoundError:
        return
    for pid in state["workers"]:
        stop_pid(pid)
    if state["server"]:
        stop_pid(state["server"])
    if state["postgres"]:
        stop_postgres(state["postgres"])
    shutil.rmtree(os.path.join(d, "pg"), ignore_errors=True)
    os.remove(os.path.join(d, "cluster.json"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["up", "down", "worker"])
    ap.add_argument("dir")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--instance", default="")
    a = ap.parse_args()
    d = os.path.abspath(a.dir)
    if a.command == "up":
        try:
            up(d, a.workers, a.instance)
        except BaseException:
            down(d)
            raise
    elif a.command == "down":
        down(d)
    else:
        state = load(d)
        pid = start_worker(d, state)
        save(d, state)
        print(pid)


if __name__ == "__main__":
    main()
