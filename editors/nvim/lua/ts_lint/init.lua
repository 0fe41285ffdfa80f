-- ts_lint: Neovim client for ts-lsp, the language server of ts (NVIDIA Task Scheduling
-- checks). Works on Neovim 0.7+ (vim.lsp.start_client + a FileType autocmd) and uses
-- vim.lsp.config / vim.lsp.enable on Neovim 0.11+.
--
--   require("ts_lint").setup({
--     cmd = { "ts-lsp" },                 -- default: ts-lsp if executable, else python -m ts_lsp
--     python = "python3",                 -- interpreter for the fallback command
--     settings = { lintOn = "type", debounceMs = 300, select = nil, ignore = {},
--                  docsBaseUrl = nil, explainUnknown = false, checker = true },
--   })
--
-- Commands: :TsSchedule shows the schedule table of the TaskManager under the cursor.
local M = {}

M.name = "ts_lint"

M.defaults = {
  cmd = nil,
  python = nil,
  filetypes = { "python" },
  root_markers = { "pyproject.toml", "setup.cfg", "setup.py", ".git" },
  settings = {},
  init_options = nil,
  on_attach = nil,
  capabilities = nil,
  use_native_config = true, -- use vim.lsp.config/enable when Neovim has them (0.11+)
}

local function executable(name)
  return vim.fn.executable(name) == 1
end

--- The command that starts the server.
function M.command(opts)
  if opts.cmd then
    if type(opts.cmd) == "string" then
      return { opts.cmd }
    end
    return opts.cmd
  end
  if opts.python then
    return { opts.python, "-m", "ts_lsp" }
  end
  if executable("ts-lsp") then
    return { "ts-lsp" }
  end
  return { executable("python3") and "python3" or "python", "-m", "ts_lsp" }
end

local function is_dir(path)
  local stat = vim.loop.fs_stat(path)
  return stat ~= nil and stat.type == "directory"
end

local function exists(path)
  return vim.loop.fs_stat(path) ~= nil
end

--- Nearest folder above `path` holding one of `markers` (Neovim 0.7 has no vim.fs).
function M.find_root(path, markers)
  local dir = path
  if not is_dir(dir) then
    dir = vim.fn.fnamemodify(path, ":p:h")
  end
  while dir and dir ~= "" do
    for _, marker in ipairs(markers) do
      if exists(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.loop.cwd()
end

--- The client configuration shared by both code paths.
function M.client_config(opts)
  local settings = opts.settings or {}
  return {
    name = M.name,
    cmd = M.command(opts),
    filetypes = opts.filetypes,
    root_markers = opts.root_markers,
    -- workspace/configuration looks up the section "ts" in here
    settings = { ts = settings },
    init_options = opts.init_options or settings,
    capabilities = opts.capabilities,
    on_attach = opts.on_attach,
  }
end

local function start_legacy(opts, config)
  local clients = {} -- root dir -> client id
  local group = vim.api.nvim_create_augroup("ts_lint_lsp", { clear = true })

  local function attach(bufnr)
    if vim.api.nvim_buf_get_option(bufnr, "buftype") ~= "" then
      return
    end
    local name = vim.api.nvim_buf_get_name(bufnr)
    local root = M.find_root(name ~= "" and name or vim.loop.cwd(), opts.root_markers)
    local id = clients[root]
    if id == nil or vim.lsp.get_client_by_id(id) == nil then
      local cfg = vim.deepcopy(config)
      cfg.root_dir = root
      cfg.workspace_folders = { { uri = vim.uri_from_fname(root), name = root } }
      cfg.root_markers = nil
      cfg.filetypes = nil
      id = vim.lsp.start_client(cfg)
      if id == nil then
        return
      end
      clients[root] = id
    end
    vim.lsp.buf_attach_client(bufnr, id)
  end

  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = opts.filetypes,
    callback = function(args)
      attach(args.buf)
    end,
  })
  -- buffers opened before setup()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      local ft = vim.api.nvim_buf_get_option(bufnr, "filetype")
      if vim.tbl_contains(opts.filetypes, ft) then
        attach(bufnr)
      end
    end
  end
end

local function show_schedule()
  local bufnr = vim.api.nvim_get_current_buf()
  local cursor = vim.api.nvim_win_get_cursor(0)
  local args = {
    vim.uri_from_bufnr(bufnr),
    { line = cursor[1] - 1, character = cursor[2] },
  }
  local results = vim.lsp.buf_request_sync(bufnr, "workspace/executeCommand",
    { command = "ts.showSchedule", arguments = args }, 10000) or {}
  for _, res in pairs(results) do
    if res.result and type(res.result) == "string" then
      vim.cmd("botright new")
      local buf = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(res.result, "\n", { plain = true }))
      vim.api.nvim_buf_set_option(buf, "buftype", "nofile")
      vim.api.nvim_buf_set_option(buf, "bufhidden", "wipe")
      vim.api.nvim_buf_set_option(buf, "modifiable", false)
      vim.api.nvim_buf_set_name(buf, "ts-schedule://" .. bufnr)
      return
    end
  end
  vim.notify("ts: no schedule here", vim.log.levels.INFO)
end

--- Configures and enables the ts language server for Python buffers.
function M.setup(opts)
  opts = vim.tbl_deep_extend("force", {}, M.defaults, opts or {})
  local config = M.client_config(opts)
  if opts.use_native_config and vim.lsp.config ~= nil and vim.lsp.enable ~= nil then
    vim.lsp.config(M.name, config)
    vim.lsp.enable(M.name)
    M.mode = "native"
  else
    start_legacy(opts, config)
    M.mode = "legacy"
  end
  pcall(vim.api.nvim_create_user_command, "TsSchedule", show_schedule,
    { desc = "ts: schedule table of the TaskManager under the cursor" })
  return config
end

M.show_schedule = show_schedule

return M
