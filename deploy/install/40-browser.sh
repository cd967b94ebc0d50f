#!/usr/bin/env bash
# What `./meridian view`'s tests and `./meridian bench view` need: Debian's Chromium, driven headless over the Chrome
# DevTools protocol from Java (no chromedriver, no Selenium), with WebGL on its software renderer (SwiftShader, in the
# package). Node.js and npm (three.js for the viewer page is installed by the build with `npm ci`) come with a fresh
# machine; they are checked here so that a missing one is named before Maven fails on it.
# Idempotent; does nothing when everything is there.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# the page's legend and corner figures: without a font Chromium draws boxes in the screenshots
[ -n "$(fc-list 2>/dev/null | head -n 1)" ] || missing+=(fonts-dejavu-core)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

[ ${#missing[@]} -gt 0 ] || exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "deploy/install/40-browser.sh: missing packages ${missing[*]}; install them as root: apt-get install -y ${missing[*]}" >&2
  # the build needs npm; Chromium only the viewer's tests and bench view (a user's own browser shows the page)
  for package in "${missing[@]}"; do [ "$package" != npm ] && [ "$package" != nodejs ] || exit 2; done
  exit 0
fi
echo "deploy/install/40-browser.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
