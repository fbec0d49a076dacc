"""The cells of issue 30's privilege attacks, run by a host process that may be another uid.

``python privilege_attacks.py`` starts ``Kernel(sandbox="required")`` as whoever runs it, and its cells try
what a hostile model would: keep capabilities, open global sysctls and ``/proc/sysrq-trigger`` for writing
(opened, never written), plant a set-uid copy of ``id`` in the workdir (B1) and open a Unix-socket listener
there for other local users (B12). It prints one ``ATTACKS <json>`` line, waits for a line on stdin (the test
acts as another user meanwhile), then prints ``AFTER <json>`` (what reached the listener) and shuts down.
"""

from __future__ import annotations

import json
import sys

from spatialclaw import Kernel

# Global kernel settings a cell must not be able to open for writing (B2); opened and closed, never written.
WRITE_TARGETS = (
    "/proc/sys/kernel/core_pattern",
    "/proc/sys/kernel/core_uses_pid",
    "/proc/sys/kernel/panic",
    "/proc/sys/kernel/pid_max",
    "/proc/sys/fs/file-max",
    "/proc/sys/vm/overcommit_memory",
    "/proc/sysrq-trigger",
    "/proc/irq/default_smp_affinity",
)

PRIVILEGES = f"""
import errno, json, os
status = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines() if line.startswith('Cap'))
opened = {{}}
for path in {WRITE_TARGETS!r}:
    try:
        os.close(os.open(path, os.O_WRONLY))
        opened[path] = 'opened for writing'
    except OSError as error:
        opened[path] = errno.errorcode.get(error.errno, str(error.errno))
mounts = [line.split() for line in open('/proc/self/mountinfo')]
writable = [m[4] + ' ' + m[5] for m in mounts if 'rw' in m[5].split(',')]
print('PROBE', json.dumps({{'caps': {{k: v.strip() for k, v in status.items()}}, 'opened': opened,
                           'writable_mounts': writable, 'uid': os.getuid()}}))
"""

# B1, as reported: the cell owns its workdir, opens it to everyone and plants a set-uid program there.
SETUID_PLANT = """
import json, os, shutil
wd = os.getcwd()
os.chmod(wd, 0o755)
shutil.copy('/usr/bin/id', wd + '/rootid')
try:
    os.chmod(wd + '/rootid', 0o4755)
    outcome = oct(os.stat(wd + '/rootid').st_mode)
except OSError as error:
    outcome = repr(error)
print('PROBE', json.dumps({'planted': wd + '/rootid', 'chmod': outcome, 'cwd': wd}))
"""

# B12, as reported: a listener in the workdir, open to everyone, that answers and keeps what it is sent.
LISTENER = """
import json, os, socket, threading
wd = os.getcwd(); os.chmod(wd, 0o777); path = wd + '/backdoor.sock'
srv = socket.socket(socket.AF_UNIX); srv.bind(path); os.chmod(path, 0o777); srv.listen(4)
def serve():
    c, _ = srv.accept(); c.sendall(b'hello from inside the sandbox\\n'); open('from_outside.txt', 'wb').write(c.recv(200))
threading.Thread(target=serve, daemon=True).start()
print('PROBE', json.dumps({'socket': path}))
"""

RECEIVED = """
import json, os, time
time.sleep(0.2)
print('PROBE', json.dumps({'received': open('from_outside.txt').read() if os.path.exists('from_outside.txt') else None}))
"""


def probe(kernel: Kernel, code: str) -> dict[str, object]:
    result = kernel.execute(code, timeout=60)
    lines = [line for line in result.stdout.splitlines() if line.startswith("PROBE ")]
    if result.status != "ok" or not lines:
        raise SystemExit(f"the attack cell failed: {result.to_text()}")
    found: dict[str, object] = json.loads(lines[-1][len("PROBE ") :])
    return found


def main() -> None:
    with Kernel(sandbox="required", memory_limit_mb=1024) as kernel:
        report = {
            "sandbox": kernel.sandbox,
            "workdir": str(kernel.workdir),
            **probe(kernel, PRIVILEGES),
            **probe(kernel, SETUID_PLANT),
            **probe(kernel, LISTENER),
        }
        print("ATTACKS " + json.dumps(report), flush=True)
        sys.stdin.readline()
        print("AFTER " + json.dumps(probe(kernel, RECEIVED)), flush=True)


if __name__ == "__main__":
    main()
