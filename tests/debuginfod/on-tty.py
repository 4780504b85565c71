#!/usr/bin/env python3
"""Runs a command with its standard error on a pseudo-terminal.

  on-tty.py OUTFILE COMMAND [ARG...]

Standard output and error go to the terminal; what the command wrote there
is saved to OUTFILE.  The exit status is the command's.
"""
import os
import pty
import sys


def main():
    out, argv = sys.argv[1], sys.argv[2:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    data = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:   # EIO: the terminal's other side is closed
            break
        if not chunk:
            break
        data += chunk
    _, status = os.waitpid(pid, 0)
    with open(out, "wb") as f:
        f.write(data)
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
