#!/usr/bin/env python3
"""What a Debian suite's index says now, for the build cache's keys and its downloads (board/cache.sh).

usage: debian-index.py [--suite S] [--arch A] [--component C] COMMAND ARGS
  versions [--required] PACKAGE...   the closure of PACKAGE... over Depends and Pre-Depends, every alternative
                                     and every provider taken (so no package the resolver could pick is missed),
                                     as "name version" lines; --required adds what a minbase root always holds
                                     (Essential: yes and Priority: required, with their closure)
  field PACKAGE FIELD                one field of the package's newest entry (Version, Filename, SHA256, Depends)
  fetch PACKAGE[=VERSION]... DIR     the .deb files into DIR, each checked against the index's SHA256, kept in
                                     $KIOSKCAM_CACHE/debs under that hash (a file whose hash is wrong is fetched again)

The index itself is fetched by its hash (the suite's InRelease names Packages.xz's SHA256; the mirror serves it
under by-hash/), so a copy kept in $KIOSKCAM_CACHE/index is a pure function of its name and is checked on use.
The mirror is $DEBIAN_MIRROR (Debian's by default). InRelease's signature is checked by gpgv against Debian's
archive keyring (as apt, mmdebstrap and debootstrap check it), so every hash taken from it, and every .deb fetched
by one, is Debian's.
"""

import argparse
import contextlib
import hashlib
import io
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

MIRROR = os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian").rstrip("/")
CACHE = os.environ.get("KIOSKCAM_CACHE", "/var/cache/kioskcam")
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


def fail(message):
    print("debian-index: " + message, file=sys.stderr)
    sys.exit(1)


def fetch_url(url):
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.read()
    except OSError as error:
        fail("%s: %s" % (url, error))


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def store(path, data):
    """Writes a cache file whole or not at all: a temporary name, then a rename."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def index_digest(suite, component, arch):
    """The SHA-256 of the suite's Packages.xz for the component and architecture, as its InRelease says now."""
    signed = fetch_url("%s/dists/%s/InRelease" % (MIRROR, suite))
    # gpgv prints only what the signature covers: nothing outside it is read.
    checked = subprocess.run(["gpgv", "--quiet", "--keyring", KEYRING, "--output", "-", "-"], input=signed,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if checked.returncode != 0:
        fail("%s's InRelease is not signed by a key of %s: %s"
             % (suite, KEYRING, checked.stderr.decode("utf-8", "replace").strip()))
    release = checked.stdout.decode("utf-8", "replace")
    name = "%s/binary-%s/Packages.xz" % (component, arch)
    found = re.search(r"^ ([0-9a-f]{64}) +\d+ %s$" % re.escape(name), release.split("SHA256:", 1)[-1], re.M)
    if not found:
        fail("%s's InRelease lists no %s" % (suite, name))
    return found.group(1)


def packages_index(suite, component, arch, digest):
    name = "%s/binary-%s/Packages.xz" % (component, arch)
    path = os.path.join(CACHE, "index", "%s.xz" % digest)
    if not (os.path.exists(path) and sha256_of(path) == digest):
        data = fetch_url("%s/dists/%s/%s/binary-%s/by-hash/SHA256/%s" % (MIRROR, suite, component, arch, digest))
        if hashlib.sha256(data).hexdigest() != digest:
            fail("%s's %s does not match its InRelease" % (suite, name))
        store(path, data)
    packages = {}
    with lzma.open(path, "rt", encoding="utf-8", errors="replace") as f:
        for stanza in f.read().split("\n\n"):
            fields, last = {}, None
            for line in stanza.splitlines():
                if line[:1] in (" ", "\t") and last:
                    fields[last] += "\n" + line
                elif ":" in line:
                    last, _, value = line.partition(":")
                    fields[last] = value.strip()
            if "Package" in fields:
                packages.setdefault(fields["Package"], []).append(fields)
    return packages


def version_key(version):
    """Debian's version order: epoch, upstream, revision; in each, runs of non-digits by character ('~' before
    the end, the end before letters, letters before the rest) and runs of digits by number."""
    def weight(c):
        return -1 if c == "~" else ord(c) if c.isalpha() else 256 + ord(c)

    def part(text):
        out = []
        for alpha, number in re.findall(r"([^0-9]*)([0-9]*)", text):
            out += [weight(c) for c in alpha] + [0, int(number or 0)]
        return out
    epoch, rest = version.split(":", 1) if ":" in version else ("0", version)
    upstream, _, revision = rest.rpartition("-") if "-" in rest else (rest, "", "0")
    return (int(epoch or 0), part(upstream), part(revision))


def newest(entries):
    return max(entries, key=lambda fields: version_key(fields.get("Version", "0")))


def relation_names(text):
    for group in (text or "").split(","):
        for alternative in group.split("|"):
            name = alternative.strip().split(" ")[0].split(":")[0]
            if name:
                yield name


def closure(packages, roots):
    providers = {}
    for name, entries in packages.items():
        for fields in entries:
            for provided in relation_names(fields.get("Provides")):
                providers.setdefault(provided, set()).add(name)
    seen, todo = {}, list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        candidates = ([name] if name in packages else []) + sorted(providers.get(name, ()))
        if not candidates and name in roots:
            fail("no package %s in the index" % name)
        for candidate in candidates:
            if candidate in seen:
                continue
            fields = newest(packages[candidate])
            seen[candidate] = fields["Version"]
            todo.extend(relation_names(fields.get("Depends")))
            todo.extend(relation_names(fields.get("Pre-Depends")))
    return seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="trixie")
    ap.add_argument("--arch", default="amd64")
    ap.add_argument("--component", default="main")
    sub = ap.add_subparsers(dest="command", required=True)
    versions = sub.add_parser("versions")
    versions.add_argument("--required", action="store_true")
    versions.add_argument("package", nargs="+")
    field = sub.add_parser("field")
    field.add_argument("package")
    field.add_argument("field")
    fetch = sub.add_parser("fetch")
    fetch.add_argument("package", nargs="+")
    args = ap.parse_args()
    # An answer is a pure function of the index (named by its hash) and the question: kept beside the index, since
    # reading the index takes seconds and each build asks several times. fetch always reads it.
    digest, packages = index_digest(args.suite, args.component, args.arch), None
    if args.command != "fetch":
        question = hashlib.sha256(repr((args.command, getattr(args, "required", None), args.package,
                                        getattr(args, "field", None))).encode()).hexdigest()[:16]
        answer = os.path.join(CACHE, "index", "%s-%s.answer" % (digest, question))
        try:
            with open(answer) as f:
                sys.stdout.write(f.read())
            return
        except FileNotFoundError:
            pass
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            answer_question(args, packages_index(args.suite, args.component, args.arch, digest))
        store(answer, out.getvalue().encode())
        sys.stdout.write(out.getvalue())
        return
    packages = packages_index(args.suite, args.component, args.arch, digest)
    fetch_debs(args, packages)


def answer_question(args, packages):
    if args.command == "versions":
        roots = list(args.package)
        if args.required:
            roots += [name for name, entries in packages.items()
                      if newest(entries).get("Essential") == "yes" or newest(entries).get("Priority") == "required"]
        for name, version in sorted(closure(packages, roots).items()):
            print(name, version)
    elif args.command == "field":
        if args.package not in packages:
            fail("no package %s in %s's %s index" % (args.package, args.suite, args.arch))
        value = newest(packages[args.package]).get(args.field)
        if value is None:
            fail("%s has no field %s" % (args.package, args.field))
        print(value)


def fetch_debs(args, packages):
    *wanted, folder = args.package
    if not wanted:
        fail("fetch: name the packages, then the folder")
    os.makedirs(folder, exist_ok=True)
    for spec in wanted:
        name, _, version = spec.partition("=")
        entries = [f for f in packages.get(name, []) if not version or f.get("Version") == version]
        if not entries:
            fail("no %s in %s's %s index" % (spec, args.suite, args.arch))
        fields = newest(entries)
        digest, filename = fields["SHA256"], fields["Filename"]
        kept = os.path.join(CACHE, "debs", "%s-%s" % (digest[:16], os.path.basename(filename)))
        if os.path.exists(kept) and sha256_of(kept) == digest:
            print("debian-index: reused %s" % os.path.basename(kept), file=sys.stderr)
        else:
            data = fetch_url("%s/%s" % (MIRROR, filename))
            if hashlib.sha256(data).hexdigest() != digest:
                fail("%s does not match the index's SHA256" % filename)
            store(kept, data)
            print("debian-index: fetched %s (%d KiB)" % (os.path.basename(filename), len(data) >> 10),
                  file=sys.stderr)
        shutil.copyfile(kept, os.path.join(folder, os.path.basename(filename)))


if __name__ == "__main__":
    main()
