-- Headless end-to-end check of editors/nvim with a real Neovim (0.7 and 0.11 tested):
--
--   TS_LSP_CMD='["python","-m","ts_lsp"]' TS_CHECK_FILE=prog.py TS_HOVER=52:12 \
--     nvim --headless --clean -u NONE -c "luafile editors/nvim/tests/check.lua"
--
-- Prints (to stdout, one per line): MODE, each DIAG, the HOVER text's first line, each
-- code ACTION title, then applies "Disable ... for this line" and prints AFTER <count>
-- once the diagnostics are recomputed, and DONE. Exits with :cq on failure.
local function out(s)
  io.stdout:write(s .. "\n")
  io.stdout:flush()
end

local function fail(msg)
  out("FAIL " .. msg)
  vim.cmd("cq!")
end

local here = debug.getinfo(1, "S").source:sub(2)
local plugin_root = vim.fn.fnamemodify(here, ":p:h:h")
package.path = plugin_root .. "/lua/?.lua;" .. plugin_root .. "/lua/?/init.lua;" .. package.path
vim.cmd("filetype on")

local cmd = vim.fn.json_decode(os.getenv("TS_LSP_CMD") or '["ts-lsp"]')
local file = os.getenv("TS_CHECK_FILE")
if not file then
  return fail("TS_CHECK_FILE is not set")
end

local ts = require("ts_lint")
ts.setup({ cmd = cmd, settings = { debounceMs = 50 } })
out("MODE " .. ts.mode)

vim.cmd("edit " .. vim.fn.fnameescape(file))
local bufnr = vim.api.nvim_get_current_buf()

local function diags()
  return vim.diagnostic.get(bufnr)
end

local function code_of(d)
  local lsp = d.user_data and d.user_data.lsp or {}
  return d.code or lsp.code
end

if not vim.wait(30000, function() return #diags() > 0 end, 50) then
  return fail("no diagnostics within 30 s")
end
local list = diags()
table.sort(list, function(a, b) return a.lnum < b.lnum end)
for _, d in ipairs(list) do
  out(string.format("DIAG %d:%d %s %s", d.lnum, d.col, tostring(code_of(d)), d.message:gsub("\n", " ")))
end

local client
vim.wait(5000, function()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in pairs(get({ bufnr = bufnr })) do
    if c.name == "ts_lint" then client = c end
  end
  return client ~= nil
end, 50)
if not client then
  return fail("client not attached")
end
local encoding = client.offset_encoding or "utf-16"

local hover = os.getenv("TS_HOVER")
if hover then
  local line, col = hover:match("(%d+):(%d+)")
  local res = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = tonumber(line), character = tonumber(col) },
  }, 20000) or {}
  for _, r in pairs(res) do
    if r.result and r.result.contents then
      local value = r.result.contents.value or r.result.contents
      out("HOVER " .. tostring(vim.split(value, "\n", { plain = true })[1]))
    end
  end
end

-- code actions for the first diagnostic, rebuilt as Neovim's own code_action() does
-- (0.7 keeps only code/data/... in user_data.lsp; 0.11 keeps the whole LSP diagnostic)
local first = list[1]
local lsp_diag = vim.tbl_extend("keep", first.user_data and first.user_data.lsp or {}, {
  range = { start = { line = first.lnum, character = first.col },
            ["end"] = { line = first.end_lnum or first.lnum, character = first.end_col or first.col } },
  message = first.message, code = code_of(first), source = first.source, severity = first.severity,
})
local res = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", {
  textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  range = lsp_diag.range,
  context = { diagnostics = { lsp_diag } },
}, 20000) or {}
local noqa
for _, r in pairs(res) do
  for _, action in ipairs(r.result or {}) do
    out("ACTION " .. action.title)
    if action.title:match("^Disable") and not noqa then
      noqa = action
    end
  end
end
if not noqa then
  return fail("no 'Disable ... for this line' action")
end

local before = #diags()
vim.lsp.util.apply_workspace_edit(noqa.edit, encoding)
out("LINE " .. vim.api.nvim_buf_get_lines(bufnr, first.lnum, first.lnum + 1, false)[1])
if not vim.wait(30000, function() return #diags() == before - 1 end, 50) then
  return fail("the noqa edit did not remove the diagnostic (have " .. #diags() .. ")")
end
out("AFTER " .. #diags())
out("DONE")
vim.cmd("qa!")
