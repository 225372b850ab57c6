#!/usr/bin/env python3
"""Helpers of scripts/test-image.sh (the standard library only, no YAML package).

  inputs ACTION_YML TOKEN    INPUT_<NAME>=<default> for every input of action.yml, as the runner
                             sets them (name uppercased, hyphens kept; `${{ github.token }}`
                             evaluated to TOKEN)
  outputs ACTION_YML         the declared output names, one a line
  parse-outputs FILE         a $GITHUB_OUTPUT file (`name=value` and `name<<DELIM` entries) as
                             `name<TAB>value` lines, the last value of a name winning; exits 1
                             on a malformed file
  hang-api PORT_FILE SEEN    a fake GitHub API on 127.0.0.1 that reads requests and never
                             answers: writes its port to PORT_FILE, each request line to SEEN
  first-request RUNS CMD...  starts CMD RUNS times (`{port}` in CMD replaced by a fresh
                             listener's port on 127.0.0.1) and prints, per run, the
                             milliseconds from the start to the first request byte
"""
import os
import re
import socket
import subprocess
import sys
import threading
import time


def top_level_block(path, key):
    """The `name:` entries under `key:` (two-space indent) with their four-space fields."""
    entries, current, inside = {}, None, False
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if re.match(r"^\S", line):
                inside = line.startswith(f"{key}:")
                current = None
                continue
            if not inside or not line.strip() or line.lstrip().startswith("#"):
                continue
            entry = re.match(r"^  ([A-Za-z0-9_-]+):\s*$", line)
            if entry:
                current = entry.group(1)
                entries[current] = {}
                continue
            field = re.match(r"^    ([a-z-]+):\s?(.*)$", line)
            if field and current is not None:
                entries[current][field.group(1)] = unquote(field.group(2))
    return entries


def unquote(value):
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def inputs(path, token):
    for name, fields in top_level_block(path, "inputs").items():
        default = fields.get("default", "")
        default = re.sub(r"\$\{\{\s*github\.token\s*\}\}", token, default)
        if "${{" in default or "\n" in default:
            sys.exit(f"input {name}: cannot evaluate the default {default!r}")
        print(f"INPUT_{name.upper()}={default}")


def outputs(path):
    for name in top_level_block(path, "outputs"):
        print(name)


def parse_outputs(path):
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    values, index = {}, 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            while True:
                if index >= len(lines):
                    sys.exit(f"{path}: output {name!r} is not closed by its delimiter")
                if lines[index] == delimiter:
                    index += 1
                    break
                value.append(lines[index])
                index += 1
            values[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        else:
            sys.exit(f"{path}: not an output entry: {line!r}")
    for name, value in values.items():
        print(f"{name}\t{value.replace(chr(10), chr(92) + 'n')}")


def hang_api(port_file, seen_file):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    with open(port_file + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(str(listener.getsockname()[1]))
    os.replace(port_file + ".tmp", port_file)
    held = []

    def hold(connection):
        data = b""
        while b"\r\n" not in data:
            chunk = connection.recv(4096)
            if not chunk:
                return
            data += chunk
        with open(seen_file, "a", encoding="utf-8") as handle:
            handle.write(data.split(b"\r\n", 1)[0].decode("latin-1") + "\n")
        while connection.recv(4096):
            pass

    while True:
        connection, _ = listener.accept()
        held.append(connection)
        threading.Thread(target=hold, args=(connection,), daemon=True).start()


def first_request(runs, command):
    for _ in range(runs):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(60)
        port = str(listener.getsockname()[1])
        argv = [part.replace("{port}", port) for part in command]
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            connection, _ = listener.accept()
            connection.recv(1)
            elapsed = (time.perf_counter() - start) * 1000
            connection.close()
        finally:
            listener.close()
            # Also when no request came: the child is ours to end.
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        print(f"{elapsed:.1f}")


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "inputs":
        inputs(*args)
    elif command == "outputs":
        outputs(*args)
    elif command == "parse-outputs":
        parse_outputs(*args)
    elif command == "hang-api":
        hang_api(*args)
    elif command == "first-request":
        first_request(int(args[0]), args[1:])
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
