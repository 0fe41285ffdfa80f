// End-to-end check of the packaged extension in a real VS Code (code-server in Chromium).
//
//   node editors/vscode/test/e2e.mjs --code-server DIR --vsix FILE --python PYTHON \
//        --file WORKSPACE/prog.py --out OUTDIR [--chromium /usr/bin/chromium] [--playwright DIR]
//
// DIR is a built code-server package (see /work/shared/editors.md); playwright-core is
// resolved from --playwright (a folder with node_modules/playwright-core) or normally.
// Installs the .vsix into a temporary extensions folder, starts code-server on a free
// port with a temporary user-data folder whose settings point ts.server.command at
// PYTHON, opens the file, waits for a squiggle, reads the Problems panel, hovers the
// squiggle and lists the quick fixes. Prints one JSON object and writes screenshots.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const codeServer = arg("code-server");
const vsix = arg("vsix");
const python = arg("python", "python3");
const file = path.resolve(arg("file"));
const outDir = path.resolve(arg("out", "."));
const chromium = arg("chromium", "/usr/bin/chromium");
const pwDir = arg("playwright", process.cwd());
const require = createRequire(path.join(pwDir, "package.json"));
const { chromium: pwChromium } = require("playwright-core");

const freePort = () => new Promise((resolve) => {
  const srv = net.createServer();
  srv.listen(0, "127.0.0.1", () => { const p = srv.address().port; srv.close(() => resolve(p)); });
});

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ts-vscode-e2e-"));
const ext = path.join(tmp, "ext");
const ud = path.join(tmp, "ud");
fs.mkdirSync(path.join(ud, "User"), { recursive: true });
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(ud, "User", "settings.json"), JSON.stringify({
  "ts.server.command": python,
  "ts.server.args": ["-m", "ts_lsp"],
  "ts.debounceMs": 100,
  "workbench.startupEditor": "none",
  "security.workspace.trust.enabled": false,
  "workbench.tips.enabled": false,
  "extensions.ignoreRecommendations": true,
  "telemetry.telemetryLevel": "off",
}, null, 2));

const entry = path.join(codeServer, "out", "node", "entry.js");
const install = spawnSync("node", [entry, "--install-extension", vsix, "--extensions-dir", ext,
  "--user-data-dir", ud], { encoding: "utf8" });
if (install.status !== 0) {
  console.log(JSON.stringify({ ok: false, step: "install", out: install.stdout + install.stderr }));
  process.exit(1);
}

const port = await freePort();
const workspace = path.dirname(file);
const server = spawn("node", [entry, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`,
  "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
  "--user-data-dir", ud, "--extensions-dir", ext, workspace], { stdio: ["ignore", "pipe", "pipe"] });
let serverLog = "";
server.stdout.on("data", (d) => { serverLog += d; });
server.stderr.on("data", (d) => { serverLog += d; });

const result = { ok: false, timings: {} };
const t0 = Date.now();
const mark = (k) => { result.timings[k] = (Date.now() - t0) / 1000; };
let browser;
try {
  for (let i = 0; i < 100 && !serverLog.includes("HTTP server listening"); i++) {
    await new Promise((r) => setTimeout(r, 300));
  }
  browser = await pwChromium.launch({ executablePath: chromium, headless: true,
    args: ["--no-sandbox", "--disable-gpu"] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 120000 });
  mark("workbench");
  await page.waitForTimeout(1500);
  await page.keyboard.press("Control+P");
  await page.waitForTimeout(500);
  await page.keyboard.type(path.basename(file));
  await page.waitForSelector(".quick-input-list .monaco-list-row", { timeout: 30000 });
  await page.waitForTimeout(1000);
  await page.click(".quick-input-list .monaco-list-row");
  await page.waitForSelector(".monaco-editor .view-lines", { timeout: 60000 });
  mark("editor");
  // the findings may be far down the file: wait for them in the Problems panel first
  await page.keyboard.press("Control+Shift+M");
  await page.waitForFunction(() => [...document.querySelectorAll(".markers-panel .monaco-list-row")]
    .some((r) => /TS\d{3}/.test(r.textContent)), null, { timeout: 180000 });
  mark("problems");
  await page.waitForTimeout(1000);
  result.problems = await page.$$eval(".markers-panel .monaco-list-row",
    (rows) => rows.map((r) => r.innerText.replace(/\s+/g, " ").trim()));
  await page.screenshot({ path: path.join(outDir, "problems.png") });
  // go to the first problem in the editor (F8) so that its squiggle is rendered
  await page.click(".monaco-editor .view-lines");
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("F8");
  await page.waitForSelector(".squiggly-error, .squiggly-warning", { timeout: 60000 });
  await page.keyboard.press("Escape");
  mark("squiggle");
  await page.screenshot({ path: path.join(outDir, "editor.png") });

  // quick fixes at the cursor (F8 left it on the problem)
  await page.keyboard.press("Control+.");
  try {
    await page.waitForSelector(".action-widget .monaco-list-row", { timeout: 20000 });
    result.actions = await page.$$eval(".action-widget .monaco-list-row",
      (rows) => rows.map((r) => r.innerText.trim()).filter((t) => t));
  } catch (e) {
    result.actions = [];
  }
  await page.screenshot({ path: path.join(outDir, "actions.png") });
  await page.keyboard.press("Escape");

  // hover the squiggle with the mouse
  const box = await (await page.$(".squiggly-error, .squiggly-warning")).boundingBox();
  await page.mouse.move(box.x + Math.min(8, box.width / 2), box.y + box.height / 2);
  try {
    await page.waitForFunction(() => [...document.querySelectorAll(".monaco-hover")]
      .some((e) => /resource|TS\d{3}/.test(e.innerText)), null, { timeout: 45000 });
    await page.waitForTimeout(1500);
    result.hover = (await page.$$eval(".monaco-hover", (els) => els.map((e) => e.innerText).join("\n"))).slice(0, 1500);
  } catch (e) {
    result.hover = null;
  }
  await page.screenshot({ path: path.join(outDir, "hover.png") });
  result.ok = result.problems.some((p) => /TS\d{3}/.test(p)) &&
    result.actions.some((a) => /^Disable TS\d{3} for this line$/.test(a)) &&
    /resource/.test(result.hover || "");
} catch (e) {
  result.error = String(e);
  result.serverLog = serverLog.slice(-3000);
  result.tmp = tmp;
  try {
    const pages = browser ? browser.contexts().flatMap((c) => c.pages()) : [];
    if (pages.length) await pages[0].screenshot({ path: path.join(outDir, "failure.png") });
  } catch (e2) { /* ignore */ }
} finally {
  if (browser) await browser.close();
  server.kill();
}
console.log(JSON.stringify(result));
process.exit(result.ok ? 0 : 1);
