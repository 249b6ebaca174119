#!/usr/bin/env python3
"""A small REAPI worker for Germanium's test cluster (BuildGrid ships none): it speaks the
Bots API (google.devtools.remoteworkers.v1test2) and runs each action's command on this host.
Test support only: production clusters use buildbox, Buildbarn or NativeLink workers
(docs/remote.md).

usage: worker.py ADDRESS [--instance NAME] [--bot-id ID] [--poll SECONDS] [--cache DIR]

One lease at a time. For each ACTIVE lease: fetch the Action, Command and input tree from the
CAS (files through a local cache of blobs, hard-linked into the action's directory, so the
Germanium and Z3 binaries are fetched once per worker), run the command (argv, exact
environment, the action's timeout), upload stdout, stderr and outputs, and report the lease
COMPLETED with result = Any(ActionResult).
SIGTERM/SIGINT: kill the running command, hand the lease back (status UNAVAILABLE, which
BuildGrid requeues at once), report BOT_TERMINATING, exit 0. SIGKILL: BuildGrid notices after
its bot-session-keepalive-timeout and runs the action again elsewhere.
Needs the Python of the buildgrid venv (it imports buildgrid's generated protocol code).
"""
import argparse, hashlib, os, shutil, signal, socket, subprocess, sys, tempfile, threading, time, uuid

import grpc
from google.protobuf import any_pb2, timestamp_pb2
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re, remote_execution_pb2_grpc as re_grpc
from buildgrid._protos.google.bytestream import bytestream_pb2 as bs, bytestream_pb2_grpc as bs_grpc
from buildgrid._protos.google.devtools.remoteworkers.v1test2 import bots_pb2 as bots, bots_pb2_grpc as bots_grpc, worker_pb2
from buildgrid._protos.google.rpc import code_pb2, error_details_pb2, status_pb2

BATCH_LIMIT = 1 << 20  # blobs above this go through ByteStream
ACTIVE, COMPLETED = bots.LeaseState.Value("ACTIVE"), bots.LeaseState.Value("COMPLETED")
running = {}  # "proc": the Popen of the command being run, so shutdown/cancel can kill its process group


class Shutdown(Exception):
    pass


def on_signal(*_):
    raise Shutdown()


def kill_running():
    p = running.get("proc")
    if p and p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)


def log(*a):
    print(time.strftime("%H:%M:%S"), "[worker]", *a, file=sys.stderr, flush=True)


class MissingBlob(LookupError):
    def __init__(self, d):
        super().__init__(f"blobs/{d.hash}/{d.size_bytes}")

    def status(self):  # REAPI: FAILED_PRECONDITION + PreconditionFailure(MISSING) so clients re-upload
        pf = error_details_pb2.PreconditionFailure()
        pf.violations.add(type="MISSING", subject=str(self))
        st = status_pb2.Status(code=code_pb2.FAILED_PRECONDITION, message=f"missing input {self}")
        st.details.add().Pack(pf)
        return st


class Cas:
    def __init__(self, channel, instance):
        self.inst, self.cas = instance, re_grpc.ContentAddressableStorageStub(channel)
        self.bs = bs_grpc.ByteStreamStub(channel)

    def _res(self, *parts):  # ByteStream resource names: "[inst/]blobs/h/s", "[inst/]uploads/u/blobs/h/s"
        return "/".join(([self.inst] if self.inst else []) + list(parts))

    def read(self, d):
        if d.size_bytes == 0:
            return b""
        if d.size_bytes > BATCH_LIMIT:
            name = self._res("blobs", d.hash, str(d.size_bytes))
            try:
                return b"".join(r.data for r in self.bs.Read(bs.ReadRequest(resource_name=name), timeout=300))
            except grpc.RpcError as e:
                if e.code() == grpc.StatusCode.NOT_FOUND:
                    raise MissingBlob(d) from e
                raise
        resp = self.cas.BatchReadBlobs(re.BatchReadBlobsRequest(instance_name=self.inst, digests=[d]), timeout=60)
        r = resp.responses[0]
        if r.status.code == code_pb2.NOT_FOUND:
            raise MissingBlob(d)
        if r.status.code != code_pb2.OK:
            raise IOError(f"reading blobs/{d.hash}/{d.size_bytes}: {r.status.message}")
        return r.data

    def read_msg(self, d, cls):
        m = cls()
        m.ParseFromString(self.read(d))
        return m

    def write(self, data):
        d = re.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))
        if len(data) > BATCH_LIMIT:
            name = self._res("uploads", str(uuid.uuid4()), "blobs", d.hash, str(d.size_bytes))
            chunks = (bs.WriteRequest(resource_name=name if off == 0 else "", write_offset=off,
                                      data=data[off:off + BATCH_LIMIT], finish_write=off + BATCH_LIMIT >= len(data))
                      for off in range(0, len(data), BATCH_LIMIT))
            self.bs.Write(chunks, timeout=300)
        elif data:
            req = re.BatchUpdateBlobsRequest(instance_name=self.inst)
            req.requests.add(digest=d, data=data)
            r = self.cas.BatchUpdateBlobs(req, timeout=60).responses[0]
            if r.status.code != code_pb2.OK:
                raise IOError(f"upload failed: {r.status.message}")
        return d


def cached_blob(cas, digest, executable, cache_dir):
    """The path of `digest` in the local blob cache, fetched on first use."""
    path = os.path.join(cache_dir, f"{digest.hash}-{digest.size_bytes}{'-x' if executable else ''}")
    if not os.path.exists(path):
        part = f"{path}.{uuid.uuid4().hex}.part"
        with open(part, "wb") as fh:
            fh.write(cas.read(digest))
        os.chmod(part, 0o755 if executable else 0o644)
        os.replace(part, path)
    return path


def materialise(cas, dir_digest, path, cache_dir):
    os.makedirs(path, exist_ok=True)
    d = cas.read_msg(dir_digest, re.Directory)
    for f in d.files:
        os.link(cached_blob(cas, f.digest, f.is_executable, cache_dir), os.path.join(path, f.name))
    for s in d.symlinks:
        os.symlink(s.target, os.path.join(path, s.name))
    for sub in d.directories:
        materialise(cas, sub.digest, os.path.join(path, sub.name), cache_dir)


def upload_dir(cas, path, children):
    """Upload a directory tree; returns its Directory message (children collected for the Tree)."""
    d = re.Directory()
    for name in sorted(os.listdir(path)):
        p = os.path.join(path, name)
        if os.path.islink(p):
            d.symlinks.add(name=name, target=os.readlink(p))
        elif os.path.isdir(p):
            sub = upload_dir(cas, p, children)
            children.append(sub)
            d.directories.add(name=name, digest=cas.write(sub.SerializeToString()))
        else:
            with open(p, "rb") as fh:
                d.files.add(name=name, digest=cas.write(fh.read()), is_executable=os.access(p, os.X_OK))
    return d


def execute(cas, action, bot_id, cache_dir):
    meta = re.ExecutedActionMetadata(worker=bot_id)
    meta.worker_start_timestamp.GetCurrentTime()
    root = tempfile.mkdtemp(prefix="action-", dir=os.path.dirname(cache_dir))
    try:
        cmd = cas.read_msg(action.command_digest, re.Command)
        meta.input_fetch_start_timestamp.GetCurrentTime()
        materialise(cas, action.input_root_digest, root, cache_dir)
        meta.input_fetch_completed_timestamp.GetCurrentTime()
        cwd = os.path.join(root, cmd.working_directory)
        outputs = list(cmd.output_paths) or list(cmd.output_files) + list(cmd.output_directories)
        for o in outputs:  # REAPI: the worker creates parent dirs of outputs
            os.makedirs(os.path.dirname(os.path.join(cwd, o)), exist_ok=True)
        env = {e.name: e.value for e in cmd.environment_variables}
        timeout = action.timeout.seconds or None
        meta.execution_start_timestamp.GetCurrentTime()
        res = re.ActionResult()
        try:
            p = running["proc"] = subprocess.Popen(list(cmd.arguments), cwd=cwd, env=env, stdout=subprocess.PIPE,
                                                   stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                                   start_new_session=True)
            try:
                out, err = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                kill_running()
                p.communicate()
                return None, status_pb2.Status(code=code_pb2.DEADLINE_EXCEEDED, message=f"timeout after {timeout}s")
            res.exit_code = p.returncode
        except OSError as e:  # e.g. binary not found: report as exit 127 like a shell would
            res.exit_code, out, err = 127, b"", f"worker: cannot exec {list(cmd.arguments)}: {e}\n".encode()
        meta.execution_completed_timestamp.GetCurrentTime()
        meta.output_upload_start_timestamp.GetCurrentTime()
        res.stdout_digest.CopyFrom(cas.write(out))
        res.stderr_digest.CopyFrom(cas.write(err))
        for o in outputs:
            p = os.path.join(cwd, o)
            if os.path.islink(p):
                res.output_symlinks.add(path=o, target=os.readlink(p))
            elif os.path.isdir(p):
                children = []
                tree = re.Tree(root=upload_dir(cas, p, children), children=children)
                res.output_directories.add(path=o, tree_digest=cas.write(tree.SerializeToString()))
            elif os.path.isfile(p):
                with open(p, "rb") as fh:
                    res.output_files.add(path=o, digest=cas.write(fh.read()), is_executable=os.access(p, os.X_OK))
        meta.output_upload_completed_timestamp.GetCurrentTime()
        meta.worker_completed_timestamp.GetCurrentTime()
        res.execution_metadata.CopyFrom(meta)
        return res, status_pb2.Status(code=code_pb2.OK)
    except MissingBlob as e:
        return None, e.status()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_lease(cas, lease, bot_id, cache_dir):
    """Runs in a thread; fills lease.result / lease.status and sets state COMPLETED."""
    try:
        if lease.payload.Is(re.Action.DESCRIPTOR):
            action = re.Action()
            lease.payload.Unpack(action)
        else:  # BuildGrid may send just the Action digest
            dg = re.Digest()
            lease.payload.Unpack(dg)
            action = cas.read_msg(dg, re.Action)
        res, status = execute(cas, action, bot_id, cache_dir)
    except MissingBlob as e:
        res, status = None, e.status()
    except Exception as e:  # noqa: BLE001 - report any worker bug as INTERNAL
        res, status = None, status_pb2.Status(code=code_pb2.INTERNAL, message=f"worker error: {e!r}")
    if res is not None:
        lease.result.Pack(res)
    lease.status.CopyFrom(status)
    lease.state = COMPLETED
    log(f"lease {lease.id} done: status={code_pb2.Code.Name(status.code)}"
        + (f" exit={res.exit_code}" if res else f" {status.message}"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("address")
    ap.add_argument("--instance", default="")
    ap.add_argument("--bot-id", default=f"{socket.gethostname()}-{os.getpid()}")
    ap.add_argument("--poll", type=float, default=15.0, help="UpdateBotSession long-poll deadline (s)")
    ap.add_argument("--cache", default=None, help="directory of the local blob cache (default: a new one)")
    a = ap.parse_args()
    cache_dir = a.cache or os.path.join(tempfile.mkdtemp(prefix="worker-"), "blobs")
    os.makedirs(cache_dir, exist_ok=True)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    channel = grpc.insecure_channel(a.address)
    stub, cas = bots_grpc.BotsStub(channel), Cas(channel, a.instance)
    worker = worker_pb2.Worker()
    dev = worker.devices.add(handle=a.bot_id)  # primary device properties are matched against Platform
    dev.properties.add(key="OSFamily", value="linux")
    dev.properties.add(key="ISA", value="x86-64")
    session, job = None, None  # job = (lease, thread)
    while True:
        try:
            if session is None:
                session = stub.CreateBotSession(bots.CreateBotSessionRequest(
                    parent=a.instance, bot_session=bots.BotSession(bot_id=a.bot_id, status=bots.BotStatus.Value("OK"),
                                                                    worker=worker)), timeout=a.poll)
                log(f"session {session.name} bot_id={a.bot_id}")
            else:
                if job:  # report progress/result of our lease in the session we send back
                    job[1].join(timeout=2.0)
                    del session.leases[:]
                    session.leases.append(job[0])
                    if job[0].state == COMPLETED:
                        job = None
                session = stub.UpdateBotSession(bots.UpdateBotSessionRequest(name=session.name, bot_session=session),
                                                timeout=a.poll)
            if job and job[0].id not in {l.id for l in session.leases}:
                log(f"lease {job[0].id} was withdrawn by the server (cancelled/reassigned): killing it")
                kill_running()
                job = None
            for lease in session.leases:
                if job is None and lease.state == ACTIVE:
                    log(f"lease {lease.id} started")
                    mine = bots.Lease()
                    mine.CopyFrom(lease)
                    job = (mine, threading.Thread(target=run_lease, args=(cas, mine, a.bot_id, cache_dir), daemon=True))
                    job[1].start()
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                continue  # long poll expired, just poll again
            log(f"rpc error {e.code().name}: {e.details()}; retrying in 1s")
            if e.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND):
                session = None  # server forgot our session (restart / reaped): start a new one
            time.sleep(1)
        except Shutdown:
            break
    # graceful exit: give an unfinished lease back for immediate requeue, and say we are terminating
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    finished = bool(job) and job[0].state == COMPLETED  # decide before killing: a killed run is not a result
    kill_running()
    if job:
        job[1].join(timeout=5)  # let it clean up its temp dir
    if session is not None:
        del session.leases[:]
        if job:
            session.leases.append(job[0] if finished else bots.Lease(
                id=job[0].id, state=COMPLETED,
                status=status_pb2.Status(code=code_pb2.UNAVAILABLE, message="worker shutting down")))
        session.status = bots.BotStatus.Value("BOT_TERMINATING")
        try:
            stub.UpdateBotSession(bots.UpdateBotSessionRequest(name=session.name, bot_session=session), timeout=3)
        except grpc.RpcError as e:
            log(f"final UpdateBotSession failed: {e.code().name}")
    log("stopped")


if __name__ == "__main__":
    main()
