#!/usr/bin/env bash
# Installs what gst-cudafx needs to build and test on Debian 12 (bookworm),
# skipping what is already there. The CUDA toolkit is optional and not
# installed here: with nvcc on PATH (or in /usr/local/cuda/bin) the CUDA
# backend is built, without it the CPU backend only.
set -euo pipefail
pkgs=(
  meson ninja-build pkg-config g++
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-libav gstreamer1.0-x
  gstreamer1.0-plugins-ugly  # x264enc: bench_delta_clip's peer (its rows say n/a without)
  libgtest-dev libopencv-core-dev libopencv-imgproc-dev libzstd-dev zlib1g-dev libcharls-dev
  libpango1.0-dev fonts-dejavu-core libgstrtspserver-1.0-dev
  clang libclang-rt-14-dev
  curl ca-certificates
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
