#!/usr/bin/env bash
# Builds what tests/lsp/test_lsp_vscode_e2e.py needs into DEST (default:
# ~/.cache/ts-vscode-e2e): code-server 4.100.3 (the newest that runs on Node 20) in DEST/code-server
# and playwright-core in DEST/playwright. Debian's chromium drives it headless. Prints the
# environment to export. Reuses DEST when it was already built for these versions.
#
#   editors/vscode/test/setup-code-server.sh [DEST]
#   export TS_CODE_SERVER=DEST/code-server TS_PLAYWRIGHT=DEST/playwright
#
# A plain `npm install code-server` fails here: its postinstall
# downloads ripgrep from GitHub and a native module needs libkrb5-dev. So: npm pack, install
# without scripts, put Debian's rg where @vscode/ripgrep expects it, rebuild the native modules.
set -euo pipefail
CODE_SERVER_VERSION=4.100.3
PLAYWRIGHT_VERSION=1.65.1
DEST="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/ts-vscode-e2e}"
DEST="$(mkdir -p "$DEST" && cd "$DEST" && pwd)"
STAMP="$DEST/.built-$CODE_SERVER_VERSION-$PLAYWRIGHT_VERSION"

if [ ! -f "$STAMP" ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    for p in libkrb5-dev ripgrep chromium; do
      dpkg -s "$p" >/dev/null 2>&1 || { apt-get install -y -q libkrb5-dev ripgrep chromium >/dev/null; break; }
    done
  fi
  command -v rg >/dev/null && command -v chromium >/dev/null || { echo "need rg and chromium" >&2; exit 1; }
  rm -rf "$DEST/code-server" "$DEST/playwright" "$DEST"/.built-*
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "code-server@$CODE_SERVER_VERSION" >/dev/null \
     && tar xzf "code-server-$CODE_SERVER_VERSION.tgz" && mv package "$DEST/code-server")
  rm -rf "$tmp"
  export npm_config_yes=true npm_config_nodedir=/usr npm_config_audit=false npm_config_fund=false npm_config_loglevel=error
  cd "$DEST/code-server"
  npm install --omit=dev --ignore-scripts >/dev/null
  (cd lib/vscode && npm install --omit=dev --ignore-scripts >/dev/null \
     && mkdir -p node_modules/@vscode/ripgrep/bin && cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg \
     && npm rebuild --foreground-scripts >/dev/null 2>&1 && ln -sfn node_modules node_modules.asar \
     && cd extensions && npm install --omit=dev --ignore-scripts >/dev/null)
  npm rebuild argon2 --build-from-source >/dev/null 2>&1
  mkdir -p "$DEST/playwright" && cd "$DEST/playwright" && echo '{"private": true}' > package.json \
    && npm install --silent "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null
  node "$DEST/code-server/out/node/entry.js" --version >/dev/null
  touch "$STAMP"
fi
echo "export TS_CODE_SERVER=$DEST/code-server TS_PLAYWRIGHT=$DEST/playwright"
