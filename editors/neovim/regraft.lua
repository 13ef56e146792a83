-- regraft's language server for *.graft and YAML rule files, Neovim 0.7 and up:
-- put in init.lua (or a file under ~/.config/nvim/plugin/).
local cmd = { 'regraft', 'lsp' }
local filetypes = { 'yaml', 'graft' }
local root_markers = { 'regraft.toml', 'pyproject.toml', '.git' }

if vim.fn.has('nvim-0.8') == 1 then
  vim.filetype.add({ extension = { graft = 'graft' } })
else
  -- 0.7 has vim.filetype.add, but reads it only with g:do_filetype_lua, off until 0.8.
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' },
    { pattern = '*.graft', command = 'setfiletype graft' })
end

if vim.fn.has('nvim-0.11') == 1 then
  vim.lsp.config('regraft', { cmd = cmd, filetypes = filetypes, root_markers = root_markers })
  vim.lsp.enable('regraft')
  return
end

-- Older releases (0.7 in Debian 12, 0.9 in Ubuntu 24.04, 0.10) start it from a FileType
-- autocmd. The root is the nearest folder above the file holding a marker, else the file's
-- own folder (searched by hand: vim.fs is 0.8+).
local function root_of(buf)
  local start = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':p:h')
  local dir = start
  while true do
    for _, marker in ipairs(root_markers) do
      if vim.loop.fs_stat(dir .. '/' .. marker) then return dir end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then return start end
    dir = parent
  end
end

local started = {} -- 0.7: root -> client id, so a project's buffers share one server
vim.api.nvim_create_autocmd('FileType', {
  pattern = filetypes,
  callback = function(args)
    if vim.bo[args.buf].buftype ~= '' then return end -- help, terminals, plugin buffers
    local config = { name = 'regraft', cmd = cmd, root_dir = root_of(args.buf) }
    if vim.lsp.start then -- 0.8+: reuses the client of the same name and root
      vim.lsp.start(config, { bufnr = args.buf })
      return
    end
    local id = started[config.root_dir]
    local client = id and vim.lsp.get_client_by_id(id)
    if not client or client.is_stopped() then
      id = vim.lsp.start_client(config)
      started[config.root_dir] = id
    end
    if id then vim.lsp.buf_attach_client(args.buf, id) end
  end,
})
