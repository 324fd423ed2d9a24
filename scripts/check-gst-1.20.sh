#!/usr/bin/env bash
# Builds gst-cudafx against GStreamer 1.20 -- JetPack 6's, from Ubuntu 22.04 --
# and runs the tests on it (issue #18). Debian 12 has 1.22 only, so Ubuntu
# 22.04's 1.20 packages are fetched from archive.ubuntu.com and unpacked into
# .gst-1.20/ (nothing is installed): the build takes their headers and
# libraries through pkg-config, the tests run on their libraries and plugins
# (LD_LIBRARY_PATH, GST_PLUGIN_SYSTEM_PATH), never on the system's 1.22.
# 1.20 has no libgstcuda: system memory only, as on a Jetson.
#   scripts/check-gst-1.20.sh          CPU backend only
#   scripts/check-gst-1.20.sh --cuda   with the CUDA backend (one arch,
#                                      CUDAFX_TEST_ARCH, default 90)
# Prints "tests: N passed, N failed, N skipped" (GoogleTest cases) last;
# exits 3 when the packages cannot be fetched.
#
# Left out on 1.20: DeltaCodec.RealFootageStaysWithinThreshold (vtest.avi is
# MS-MPEG4, decoded by gst-libav, whose Ubuntu 22.04 build needs libavcodec58:
# not Debian 12's) and the RTSP example and its test (gst-rtsp-server 1.20 is
# not fetched: the example builds only where pkg-config finds it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh   # curl too

cache=$PWD/.gst-1.20
root=$cache/root
mirror=${UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}
packages=(
  libgstreamer1.0-0 libgstreamer1.0-dev gstreamer1.0-tools
  libgstreamer-plugins-base1.0-0 libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base
  libgstreamer-plugins-good1.0-0 gstreamer1.0-plugins-good
  libjpeg-turbo8 libjpeg8
)
# Exit status 3: the packages could not be fetched (no network to the
# mirror): nothing was built or tested, which CI reports without failing.
fetch() {
  curl -fsS --retry 3 --connect-timeout 20 "$1" -o "$2" || {
    echo "check-gst-1.20: cannot fetch $1: nothing built or tested" >&2
    exit 3
  }
}
if [ ! -f "$root/.complete" ]; then
  rm -rf "$cache" && mkdir -p "$root"
  for suite in jammy-updates jammy; do
    fetch "$mirror/dists/$suite/main/binary-amd64/Packages.gz" "$cache/$suite.gz"
  done
  for p in "${packages[@]}"; do
    file=""
    for suite in jammy-updates jammy; do  # the update, else the release
      file=$(zcat "$cache/$suite.gz" |
        awk -v p="$p" '$1 == "Package:" { q = $2 } q == p && $1 == "Filename:" { f = $2 } END { print f }')
      [ -n "$file" ] && break
    done
    [ -n "$file" ] || { echo "check-gst-1.20: $p is not in Ubuntu 22.04's index" >&2; exit 1; }
    fetch "$mirror/$file" "$cache/$p.deb"
    dpkg-deb -x "$cache/$p.deb" "$root"
  done
  sed -i "s|^prefix=.*|prefix=$root/usr|" "$root"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc
  touch "$root/.complete"
fi
lib=$root/usr/lib/x86_64-linux-gnu
# 1.20's .pc files first; the system's for everything else (glib, OpenCV...).
export PKG_CONFIG_LIBDIR=$lib/pkgconfig:/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/share/pkgconfig
version=$(pkg-config --modversion gstreamer-1.0)
case $version in 1.20.*) ;; *) echo "check-gst-1.20: fetched GStreamer $version" >&2; exit 1 ;; esac
if [ "${1:-}" = "--cuda" ]; then
  dir=build-gst-1.20-cuda
  scripts/build.sh "$dir" -Dtests=enabled -Dbenchmarks=disabled -Dcuda=enabled \
    -Dgstcuda=disabled -Dcuda-arch="${CUDAFX_TEST_ARCH:-90}"
else
  dir=build-gst-1.20
  scripts/build.sh "$dir" -Dtests=enabled -Dbenchmarks=disabled -Dcuda=disabled
fi
grep -q "gstreamer-1.0 found: YES $version" "$dir/meson-logs/meson-log.txt" || {
  echo "check-gst-1.20: the build did not take GStreamer $version" >&2
  exit 1
}

export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GST_PLUGIN_SYSTEM_PATH=$lib/gstreamer-1.0
export GST_PLUGIN_SCANNER=$lib/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner
export GTEST_FILTER=-DeltaCodec.RealFootageStaysWithinThreshold
rm -f "$dir"/tests/registry*.bin  # plugins found by another run's scanner
echo "check-gst-1.20: GStreamer $version from Ubuntu 22.04"
status=0
meson test -C "$dir" --print-errorlogs || status=$?
python3 scripts/gtest_summary.py "$dir/meson-logs/testlog.txt" || status=1
exit $status
