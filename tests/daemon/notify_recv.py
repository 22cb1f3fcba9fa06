#!/usr/bin/env python3
"""notify_recv.py - the service manager's end of sd_notify(3) for
test_daemon_systemd.sh: binds an AF_UNIX datagram socket at PATH and
appends every datagram received to OUT as one line (its newlines shown as
'|'), until killed.

    python3 notify_recv.py PATH OUT
"""
import socket
import sys


def main():
    path, out = sys.argv[1], sys.argv[2]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    with open(out, "a", buffering=1, encoding="utf-8") as f:
        f.write("listening\n")
        while True:
            data = sock.recv(65536)
            f.write(data.decode("utf-8", "replace").replace("\n", "|") + "\n")


if __name__ == "__main__":
    main()
