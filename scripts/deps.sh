#!/bin/sh
# Usage: scripts/deps.sh GROUP...   (groups: build run bench test fuzz slurm peers)
# Installs the Debian packages a group needs when run as root; otherwise
# prints the exact install line and fails. Installs nothing already there.
set -eu
pkgs_build="make gcc libc6-dev opencl-c-headers libinih-dev libjansson-dev"
pkgs_run="ocl-icd-libopencl1 pocl-opencl-icd libclblast1"
pkgs_bench="gnuplot-nox"
# man-db (with groff-base) renders the generated man page in tests/23-man-completion.t.
pkgs_test="libcmocka-dev perl libtap-formatter-junit-perl gnuplot-nox chromium man-db"
# libFuzzer for Debian's clang 14 is in libclang-rt-14-dev.
pkgs_fuzz="clang libclang-rt-14-dev"
pkgs_slurm="slurm-wlm munge"
pkgs_peers="clpeak"
want=""
for group in "$@"; do
    eval "want=\"\$want \${pkgs_$group}\""
done
missing=""
for p in $want; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing >/dev/null
else
    echo "missing packages:$missing" >&2
    echo "install them with: sudo apt-get install -y$missing" >&2
    exit 1
fi
